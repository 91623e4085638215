import { describe, expect, it } from 'vitest';
import { UnsafeTargetError } from '../../../src/net/errors.js';
import { type AddressResolver, assertAllowedPort, resolveTarget } from '../../../src/net/resolve-target.js';
import type { DnsResolver } from '../../../src/providers/dns/resolver.js';
import type { DnsRR } from '../../../src/providers/dns/types.js';
import { rejectionOf } from '../../expect-error.js';
import { a, aaaa, cname, dnsAnswer, fail, ok, scriptedResolver } from '../../fakes/address-resolver.js';

const rejection = (p: Promise<unknown>) => rejectionOf(p, UnsafeTargetError);

describe('resolveTarget', () => {
  it('the real DnsResolver fits the AddressResolver shape', () => {
    // Compile-time check: fails `tsc` if the DNS client's signature drifts away from what net/ needs.
    const fits = (r: DnsResolver): AddressResolver => r;
    expect(fits).toBeTypeOf('function');
  });

  it('returns the checked addresses of a name, IPv4 first, asking A and AAAA concurrently', async () => {
    let pending = 0;
    let overlap = false;
    const slow = (rr: DnsRR) => async () => {
      pending++;
      if (pending === 2) overlap = true;
      await new Promise((r) => setTimeout(r, 5));
      pending--;
      return dnsAnswer('NOERROR', [rr]);
    };
    const resolver = scriptedResolver({
      A: slow(a('example.org', '93.184.215.14')),
      AAAA: slow(aaaa('example.org', '2606:2800:21F:CB07:6820:80DA:AF6B:8B2C')),
    });
    const target = await resolveTarget('Example.ORG.', { resolver, allowCidrs: [] });
    expect(target).toEqual({
      host: 'example.org',
      literal: false,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    expect(overlap).toBe(true);
    expect(resolver.asked).toEqual(['example.org A', 'example.org AAAA']);
  });

  it('follows the CNAME chain in the answer and ignores records off the chain', async () => {
    const resolver = scriptedResolver({
      A: ok(
        cname('www.example.org', 'edge.cdn.example'),
        cname('edge.cdn.example', 'pop1.cdn.example'),
        a('pop1.cdn.example', '93.184.215.14'),
        a('unrelated.example', '10.0.0.1'),
      ),
    });
    const target = await resolveTarget('www.example.org', { resolver, allowCidrs: [] });
    expect(target.addresses).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('refuses a name if ANY address is not public, naming the address and its range', async () => {
    const resolver = scriptedResolver({
      A: ok(a('mixed.example', '93.184.215.14'), a('mixed.example', '10.0.0.5')),
    });
    const err = await rejection(resolveTarget('mixed.example', { resolver, allowCidrs: [] }));
    expect(err).toMatchObject({
      statusCode: 400,
      reason: 'not_public',
      address: '10.0.0.5',
      range: 'private-use',
    });
    expect(err.message).toBe(
      'target mixed.example resolves to 10.0.0.5, which is not a public address (private-use)',
    );
  });

  it('refuses a non-public AAAA even when the A records are public', async () => {
    const resolver = scriptedResolver({
      A: ok(a('v6.example', '93.184.215.14')),
      AAAA: ok(aaaa('v6.example', '::ffff:169.254.169.254')),
    });
    const err = await rejection(resolveTarget('v6.example', { resolver, allowCidrs: [] }));
    expect(err.range).toBe('ipv4-mapped → link-local');
  });

  it('accepts non-public addresses inside the operator allow-list only', async () => {
    const resolver = scriptedResolver({
      A: ok(a('lab.example', '127.0.0.2'), a('lab.example', '127.0.0.3')),
    });
    await expect(
      resolveTarget('lab.example', { resolver, allowCidrs: ['127.0.0.0/8'] }),
    ).resolves.toMatchObject({
      addresses: [{ address: '127.0.0.2' }, { address: '127.0.0.3' }],
    });
    await rejection(resolveTarget('lab.example', { resolver, allowCidrs: ['127.0.0.2/32'] }));
  });

  it('classifies an IP literal in any spelling without asking DNS', async () => {
    const resolver = scriptedResolver({});
    const err = await rejection(resolveTarget('0x7f.1', { resolver, allowCidrs: [] }));
    expect(err.message).toBe('target 127.0.0.1 is not a public address (loopback)');
    await expect(resolveTarget('[2606:4700:4700::1111]', { resolver, allowCidrs: [] })).resolves.toEqual({
      host: '2606:4700:4700::1111',
      literal: true,
      addresses: [{ address: '2606:4700:4700::1111', family: 6 }],
    });
    await expect(resolveTarget('134744072', { resolver, allowCidrs: [] })).resolves.toMatchObject({
      host: '8.8.8.8',
      literal: true,
    });
    expect(resolver.asked).toEqual([]);
  });

  it('tells NXDOMAIN from a name without addresses, both as 400', async () => {
    const nx = scriptedResolver({
      A: () => Promise.resolve(dnsAnswer('NXDOMAIN', [])),
      AAAA: () => Promise.resolve(dnsAnswer('NXDOMAIN', [])),
    });
    const e1 = await rejection(resolveTarget('gone.example', { resolver: nx, allowCidrs: [] }));
    expect(e1).toMatchObject({
      reason: 'no_address',
      message: 'target gone.example does not exist (NXDOMAIN)',
    });
    const nodata = scriptedResolver({ A: ok(cname('alias.example', 'nowhere.example')) });
    const e2 = await rejection(resolveTarget('alias.example', { resolver: nodata, allowCidrs: [] }));
    expect(e2).toMatchObject({
      reason: 'no_address',
      message: 'target alias.example has no A or AAAA records',
    });
  });

  it('lets a DNS failure through as the resolver reported it (502)', async () => {
    const resolver = scriptedResolver({ A: fail, AAAA: fail });
    await expect(resolveTarget('down.example', { resolver, allowCidrs: [] })).rejects.toMatchObject({
      statusCode: 502,
    });
    // A failed query with nothing from the other is a failure, not "no records".
    const half = scriptedResolver({ A: fail });
    await expect(resolveTarget('down.example', { resolver: half, allowCidrs: [] })).rejects.toMatchObject({
      statusCode: 502,
    });
  });

  it('uses the addresses one query found when the other failed (they are still all checked)', async () => {
    const resolver = scriptedResolver({ A: ok(a('half.example', '93.184.215.14')), AAAA: fail });
    await expect(resolveTarget('half.example', { resolver, allowCidrs: [] })).resolves.toMatchObject({
      addresses: [{ address: '93.184.215.14' }],
    });
    const bad = scriptedResolver({ A: ok(a('half.example', '127.0.0.1')), AAAA: fail });
    await rejection(resolveTarget('half.example', { resolver: bad, allowCidrs: [] }));
  });

  it('deduplicates addresses and refuses an answer that carries no address', async () => {
    const resolver = scriptedResolver({
      A: ok(a('dup.example', '93.184.215.14'), a('dup.example', '93.184.215.14')),
    });
    const target = await resolveTarget('dup.example', { resolver, allowCidrs: [] });
    expect(target.addresses).toHaveLength(1);
    const broken = scriptedResolver({ A: ok(a('broken.example', 'not-an-ip')) });
    await rejection(resolveTarget('broken.example', { resolver: broken, allowCidrs: [] }));
  });

  it('refuses what is neither a host name nor an address', async () => {
    const resolver = scriptedResolver({});
    for (const host of ['', 'exa mple.com', 'a/b', 'user@example.com', 'example.com:443', '1.2.3.256']) {
      const err = await rejection(resolveTarget(host, { resolver, allowCidrs: [] }));
      expect(err.reason, host).toBe('invalid_host');
    }
    expect(resolver.asked).toEqual([]);
  });

  it('names the parameter it was given', async () => {
    const err = await rejection(
      resolveTarget('10.1.1.1', { resolver: scriptedResolver({}), allowCidrs: [], param: 'ip' }),
    );
    expect(err.message).toBe('ip 10.1.1.1 is not a public address (private-use)');
  });
});

describe('assertAllowedPort', () => {
  it('allows 80 and 443 only', () => {
    expect(() => assertAllowedPort(80)).not.toThrow();
    expect(() => assertAllowedPort(443)).not.toThrow();
    for (const port of [0, 22, 25, 8080, 8443, 65535]) {
      expect(() => assertAllowedPort(port)).toThrow(UnsafeTargetError);
    }
  });
});
