/**
 * The TLS scan's peers hold what they promise: each openssl s_server profile,
 * gnutls-serv and the scripted legacy fake, asked with hand-made hellos
 * (src/tls-scan/client-hello.ts) and read with the scan's own parser
 * (server-hello.ts), accepts exactly the protocols and suites its `expected`
 * says, in that order where it enforces one, and shows its configured
 * peculiarity (dual certificates, ChaCha20 priority, DHE size, restricted groups,
 * a stapled response, SSLv2). A peer whose binary is missing is skipped, saying why.
 */

import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suitesFor } from '../../src/tls-scan/cipher-suites.js';
import {
  buildClientHello,
  buildSslv2ClientHello,
  type ClientHelloOptions,
  NAMED_GROUPS,
  type ProtocolName,
} from '../../src/tls-scan/client-hello.js';
import {
  type HandshakeMessage,
  parseServerReply,
  type ServerReply,
} from '../../src/tls-scan/server-hello.js';
import { GNUTLS_PRIORITIES, gnutlsUnavailable, startGnutlsPeer } from '../fakes/tls-scan-gnutls.js';
import { type LegacyTlsServer, startLegacyTlsServer } from '../fakes/tls-scan-legacy-server.js';
import {
  OPENSSL_PROFILES,
  type OpensslProfileName,
  opensslUnavailable,
  type PeerAddress,
  startOpensslPeer,
  type TlsPeer,
} from '../fakes/tls-scan-peers.js';

const PORT = 4443;
const VERSIONS: ProtocolName[] = ['SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
/** Offered in every hello: the groups a server of any kind may want, ffdhe too (RFC 7919). */
const GROUPS = [
  NAMED_GROUPS.x25519,
  NAMED_GROUPS.secp256r1,
  NAMED_GROUPS.secp384r1,
  NAMED_GROUPS.secp521r1,
  NAMED_GROUPS.ffdhe2048,
  NAMED_GROUPS.ffdhe3072,
];
/** OCSPResponse { responseStatus tryLater(3) } and no responseBytes (RFC 6960 §4.2.1): stapled as is. */
const OCSP_TRY_LATER = Buffer.from('30030a0103', 'hex');

const opensslMissing = opensslUnavailable();
const gnutlsMissing = gnutlsUnavailable();
if (opensslMissing) console.warn(`tls-scan-peers: openssl profiles SKIPPED: ${opensslMissing}`);
if (gnutlsMissing) console.warn(`tls-scan-peers: gnutls-serv SKIPPED: ${gnutlsMissing}`);

/**
 * Sends a hello and reads the answer: for a TLS ≤ 1.2 ServerHello, the whole first flight
 * (to its ServerHelloDone), so the certificate and key exchange are there to check.
 */
function exchange(at: PeerAddress, hello: Buffer): Promise<ServerReply> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const socket = connect({ host: at.address, port: at.port }, () => socket.write(hello));
    const finish = () => {
      socket.destroy();
      resolve(parseServerReply(received));
    };
    socket.setTimeout(5_000, finish);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const reply = parseServerReply(received);
      if (reply.kind === 'incomplete') return;
      if (reply.kind === 'server_hello' && reply.version !== 'TLSv1.3') {
        if (!reply.following.some((m) => m.type === 14)) return;
      }
      finish();
    });
    socket.on('end', finish);
    socket.on('error', (err) => (received.length > 0 ? finish() : reject(err)));
  });
}

const ask = (at: PeerAddress, opts: ClientHelloOptions) =>
  exchange(
    at,
    buildClientHello({
      groups: GROUPS,
      ...(opts.version === 'SSLv3' ? { noExtensions: true } : {}),
      ...opts,
    }).bytes,
  );

/** The suites a version's hello may carry, strongest-looking first is not needed: every one. */
const offerFor = (version: ProtocolName) =>
  suitesFor(version)
    .map((s) => s.code)
    .filter((code) => code !== 0x00ff && code !== 0x5600);

/** The suite a reply chose in `version`, if it accepted that version. */
function chosen(reply: ServerReply, version: ProtocolName): number | undefined {
  if (reply.kind === 'server_hello' && reply.version === version) return reply.cipherSuite;
  if (reply.kind === 'hello_retry_request' && reply.version === version) return reply.cipherSuite;
  return undefined;
}

/** Offer everything, take away what was chosen, again: the suites in the order the server picked them. */
async function enumerate(at: PeerAddress, version: ProtocolName): Promise<number[]> {
  let remaining = offerFor(version);
  const picked: number[] = [];
  for (;;) {
    const suite = chosen(await ask(at, { version, cipherSuites: remaining }), version);
    if (suite === undefined) return picked;
    if (picked.includes(suite) || picked.length > 40) throw new Error(`${version}: ${suite} chosen again`);
    picked.push(suite);
    remaining = remaining.filter((code) => code !== suite);
  }
}

/** Every version's verdict and suites, held against the peer's `expected`. */
async function expectAsConfigured(peer: TlsPeer): Promise<void> {
  const { expected } = peer;
  for (const version of VERSIONS) {
    const suites = await enumerate(peer, version);
    const want = expected.suites[version] ?? [];
    if (expected.serverPreference[version]) expect({ version, suites }).toEqual({ version, suites: want });
    else expect({ version, suites: [...suites].sort() }).toEqual({ version, suites: [...want].sort() });
    expect({ version, offered: suites.length > 0 }).toEqual({
      version,
      offered: expected.protocols.includes(version),
    });
  }
}

/** The leaf's key type from a TLS ≤ 1.2 flight's Certificate message (RFC 5246 §7.4.2). */
function leafKeyType(following: HandshakeMessage[]): string | undefined {
  const certificate = following.find((m) => m.type === 11)?.body;
  if (!certificate) return undefined;
  const length = certificate.readUIntBE(3, 3);
  return new X509Certificate(certificate.subarray(6, 6 + length)).publicKey.asymmetricKeyType;
}

describe.skipIf(opensslMissing)('openssl s_server profiles', () => {
  const peers = new Map<OpensslProfileName, TlsPeer>();
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tls-scan-peers-'));
    const statusFile = join(dir, 'ocsp.der');
    writeFileSync(statusFile, OCSP_TRY_LATER);
    const names = Object.keys(OPENSSL_PROFILES) as OpensslProfileName[];
    await Promise.all(
      names.map(async (name, i) => {
        const at = { address: `127.0.0.${121 + i}`, port: PORT };
        const extra =
          name === 'ocspStapling' ? { statusFile } : name === 'dheOnly' ? { dhBits: 1024 as const } : {};
        peers.set(name, await startOpensslPeer(name, { ...at, ...extra }));
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await Promise.all([...peers.values()].map((p) => p.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const peer = (name: OpensslProfileName) => peers.get(name)!;

  it.each(Object.keys(OPENSSL_PROFILES) as OpensslProfileName[])(
    '%s accepts exactly the protocols and suites it was configured with, in its order where it has one',
    async (name) => {
      await expectAsConfigured(peer(name));
    },
    30_000,
  );

  it('tls13Only refuses a TLS 1.2 hello with protocol_version', async () => {
    const reply = await ask(peer('tls13Only'), { version: 'TLSv1.2', cipherSuites: offerFor('TLSv1.2') });
    expect(reply).toMatchObject({ kind: 'alert', level: 2, name: 'protocol_version' });
  });

  it('tls12and13ClientPref follows the client: ChaCha20 first gets ChaCha20, AES-128 first gets AES-128', async () => {
    const at = peer('tls12and13ClientPref');
    expect(await ask(at, { version: 'TLSv1.2', cipherSuites: [0xcca9, 0xc02c] })).toMatchObject({
      cipherSuite: 0xcca9,
    });
    expect(await ask(at, { version: 'TLSv1.2', cipherSuites: [0xc02b, 0xc02c] })).toMatchObject({
      cipherSuite: 0xc02b,
    });
    expect(await ask(at, { version: 'TLSv1.3', cipherSuites: [0x1301, 0x1302] })).toMatchObject({
      cipherSuite: 0x1301,
    });
  });

  it('prioritizeChaCha keeps its own order, except for a client that lists ChaCha20 first', async () => {
    const at = peer('prioritizeChaCha');
    const aesFirst = [0xc02b, 0xc02c, 0xcca9];
    expect(await ask(at, { version: 'TLSv1.2', cipherSuites: aesFirst })).toMatchObject({
      cipherSuite: 0xc02c,
    });
    expect(await ask(at, { version: 'TLSv1.2', cipherSuites: [0xcca9, ...aesFirst] })).toMatchObject({
      cipherSuite: 0xcca9,
    });
    expect(await ask(at, { version: 'TLSv1.3', cipherSuites: [0x1301, 0x1303] })).toMatchObject({
      cipherSuite: 0x1301,
    });
    expect(await ask(at, { version: 'TLSv1.3', cipherSuites: [0x1303, 0x1301] })).toMatchObject({
      cipherSuite: 0x1303,
    });
    // The server-preference profile without the option keeps AES for that client.
    expect(
      await ask(peer('tls12and13ServerPref'), { version: 'TLSv1.3', cipherSuites: [0x1303, 0x1301, 0x1302] }),
    ).toMatchObject({
      cipherSuite: 0x1302,
    });
  });

  it('dualCert serves its RSA leaf to an RSA-only hello and its ECDSA leaf to an ECDSA-only one', async () => {
    const at = peer('dualCert');
    const rsa = await ask(at, { version: 'TLSv1.2', cipherSuites: [0xc02f, 0xc030] });
    const ecdsa = await ask(at, { version: 'TLSv1.2', cipherSuites: [0xc02b, 0xc02c] });
    expect(rsa).toMatchObject({ kind: 'server_hello', cipherSuite: 0xc030 });
    expect(ecdsa).toMatchObject({ kind: 'server_hello', cipherSuite: 0xc02c });
    if (rsa.kind !== 'server_hello' || ecdsa.kind !== 'server_hello') throw new Error('unreachable');
    expect(leafKeyType(rsa.following)).toBe('rsa');
    expect(leafKeyType(ecdsa.following)).toBe('ec');
  });

  it('dheOnly sends the 1024-bit prime it was given in its ServerKeyExchange', async () => {
    const reply = await ask(peer('dheOnly'), { version: 'TLSv1.2', cipherSuites: offerFor('TLSv1.2') });
    expect(reply).toMatchObject({ kind: 'server_hello', cipherSuite: 0x009f });
    if (reply.kind !== 'server_hello') throw new Error('unreachable');
    expect(leafKeyType(reply.following)).toBe('rsa');
    // ServerDHParams: dh_p<1..2^16-1> first (RFC 5246 §7.4.3).
    const keyExchange = reply.following.find((m) => m.type === 12)!.body;
    expect(keyExchange.readUInt16BE(0) * 8).toBe(1024);
  });

  it('groupsRestricted asks for a secp384r1 share in a HelloRetryRequest, and refuses x25519 alone', async () => {
    const at = peer('groupsRestricted');
    expect(await ask(at, { version: 'TLSv1.3', cipherSuites: [0x1301] })).toMatchObject({
      kind: 'hello_retry_request',
      selectedGroup: NAMED_GROUPS.secp384r1,
    });
    const ffdhe = await ask(at, {
      version: 'TLSv1.3',
      cipherSuites: [0x1301],
      groups: [NAMED_GROUPS.x25519, NAMED_GROUPS.ffdhe3072],
    });
    expect(ffdhe).toMatchObject({ kind: 'hello_retry_request', selectedGroup: NAMED_GROUPS.ffdhe3072 });
    const x25519 = await ask(at, {
      version: 'TLSv1.3',
      cipherSuites: [0x1301],
      groups: [NAMED_GROUPS.x25519],
    });
    expect(x25519).toMatchObject({ kind: 'alert', level: 2 });
  });

  it('ocspStapling staples the given response to a TLS 1.2 client that asks, and nothing to one that does not', async () => {
    const at = peer('ocspStapling');
    const asked = await ask(at, { version: 'TLSv1.2', cipherSuites: [0xc02b], statusRequest: true });
    if (asked.kind !== 'server_hello') throw new Error(`no ServerHello: ${asked.kind}`);
    expect(asked.extensions.statusRequest).toBe(true);
    // CertificateStatus: status_type ocsp(1), then the response with a 24-bit length (RFC 6066 §8).
    const status = asked.following.find((m) => m.type === 22)?.body;
    expect(status?.subarray(4)).toEqual(OCSP_TRY_LATER);
    const silent = await ask(at, { version: 'TLSv1.2', cipherSuites: [0xc02b] });
    if (silent.kind !== 'server_hello') throw new Error(`no ServerHello: ${silent.kind}`);
    expect(silent.following.some((m) => m.type === 22)).toBe(false);
  });
});

describe.skipIf(gnutlsMissing)('gnutls-serv', () => {
  const peers: TlsPeer[] = [];

  beforeAll(async () => {
    peers.push(
      await startGnutlsPeer({ address: '127.0.0.141', port: PORT, priority: GNUTLS_PRIORITIES.tls12and13 }),
      await startGnutlsPeer({
        address: '127.0.0.142',
        port: PORT,
        priority: GNUTLS_PRIORITIES.legacy3des,
        keyType: 'RSA',
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await Promise.all(peers.map((p) => p.stop()));
  });

  it('with the client order (ECDSA leaf), accepts what gnutls-cli lists for its priority', async () => {
    expect(peers[0]!.expected.protocols).toEqual(['TLSv1.2', 'TLSv1.3']);
    await expectAsConfigured(peers[0]!);
  }, 60_000);

  it('with 3DES and TLS 1.0 under %SERVER_PRECEDENCE (RSA leaf), accepts them in its order', async () => {
    expect(peers[1]!.expected.suites.TLSv1).toContain(0x000a);
    await expectAsConfigured(peers[1]!);
    const reply = await ask(peers[1]!, { version: 'TLSv1', cipherSuites: [0x000a] });
    expect(reply).toMatchObject({ kind: 'server_hello', version: 'TLSv1', cipherSuite: 0x000a });
  }, 60_000);
});

describe('the scripted legacy server', () => {
  let fake: LegacyTlsServer;
  const RC4_SHA = 0x0005;
  const EXP_RC4_MD5 = 0x0003;

  beforeAll(async () => {
    fake = await startLegacyTlsServer(
      { address: '127.0.0.151', port: PORT },
      {
        versions: ['SSLv3', 'TLSv1'],
        suites: [RC4_SHA, EXP_RC4_MD5, 0x000a],
        serverPreference: true,
        sslv2: { cipherSpecs: [0x010080, 0x020080] },
        compression: true,
        secureRenegotiation: true,
        heartbeat: true,
        fallbackScsv: true,
      },
    );
  });

  afterAll(() => fake.stop());

  it('answers an SSLv3 hello with SSLv3, RC4-SHA, its RSA certificate and ServerHelloDone', async () => {
    const reply = await ask(fake, { version: 'SSLv3', cipherSuites: [EXP_RC4_MD5, RC4_SHA] });
    expect(reply).toMatchObject({
      kind: 'server_hello',
      version: 'SSLv3',
      cipherSuite: RC4_SHA,
      compressionMethod: 0,
    });
    if (reply.kind !== 'server_hello') throw new Error('unreachable');
    expect(reply.extensions.types).toEqual([]);
    expect(leafKeyType(reply.following)).toBe('rsa');
    expect(reply.following.map((m) => m.type)).toEqual([11, 14]);
    expect(fake.hellos.at(-1)).toMatchObject({ format: 'tls', clientVersion: 0x0300, answer: 'SSLv3' });
  });

  it('answers a TLS 1.2 hello with TLS 1.0 (its best), and the extensions it was asked for', async () => {
    const reply = await ask(fake, {
      version: 'TLSv1.2',
      cipherSuites: [0xc02f, 0x000a, RC4_SHA],
      compressionMethods: [1, 0],
      heartbeat: true,
    });
    expect(reply).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1',
      cipherSuite: RC4_SHA,
      compressionMethod: 1,
      extensions: { secureRenegotiation: true, heartbeat: 1 },
    });
    expect(fake.hellos.at(-1)?.supportedGroups).toEqual(GROUPS);
  });

  it('refuses what it does not have: TLS 1.3 alone, no common suite, a fallback below its best', async () => {
    expect(await ask(fake, { version: 'TLSv1.3', cipherSuites: [0x1301] })).toMatchObject({
      kind: 'alert',
      name: 'protocol_version',
    });
    expect(await ask(fake, { version: 'TLSv1', cipherSuites: [0x002f] })).toMatchObject({
      kind: 'alert',
      name: 'handshake_failure',
    });
    expect(await ask(fake, { version: 'SSLv3', cipherSuites: [RC4_SHA, 0x5600] })).toMatchObject({
      kind: 'alert',
      name: 'inappropriate_fallback',
    });
    // At its best version the signal changes nothing.
    expect(await ask(fake, { version: 'TLSv1', cipherSuites: [RC4_SHA, 0x5600] })).toMatchObject({
      kind: 'server_hello',
      version: 'TLSv1',
    });
  });

  it('answers an SSLv2 CLIENT-HELLO with a SERVER-HELLO of the specs both have, or NO-CIPHER-ERROR', async () => {
    const reply = await exchange(fake, buildSslv2ClientHello([0x0700c0, 0x020080, 0x010080]));
    expect(reply).toMatchObject({ kind: 'sslv2_server_hello', version: 2, certificateType: 1 });
    if (reply.kind !== 'sslv2_server_hello') throw new Error('unreachable');
    expect(reply.cipherSpecs).toEqual([0x010080, 0x020080]);
    expect(new X509Certificate(reply.certificate).publicKey.asymmetricKeyType).toBe('rsa');
    expect(await exchange(fake, buildSslv2ClientHello([0x0700c0]))).toEqual({ kind: 'sslv2_error', code: 1 });
  });
});
