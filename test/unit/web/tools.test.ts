import { describe, expect, it } from 'vitest';
import { DNSSEC_TYPES as ROUTE_DNSSEC_TYPES } from '../../../src/features/dnssec/dnssec.schema';
import { DNSSEC_TYPES, EMPTY_STATE, type PageState, readState, stateSearch } from '../../../src/web/state';
import { parseTarget } from '../../../src/web/target';
import { toolById, toolFor } from '../../../src/web/tools';

const spf = toolById('spf');
const ip = parseTarget('198.51.100.7')!;
const state = (fields: Partial<PageState>): PageState => ({ ...EMPTY_STATE, tool: 'spf', ...fields });

describe('the SPF check tool', () => {
  it('takes the client address from the box and asks /api/spf about the sender, without empty fields', () => {
    const [part] = spf.parts(ip, state({ q: ip.host, sender: ' alice@sender.test ', helo: '' }));
    expect(part?.call).toEqual({
      method: 'GET',
      path: '/api/spf',
      query: { ip: '198.51.100.7', sender: 'alice@sender.test' },
    });
    expect(part?.title).toBe('SPF check · 198.51.100.7 as alice@sender.test');
  });

  it('names the identity checked in its title: the HELO name for a bounce, the policy domain when given', () => {
    const title = (fields: Partial<PageState>) => spf.parts(ip, state(fields))[0]?.title;
    expect(title({ helo: 'mx.sender.test' })).toBe('SPF check · 198.51.100.7 as HELO mx.sender.test');
    expect(title({ sender: 'alice@sender.test', domain: 'other.test' })).toBe(
      'SPF check · 198.51.100.7 as alice@sender.test (policy of other.test)',
    );
    expect(spf.parts(ip, state({ domain: 'other.test' }))[0]?.call.query).toEqual({
      ip: '198.51.100.7',
      domain: 'other.test',
    });
  });

  it('is ready only with a sender, HELO name or domain (else the API could only answer 400)', () => {
    expect(spf.ready?.(state({}))).toBe(false);
    expect(spf.ready?.(state({ sender: '   ' }))).toBe(false);
    expect(spf.ready?.(state({ sender: 'alice@sender.test' }))).toBe(true);
    expect(spf.ready?.(state({ helo: 'mx.sender.test' }))).toBe(true);
    expect(spf.ready?.(state({ domain: 'sender.test' }))).toBe(true);
  });

  it('is for IP addresses only: a domain in the box gets the domain default', () => {
    expect(toolFor('ip', 'spf').id).toBe('spf');
    expect(toolFor('domain', 'spf').id).toBe('dns');
  });
});

describe('the mail servers tool', () => {
  const mailTls = toolById('mail-tls');

  it('asks /api/mail-tls about the domain in the box, the host of a URL or address', () => {
    const [part] = mailTls.parts(parseTarget('alice@mail.example.test')!, {
      ...EMPTY_STATE,
      tool: 'mail-tls',
    });
    expect(part?.call).toEqual({
      method: 'GET',
      path: '/api/mail-tls',
      query: { domain: 'mail.example.test' },
    });
    expect(part?.title).toBe('Mail servers · mail.example.test');
    expect(mailTls.label).toBe('Mail servers');
  });

  it('is for domains only: an address in the box gets the address default', () => {
    expect(toolFor('domain', 'mail-tls').id).toBe('mail-tls');
    expect(toolFor('ip', 'mail-tls').id).toBe('ip');
  });
});

describe('the DNSSEC tool', () => {
  const dnssec = toolById('dnssec');

  it('asks /api/dnssec about the name in the box and the type picked, DNSSEC and DANE types included', () => {
    const [part] = dnssec.parts(parseTarget('https://www.secure.test/')!, {
      ...EMPTY_STATE,
      tool: 'dnssec',
      type: 'DNSKEY',
    });
    expect(part?.call).toEqual({
      method: 'GET',
      path: '/api/dnssec',
      query: { target: 'www.secure.test', type: 'DNSKEY' },
    });
    expect(part?.title).toBe('DNSSEC DNSKEY · www.secure.test');
    expect(dnssec.label).toBe('DNSSEC');
  });

  it('offers exactly the types the route validates', () => {
    expect([...DNSSEC_TYPES].sort()).toEqual([...ROUTE_DNSSEC_TYPES].sort());
  });

  it('validates an address as its reverse name (PTR), as the DNS tool asks it', () => {
    const [part] = dnssec.parts(parseTarget('192.0.2.1')!, { ...EMPTY_STATE, tool: 'dnssec', type: 'MX' });
    expect(part?.call.query).toEqual({ target: '192.0.2.1', type: 'PTR' });
    expect(toolFor('ip', 'dnssec').id).toBe('dnssec');
  });

  it('keeps its type in the URL; a type the DNS tool does not take asks it A', () => {
    const state = readState('?q=secure.test&tool=dnssec&type=ds');
    expect(state).toMatchObject({ tool: 'dnssec', type: 'DS' });
    expect(stateSearch(state)).toBe('?q=secure.test&tool=dnssec&type=DS');
    const [part] = toolById('dns').parts(parseTarget('secure.test')!, { ...state, tool: 'dns' });
    expect(part?.call.query).toEqual({ target: 'secure.test', type: 'A' });
  });
});
