/**
 * A fake DNS resolver on 127.0.0.1 speaking the real protocols (STYLE habit
 * 6): UDP and TCP on one port (so a truncated UDP answer can be retried over
 * TCP at the same address), DoH over HTTPS with the test CA (HTTP/2 with
 * HTTP/1.1 fallback, or HTTP/1.1 only), and DoT. It answers from fixture
 * zones like a recursive resolver would: CNAME chains are followed into the
 * answer section, unknown names get NXDOMAIN and known names lacking the type
 * NODATA, both with the zone's SOA in the authority section.
 *
 *   const dns = await startFakeDnsServer();           // DEFAULT_ZONES
 *   createDnsProviders([dns.udp, dns.doh], { ca: dns.caPem });
 *   dns.set({ rcode: 'SERVFAIL' }, 'udp');             // only UDP fails
 *   dns.set({ drop: 1 });                              // the next query anywhere goes unanswered
 *   dns.counts.udp; dns.queries; dns.dohProtocols;
 *   dns.reset(); await dns.close();
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import * as packet from 'dns-packet';
import { DEFAULT_ZONES, type FakeRecord, type FakeZone } from './dns-zones.js';
import { getTestPki } from './test-ca.js';

export type FakeTransport = 'udp' | 'tcp' | 'doh' | 'dot';

export interface FakeDnsBehaviour {
  /** Set (true) or clear (false) AD on every answer, overriding the zones' own `ad`. */
  ad?: boolean;
  /** UDP only: answer with TC=1 and no records, so the client must ask again over TCP. */
  truncateUdp?: boolean;
  /** Answer every query with this rcode (SERVFAIL, REFUSED, FORMERR, NOTIMP, BADVERS, ...) and no records. */
  rcode?: string;
  /** Leave the question section out of `rcode` answers (some servers do). */
  omitQuestion?: boolean;
  /** Wait this long before answering. */
  delayMs?: number;
  /** true: never answer; a number: leave that many queries unanswered, then answer again. */
  drop?: boolean | number;
  /** Extended DNS Errors (RFC 8914) to put in the OPT record of every answer. */
  ede?: { code: number; text?: string }[];
  /** UDP only: before the real answer, send datagrams with a wrong id and with a wrong question. */
  spoofUdp?: boolean;
  /**
   * TCP, DoT, DoH: close the connection instead of answering, as a server
   * whose idle timeout fires just as a query arrives would. true: always;
   * a number: that many times. (UDP: like drop.)
   */
  hangUp?: boolean | number;
  /** Answer with bytes that carry the query's id but are not a decodable DNS message. */
  garbage?: boolean;
  /** DoH only: answer with this HTTP status (and a text body) instead of DNS. */
  dohStatus?: number;
  /** DoH only: label the (valid) DNS answer with this content-type. */
  dohContentType?: string;
  /**
   * Answer with a well-formed message carrying the query's id but the answer
   * to another question (`wrong-question.invalid`): valid-looking, wrong shape.
   */
  wrongQuestion?: boolean;
  /** TCP and DoT: send the answer's frame one byte per second (a server that trickles). */
  trickle?: boolean;
}

export interface FakeQuery {
  transport: FakeTransport;
  id: number;
  name: string;
  type: string;
  /** EDNS0 present, its payload size and the DO bit. */
  edns: { udpPayloadSize: number; do: boolean } | undefined;
  rd: boolean;
}

export interface FakeDnsServer {
  udp: string;
  tcp: string;
  doh: string;
  dot: string;
  /**
   * Redirecting paths under it: `/moved` 308 → /dns-query; `/moved-permanently` 301 → /dns-query;
   * `/to-get` 301 → /dns-query?dns=<the POSTed query, base64url> (the resolver puts the question in
   * the URL, the case Google's DoH documentation answers with a GET); `/see-other` 303 → /dns-query
   * (no dns=); `/to-http` 301 → http://; `/loop` 307 → itself, forever.
   */
  dohBase: string;
  /** The test CA the DoH and DoT certificates chain to. */
  caPem: string;
  /** Queries received per transport (dropped ones included). */
  counts: Record<FakeTransport, number>;
  /** Every query, in arrival order. */
  queries: FakeQuery[];
  /** HTTP version of every DoH request ('2.0' or '1.1'). */
  dohProtocols: string[];
  /** Method and path (query included) of every DoH request, in arrival order. */
  dohRequests: { method: string; path: string }[];
  /** TLS connections accepted by the DoH and DoT listeners. */
  tlsConnections: { doh: number; dot: number };
  /** TCP connections accepted by the plain TCP listener. */
  tcpConnections: number;
  /** Closes every open TCP, DoT and DoH connection (an idle timeout on the server side). */
  disconnect(): void;
  /** Behaviour from now on, for every transport or only the one named (which then wins over the global). */
  set(behaviour: FakeDnsBehaviour, transport?: FakeTransport): void;
  /** Back to plain answers; counters and logs cleared. */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeDnsOptions {
  zones?: readonly FakeZone[];
  /** Serve DoH over HTTP/1.1 only (https.createServer, no h2 in ALPN). Default false. */
  dohHttp1Only?: boolean;
}

/** dns-packet's decoded query, as far as the fake reads it. */
interface QueryPacket {
  id: number;
  flags: number;
  flag_rd: boolean;
  flag_cd: boolean;
  questions: { name: string; type: string; class: string }[];
  additionals: { type: string; udpPayloadSize?: number; flags?: number }[];
}

type Rcodes = Record<string, number>;
// Numbers from the IANA DNS RCODEs registry; >15 need the OPT record's extended bits.
const RCODES: Rcodes = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
};

export async function startFakeDnsServer(opts: FakeDnsOptions = {}): Promise<FakeDnsServer> {
  const pki = await getTestPki();
  const zones = [...(opts.zones ?? DEFAULT_ZONES)];
  let global: FakeDnsBehaviour = {};
  let perTransport: Partial<Record<FakeTransport, FakeDnsBehaviour>> = {};
  let dropped = 0;
  let hungUp = 0;
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<{ destroy(): void }>();
  let closing = false;

  let closed: Promise<void> | undefined;
  // URLs are filled in once the listeners have their ports.
  const server: FakeDnsServer = {
    udp: '',
    tcp: '',
    doh: '',
    dot: '',
    dohBase: '',
    caPem: pki.caPem,
    counts: { udp: 0, tcp: 0, doh: 0, dot: 0 },
    queries: [],
    dohProtocols: [],
    dohRequests: [],
    tlsConnections: { doh: 0, dot: 0 },
    tcpConnections: 0,
    set(b: FakeDnsBehaviour, transport?: FakeTransport): void {
      if (transport) perTransport = { ...perTransport, [transport]: { ...perTransport[transport], ...b } };
      else global = { ...global, ...b };
      if (b.drop !== undefined) dropped = 0;
      if (b.hangUp !== undefined) hungUp = 0;
    },
    disconnect(): void {
      for (const s of sockets) s.destroy();
    },
    reset(): void {
      global = {};
      perTransport = {};
      dropped = 0;
      hungUp = 0;
      // In place, so a test holding `dns.counts` or `dns.queries` sees the reset.
      for (const t of Object.keys(server.counts) as FakeTransport[]) server.counts[t] = 0;
      server.queries.length = 0;
      server.dohProtocols.length = 0;
      server.dohRequests.length = 0;
      server.tlsConnections.doh = 0;
      server.tlsConnections.dot = 0;
      server.tcpConnections = 0;
    },
    close(): Promise<void> {
      closed ??= (async () => {
        closing = true;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const s of sockets) s.destroy();
        udpSocket?.close();
        await Promise.all([tcpServer, dohServer, dotServer].map((s) => new Promise((r) => s.close(r))));
      })();
      return closed;
    },
  };

  const behaviour = (t: FakeTransport): FakeDnsBehaviour => ({ ...global, ...perTransport[t] });

  /** Decides the fate of one query: undefined = no answer (dropped or undecodable), 'hang-up' = close the connection. */
  async function answer(t: FakeTransport, bytes: Buffer): Promise<Buffer | 'hang-up' | undefined> {
    let query: QueryPacket;
    try {
      query = packet.decode(bytes) as unknown as QueryPacket;
    } catch {
      return undefined;
    }
    const q = query.questions[0];
    if (!q) return undefined;
    const opt = query.additionals.find((rr) => rr.type === 'OPT');
    server.counts[t] += 1;
    server.queries.push({
      transport: t,
      id: query.id,
      name: q.name,
      type: q.type,
      edns: opt && {
        udpPayloadSize: opt.udpPayloadSize ?? 0,
        do: ((opt.flags ?? 0) & packet.DNSSEC_OK) !== 0,
      },
      rd: query.flag_rd,
    });

    const b = behaviour(t);
    if (b.hangUp === true) return 'hang-up';
    if (typeof b.hangUp === 'number' && hungUp < b.hangUp) {
      hungUp += 1;
      return 'hang-up';
    }
    if (b.drop === true) return undefined;
    if (typeof b.drop === 'number' && dropped < b.drop) {
      dropped += 1;
      return undefined;
    }
    if (b.delayMs) await delay(b.delayMs);
    if (closing) return undefined;
    // Our id first, so the client takes it for its answer and has to notice it is malformed.
    if (b.garbage)
      return Buffer.concat([
        bytes.subarray(0, 2),
        Buffer.from([0x81, 0x80, 0, 1, 0, 1]),
        Buffer.from('junk'),
      ]);

    if (b.wrongQuestion) {
      const other = { name: 'wrong-question.invalid', type: 'A', class: 'IN' };
      return packet.encode({
        type: 'response',
        id: query.id,
        flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE,
        questions: [other],
        answers: [{ name: other.name, type: 'A', ttl: 60, data: '192.0.2.99' }],
      } as unknown as packet.Packet);
    }

    const response = b.rcode
      ? { rcode: b.rcode, answers: [], authorities: [], ad: false }
      : lookup(zones, q.name.toLowerCase(), q.type);
    if (response.rcode === 'TIMEOUT') return undefined;
    const ad = b.ad ?? response.ad;
    const rcode = RCODES[response.rcode] ?? 0;
    let flags = packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (rcode & 0xf);
    if (ad) flags |= packet.AUTHENTIC_DATA;
    const options = (b.ede ?? []).map((e) => ({
      code: 15,
      data: Buffer.concat([Buffer.from([e.code >> 8, e.code & 0xff]), Buffer.from(e.text ?? '', 'utf8')]),
    }));
    const additionals = opt
      ? [
          {
            name: '.',
            type: 'OPT',
            udpPayloadSize: 1232,
            extendedRcode: rcode >> 4,
            ednsVersion: 0,
            flags: (opt.flags ?? 0) & packet.DNSSEC_OK,
            options,
          },
        ]
      : [];
    const message = {
      type: 'response',
      id: query.id,
      flags,
      questions: b.rcode && b.omitQuestion ? [] : [q],
      answers: response.answers,
      authorities: response.authorities,
      additionals,
    };
    let wire = packet.encode(message as unknown as packet.Packet);
    // RFC 1035 §4.2.1 / RFC 6891 §6.2.5: a UDP answer larger than the client can take is truncated.
    const limit = opt ? Math.max(512, opt.udpPayloadSize ?? 512) : 512;
    if (t === 'udp' && (b.truncateUdp || wire.length > limit)) {
      const truncated = {
        ...message,
        flags: flags | packet.TRUNCATED_RESPONSE,
        answers: [],
        authorities: [],
      };
      wire = packet.encode(truncated as unknown as packet.Packet);
    }
    return wire;
  }

  function delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  }

  /** Writes `bytes` one per second; resolves when done, the socket goes away, or the fake closes. */
  async function trickleOut(socket: Socket, bytes: Buffer): Promise<void> {
    for (let at = 0; at < bytes.length; at++) {
      if (closing || socket.destroyed) return;
      socket.write(bytes.subarray(at, at + 1));
      await delay(1000);
    }
  }

  // --- TCP and DoT: 2-byte length framing, pipelined queries answered as they complete.
  function serveStream(t: 'tcp' | 'dot', socket: Socket): void {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    // Frames leave one after another, never interleaved, as from a real server (a trickled one holds up the rest).
    let writing: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0);
        if (buffered.length < 2 + len) break;
        const query = buffered.subarray(2, 2 + len);
        buffered = buffered.subarray(2 + len);
        void answer(t, Buffer.from(query)).then((wire) => {
          if (wire === 'hang-up') socket.destroy();
          if (!wire || wire === 'hang-up' || socket.destroyed) return;
          const frame = Buffer.alloc(2 + wire.length);
          frame.writeUInt16BE(wire.length, 0);
          wire.copy(frame, 2);
          const trickle = behaviour(t).trickle === true;
          writing = writing.then(() => {
            if (trickle) return trickleOut(socket, frame);
            if (!socket.destroyed) socket.write(frame);
          });
        });
      }
    });
  }

  const tcpServer: Server = createTcpServer((socket) => {
    server.tcpConnections += 1;
    serveStream('tcp', socket);
  });
  const dotServer: TlsServer = createTlsServer(
    { key: pki.server.keyPem, cert: pki.server.certPem },
    (socket) => serveStream('dot', socket),
  );
  dotServer.on('secureConnection', () => {
    server.tlsConnections.dot += 1;
  });
  dotServer.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  // --- UDP on the TCP listener's port.
  const onDatagram = (bytes: Buffer, from: RemoteInfo) => {
    const b = behaviour('udp');
    void answer('udp', bytes).then((wire) => {
      if (!wire || wire === 'hang-up' || closing) return;
      if (b.spoofUdp && wire.length >= 12) {
        // Wrong id, then right id with a different question: the client must ignore both.
        const wrongId = Buffer.from(wire);
        wrongId.writeUInt16BE((wire.readUInt16BE(0) + 1) & 0xffff, 0);
        udpSocket?.send(wrongId, from.port, from.address);
        udpSocket?.send(spoofedQuestion(wire), from.port, from.address);
      }
      udpSocket?.send(wire, from.port, from.address);
    });
  };
  let udpSocket: UdpSocket | undefined;

  // --- DoH: POST (RFC 8484 §4.1) and GET ?dns= (base64url) at /dns-query.
  const onDohRequest = (
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
  ) => {
    void handleDoh(req, res).catch(() => {});
  };
  async function handleDoh(
    req: IncomingMessage | Http2ServerRequest,
    res: ServerResponse | Http2ServerResponse,
  ): Promise<void> {
    server.dohProtocols.push(req.httpVersion);
    server.dohRequests.push({ method: req.method ?? '', path: req.url ?? '/' });
    const url = new URL(req.url ?? '/', 'https://fake.invalid');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, headers: Record<string, string>, body: Buffer | string) => {
      if (closing || res.destroyed) return;
      (res as ServerResponse).writeHead(status, headers);
      res.end(body);
    };
    const moved: Record<string, [number, string]> = {
      '/moved': [308, '/dns-query'],
      '/moved-permanently': [301, '/dns-query'],
      '/to-get': [301, `/dns-query?dns=${Buffer.concat(chunks).toString('base64url')}`],
      '/see-other': [303, '/dns-query'],
      '/to-http': [301, `http://${req.headers.host ?? req.headers[':authority']}/dns-query`],
      '/loop': [307, '/loop'],
    };
    const redirect = moved[url.pathname];
    if (redirect) return reply(redirect[0], { location: redirect[1] }, '');
    if (url.pathname !== '/dns-query') return reply(404, { 'content-type': 'text/plain' }, 'not found');
    let query: Buffer;
    if (req.method === 'POST') {
      if (req.headers['content-type'] !== 'application/dns-message') {
        return reply(415, { 'content-type': 'text/plain' }, 'unsupported media type');
      }
      query = Buffer.concat(chunks);
    } else {
      // Google answers a GET without its parameter 400 ("problems parsing the GET parameters").
      const dns = url.searchParams.get('dns');
      if (!dns) return reply(400, { 'content-type': 'text/plain' }, 'missing dns parameter');
      query = Buffer.from(dns, 'base64url');
    }
    const b = behaviour('doh');
    if (b.dohStatus) {
      server.counts.doh += 1;
      return reply(b.dohStatus, { 'content-type': 'text/plain' }, `status ${b.dohStatus}`);
    }
    const wire = await answer('doh', query);
    if (wire === 'hang-up') {
      if ('stream' in req) req.stream.session?.destroy();
      else req.socket.destroy();
      return;
    }
    if (!wire) {
      // Dropped: hold the request open; close() ends it.
      return;
    }
    reply(
      200,
      { 'content-type': b.dohContentType ?? 'application/dns-message', 'cache-control': 'max-age=60' },
      wire,
    );
  }

  const tlsOptions = { key: pki.server.keyPem, cert: pki.server.certPem };
  const dohServer: TlsServer = opts.dohHttp1Only
    ? createHttpsServer(tlsOptions, onDohRequest)
    : createSecureServer({ ...tlsOptions, allowHTTP1: true }, onDohRequest);
  dohServer.on('secureConnection', () => {
    server.tlsConnections.doh += 1;
  });
  dohServer.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // HTTP/2 sessions must be destroyed themselves, or server.close() waits for them.
  dohServer.on('session', (session: { destroy(): void; once(e: string, f: () => void): void }) => {
    sockets.add(session);
    session.once('close', () => sockets.delete(session));
  });

  const bound = await listenTcpAndUdp(tcpServer);
  const port = bound.port;
  udpSocket = bound.udp;
  udpSocket.on('message', onDatagram);
  const dohPort = await listen(dohServer);
  const dotPort = await listen(dotServer);

  server.udp = `udp://127.0.0.1:${port}`;
  server.tcp = `tcp://127.0.0.1:${port}`;
  server.doh = `https://127.0.0.1:${dohPort}/dns-query`;
  server.dot = `tls://127.0.0.1:${dotPort}`;
  server.dohBase = `https://127.0.0.1:${dohPort}`;
  return server;
}

/**
 * The answer to `qname`/`qtype` from the zones, following CNAMEs the way a
 * recursive resolver assembles its answer section (RFC 1034 §4.3.2).
 */
export function lookup(
  zones: readonly FakeZone[],
  qname: string,
  qtype: string,
): { rcode: string; answers: FakeRecord[]; authorities: FakeRecord[]; ad: boolean } {
  const answers: FakeRecord[] = [];
  let name = qname;
  let ad = true;
  // Bounded like a resolver bounds chain length; fixture zones never loop.
  for (let hop = 0; hop < 8; hop++) {
    const zone = zoneOf(zones, name);
    if (!zone) {
      // Outside every fixture zone: a chain that leaves our data ends here; a direct question is refused.
      return answers.length > 0
        ? { rcode: 'NOERROR', answers, authorities: [], ad: false }
        : { rcode: 'REFUSED', answers, authorities: [], ad: false };
    }
    ad &&= zone.ad === true;
    const soa = soaRecord(zone);
    const atName = [...zone.records, soa].filter((r) => r.name === name);
    const exists = atName.length > 0 || zone.records.some((r) => r.name.endsWith(`.${name}`));
    if (!exists) return { rcode: 'NXDOMAIN', answers, authorities: [soa], ad };
    const matching = atName.filter((r) => r.type === qtype);
    if (matching.length > 0) {
      answers.push(...matching.map((r) => withTtl(r, zone)));
      return { rcode: 'NOERROR', answers, authorities: [], ad };
    }
    // A TIMEOUT record: every other type at this name goes unanswered (the openspf suite's TIMEOUT).
    if (atName.some((r) => r.type === 'TIMEOUT')) return { rcode: 'TIMEOUT', answers, authorities: [], ad };
    const cname = atName.find((r) => r.type === 'CNAME');
    if (!cname) return { rcode: 'NOERROR', answers, authorities: [soa], ad };
    answers.push(withTtl(cname, zone));
    name = String(cname.data).toLowerCase();
  }
  return { rcode: 'SERVFAIL', answers: [], authorities: [], ad: false };
}

function zoneOf(zones: readonly FakeZone[], name: string): FakeZone | undefined {
  let best: FakeZone | undefined;
  for (const zone of zones) {
    if (
      // Origin "" is the root zone: it holds every name no other zone does.
      (zone.origin === '' || name === zone.origin || name.endsWith(`.${zone.origin}`)) &&
      zone.origin.length > (best?.origin.length ?? -1)
    ) {
      best = zone;
    }
  }
  return best;
}

function soaRecord(zone: FakeZone): FakeRecord {
  const { ttl, ...data } = zone.soa;
  return { name: zone.origin, type: 'SOA', ttl, data };
}

function withTtl(r: FakeRecord, zone: FakeZone): FakeRecord & { ttl: number } {
  // A copy of array data: dns-packet's TXT encoder writes Buffers into the array it is given.
  return { ...r, ttl: r.ttl ?? zone.ttl, data: Array.isArray(r.data) ? [...r.data] : r.data };
}

/** The same answer but asking about another name: right id, wrong question. */
function spoofedQuestion(wire: Buffer): Buffer {
  const msg = packet.decode(wire);
  const q = msg.questions?.[0];
  const forged = { ...msg, questions: q ? [{ ...q, name: `forged.${q.name}` }] : [] };
  return packet.encode(forged);
}

/** Binds TCP on an ephemeral port, then UDP on the same number; tries again if UDP's is taken. */
async function listenTcpAndUdp(tcp: Server): Promise<{ port: number; udp: UdpSocket }> {
  for (let attempt = 0; ; attempt++) {
    const port = await listen(tcp);
    const udp = createSocket('udp4');
    const bound = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      udp.once('error', onError);
      udp.bind(port, '127.0.0.1', () => {
        udp.off('error', onError);
        resolve(true);
      });
    });
    if (bound) return { port, udp };
    udp.close();
    await new Promise((r) => tcp.close(r));
    if (attempt >= 20) throw new Error('could not bind UDP and TCP on one port');
  }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
