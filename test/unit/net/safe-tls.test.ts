/**
 * safeTlsConnect's promises (src/net/safe-tls.ts, docs/architecture.md §3), one by one: a
 * scripted resolver decides what each name resolves to, real TLS handshakes go to fake
 * targets on 127.0.0.x:443. Unlike safeFetch it never refuses a certificate: it reports
 * what verification found, for GET /api/tls to show.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { TargetError, UnsafeTargetError } from '../../../src/net/errors.js';
import { tapInbound } from '../../../src/net/handshake-capture.js';
import { type SafeTlsOptions, safeTlsConnect } from '../../../src/net/safe-tls.js';
import { rejectionOf } from '../../expect-error.js';
import { type FakeAddressResolver, hostsResolver } from '../../fakes/address-resolver.js';
import {
  type HttpTarget,
  type SilentTarget,
  startHttpTarget,
  startSilentTarget,
} from '../../fakes/http-targets.js';
import { getTestPki } from '../../fakes/test-ca.js';

/** Nothing listens here: a connection is refused. */
const NOTHING = '127.66.0.1';
/** The canary's own address, so that no allow-list entry for another target covers it. */
const CANARY = '127.66.0.9';

let caPem: string;
let secure: HttpTarget; // h2 and http/1.1, a certificate for secure.test and its address
let wrongName: HttpTarget; // a certificate for someone-else.test
let localhostOnly: HttpTarget; // a certificate naming only "localhost"
let plain: HttpTarget; // plain HTTP on :443: a TLS handshake with it fails
let canary: HttpTarget; // never allowed: must see no connection
let silent: SilentTarget; // accepts and never speaks

beforeAll(async () => {
  const pki = await getTestPki();
  caPem = pki.caPem;
  secure = await startHttpTarget({ protocol: 'https', h2: true, names: ['secure.test'] });
  wrongName = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['someone-else.test'] }),
  });
  localhostOnly = await startHttpTarget({
    protocol: 'https',
    cert: await pki.issue({ dnsNames: ['localhost'] }),
  });
  plain = await startHttpTarget({ port: 443 });
  canary = await startHttpTarget({ protocol: 'https', address: CANARY, names: ['canary.test'] });
  silent = await startSilentTarget();
});

afterAll(async () => {
  await Promise.all([secure, wrongName, localhostOnly, plain, canary, silent].map((t) => t?.close()));
});

const sockets: TLSSocket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const t of [secure, wrongName, localhostOnly, plain, canary]) t.reset();
});

function resolver(): FakeAddressResolver {
  return hostsResolver({
    'secure.test': [secure.address],
    'wrong.test': [wrongName.address],
    'canary.test': [canary.address],
    'mixed.test': [secure.address, '192.168.1.1'],
    'fallback.test': [NOTHING, secure.address],
    'plain-first.test': [plain.address, secure.address],
    'refused.test': [NOTHING],
    'silent.test': [silent.address],
    'slow-dns.test': 'hang',
    'down.test': 'servfail',
  });
}

/** UNSAFE_ALLOW_TARGET_CIDRS covering every target but the canary. */
const ALLOW = () =>
  [secure, wrongName, localhostOnly, plain, silent].map((t) => `${t.address}/32`).concat(`${NOTHING}/32`);

function options(overrides: Partial<SafeTlsOptions> = {}): SafeTlsOptions {
  return { resolver: resolver(), allowCidrs: ALLOW(), ca: caPem, timeoutMs: 5_000, ...overrides };
}

/** Connects, and destroys the socket when the test ends. */
async function connect(host: string, opts: SafeTlsOptions): Promise<TLSSocket> {
  const socket = await safeTlsConnect(host, opts);
  sockets.push(socket);
  return socket;
}

const refusal = (p: Promise<unknown>) => rejectionOf(p, UnsafeTargetError);
const targetError = (p: Promise<unknown>) => rejectionOf(p, TargetError);

describe('safeTlsConnect refuses a destination before connecting to it', () => {
  it('ports other than 80 and 443, before DNS is asked', async () => {
    const dns = resolver();
    for (const port of [22, 8443]) {
      const err = await refusal(safeTlsConnect('secure.test', options({ resolver: dns, port })));
      expect(err).toMatchObject({ statusCode: 400, reason: 'port' });
      expect(err.message).toBe(`target port ${port} is not allowed (only 80 and 443)`);
    }
    expect(dns.asked).toEqual([]);
  });

  it('a name resolving to an address outside public space and the allow-list, naming address and range', async () => {
    const err = await refusal(safeTlsConnect('canary.test', options()));
    expect(err).toMatchObject({ reason: 'not_public', address: CANARY, range: 'loopback' });
    expect(canary.connections).toBe(0);
  });

  it('a name with one refused address among allowed ones', async () => {
    const err = await refusal(safeTlsConnect('mixed.test', options()));
    expect(err).toMatchObject({ address: '192.168.1.1', range: 'private-use' });
    expect(secure.connections).toBe(0);
  });

  it('an IP literal in any spelling, without asking DNS', async () => {
    const dns = resolver();
    for (const host of [CANARY, '2135031817', '0x7f.0x42.0.9', `[::ffff:${CANARY}]`]) {
      const err = await refusal(safeTlsConnect(host, options({ resolver: dns })));
      expect(err, host).toMatchObject({ reason: 'not_public', range: expect.stringMatching(/loopback$/) });
    }
    expect(dns.asked).toEqual([]);
    expect(canary.connections).toBe(0);
  });

  it('a name that does not exist is a 400; a DNS failure is the resolver’s own 502, passed through', async () => {
    expect((await refusal(safeTlsConnect('nowhere.test', options()))).reason).toBe('no_address');
    const down = await rejectionOf(safeTlsConnect('down.test', options()), AppError);
    expect(down).toMatchObject({ statusCode: 502, code: 'upstream_failed' });
    expect(down).not.toBeInstanceOf(TargetError);
  });

  it('admits a non-public address only inside UNSAFE_ALLOW_TARGET_CIDRS', async () => {
    expect((await refusal(safeTlsConnect('secure.test', options({ allowCidrs: [] })))).range).toBe(
      'loopback',
    );
    expect(secure.connections).toBe(0);
    const socket = await connect('secure.test', options({ allowCidrs: ['127.0.0.0/8'] }));
    expect(socket.remoteAddress).toBe(secure.address);
  });
});

describe('safeTlsConnect handshakes with the checked address', () => {
  it('sends the name as SNI, offers h2 and http/1.1, and reports a certificate that verifies', async () => {
    const socket = await connect('secure.test', options());
    expect(socket).toMatchObject({ remoteAddress: secure.address, alpnProtocol: 'h2', authorized: true });
    expect(socket.authorizationError).toBeNull();
    // The client may finish a TLS 1.3 handshake before the server has.
    await expect.poll(() => secure.tlsServernames).toEqual(['secure.test']);
  });

  it('sends no SNI to an IP literal, and verifies the certificate against the address', async () => {
    const socket = await connect(secure.address, options());
    expect(socket.authorized).toBe(true);
    await expect.poll(() => secure.tlsServernames).toEqual([false]);
  });

  it('never verifies a literal against "localhost"', async () => {
    const socket = await connect(localhostOnly.address, options());
    expect(socket.authorized).toBe(false);
    expect(String(socket.authorizationError)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('sends the servername it is given instead, to a literal or a name, and verifies against it', async () => {
    const literal = await connect(secure.address, options({ servername: 'secure.test' }));
    expect(literal.authorized).toBe(true);
    const renamed = await connect('secure.test', options({ servername: 'other.test' }));
    expect(renamed.authorized).toBe(false);
    expect(String(renamed.authorizationError)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    await expect.poll(() => secure.tlsServernames).toEqual(['secure.test', 'other.test']);
  });

  it('reports, never refuses, a certificate that does not verify', async () => {
    const wrong = await connect('wrong.test', options());
    expect(wrong.authorized).toBe(false);
    expect(String(wrong.authorizationError)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    // Without the test CA as trust anchor, the system store does not know the issuer.
    const unknown = await connect('secure.test', options({ ca: undefined }));
    expect(unknown.authorized).toBe(false);
    expect(String(unknown.authorizationError)).toMatch(/ISSUER|UNABLE_TO_VERIFY/);
  });

  it('passes the ALPN list and protocol bounds it is given', async () => {
    const h1 = await connect('secure.test', options({ alpnProtocols: ['http/1.1'] }));
    expect(h1.alpnProtocol).toBe('http/1.1');
    const tls12 = await connect('secure.test', options({ tls: { maxVersion: 'TLSv1.2' } }));
    expect(tls12.getProtocol()).toBe('TLSv1.2');
  });

  it('hands the TLS socket to onSocket before the handshake, and the TCP socket to wrapSocket', async () => {
    const keylog: string[] = [];
    let sawSecureConnect = false;
    const received: Buffer[] = [];
    let wrapped: Socket | undefined;
    const socket = await connect(
      'secure.test',
      options({
        onSocket: (tls) => {
          tls.on('keylog', (line: Buffer) => keylog.push(line.toString('latin1')));
          tls.once('secureConnect', () => {
            sawSecureConnect = true;
          });
        },
        wrapSocket: (tcp): Duplex => {
          wrapped = tcp;
          return tapInbound(tcp, (chunk) => received.push(chunk));
        },
      }),
    );
    expect(socket.authorized).toBe(true);
    expect(sawSecureConnect).toBe(true);
    expect(keylog.some((line) => line.startsWith('CLIENT_HANDSHAKE_TRAFFIC_SECRET '))).toBe(true);
    expect(wrapped?.remoteAddress).toBe(secure.address);
    // What the server sent passed through the caller's stream: it starts with a handshake record.
    expect(Buffer.concat(received)[0]).toBe(0x16);
  });

  it('leaves an error listener on the socket it returns, so a late reset cannot crash the process', async () => {
    const socket = await connect('secure.test', options());
    expect(() => socket.emit('error', new Error('late reset'))).not.toThrow();
  });
});

describe('safeTlsConnect failures', () => {
  it('tries the next checked address when one cannot be reached', async () => {
    const socket = await connect('fallback.test', options());
    expect(socket.remoteAddress).toBe(secure.address);
  });

  it('does not try another address after a failed handshake: that failure is the answer', async () => {
    const err = await targetError(safeTlsConnect('plain-first.test', options()));
    expect(err).toMatchObject({ kind: 'tls', stage: 'tls handshake' });
    expect(secure.connections).toBe(0);
  });

  it('a refused connection is a network failure at connect', async () => {
    const err = await targetError(safeTlsConnect('refused.test', options()));
    expect(err).toMatchObject({ kind: 'network', stage: 'connect' });
    expect(err.message).toBe('refused.test: connect failed: ECONNREFUSED');
  });

  it.each([
    ['silent.test', 'tls handshake'],
    ['slow-dns.test', 'dns'],
  ])('%s times out within the deadline, naming the stage (%s)', async (host, stage) => {
    const started = Date.now();
    const err = await targetError(safeTlsConnect(host, options({ timeoutMs: 300 })));
    expect(err).toMatchObject({
      kind: 'timeout',
      stage,
      message: `${host}: timeout during ${stage} after 300 ms`,
    });
    // Ended by the deadline (stretched to seconds at most on a loaded machine), not left hanging.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the caller’s abort ends the attempt as an abort, not as a timeout', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await targetError(safeTlsConnect('silent.test', options({ signal: controller.signal })));
    expect(err).toMatchObject({ kind: 'network', message: 'silent.test: aborted by the caller' });
  });
});
