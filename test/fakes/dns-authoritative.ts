/**
 * Fake authoritative name servers on 127.0.0.x:53 (UDP and TCP on one address
 * each), forming a hierarchy a test describes as data: a root, TLDs, zones.
 * Port 53, because the engine asks name servers there and nowhere else: run
 * the suites that use them in a network namespace of their own (vitest.config.ts
 * NEEDS_LOW_PORTS; `unshare -n`), where 127.0.0.0/8 is all loopback.
 *
 * Each server answers as an authoritative server does (RFC 1034 §4.3.2), for
 * the zones it is given and nothing else:
 * - a name below a delegation (NS records at a name under the zone's apex):
 *   a referral, AA=0, the NS RRset in authority and, in additional, whatever
 *   A/AAAA records the zone holds for the NS names (glue, in bailiwick or not:
 *   the test decides), plus `extraAdditional` (a poisoning attempt);
 * - data at the name: AA=1, with in-zone CNAMEs followed; none of the type:
 *   NODATA with the SOA; no such name: NXDOMAIN with the SOA;
 * - a name in no zone of its own: REFUSED (a lame server).
 * DS at a delegation is the parent's data (RFC 4035 §3.1.4.1), answered, not
 * referred. Everything received is counted, decodable or not, so a test can
 * prove an address was never contacted.
 *
 *   const h = await startAuthoritativeServers([{ address: '127.0.0.10', zones: [rootZone] }, ...]);
 *   h.server('127.0.0.10').queries; h.server('127.0.0.40').set({ drop: true });
 *   h.total(); h.reset(); await h.close();
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import * as packet from 'dns-packet';
import type { FakeRecord } from './dns-zones.js';
import { FakeLifecycle } from './lifecycle.js';

export interface AuthZone {
  /** The apex, lower case, no trailing dot; the root is ".". */
  origin: string;
  /** Apex NS, delegations (NS below the apex), glue, data. Names absolute, lower case. */
  records: FakeRecord[];
  /** Default TTL. Default 300. */
  ttl?: number;
}

export interface AuthServerSpec {
  address: string;
  zones: AuthZone[];
  /** Added to the additional section of every referral this server sends. */
  extraAdditional?: FakeRecord[];
}

export interface AuthBehaviour {
  /** Never answer. */
  drop?: boolean;
  /** Over UDP, answer TC=1 without records: the client must ask again over TCP. */
  truncateUdp?: boolean;
}

export interface AuthQuery {
  transport: 'udp' | 'tcp';
  id: number;
  name: string;
  type: string;
  rd: boolean;
  cd: boolean;
  /** EDNS0: its UDP payload size and DO bit; undefined without OPT. */
  edns: { udpPayloadSize: number; do: boolean } | undefined;
  /** The client's source port. */
  port: number;
}

export interface FakeAuthServer {
  readonly address: string;
  /** Datagrams received and TCP connections accepted: anything that reached this address. */
  readonly packets: number;
  readonly queries: readonly AuthQuery[];
  set(b: AuthBehaviour): void;
}

export interface FakeHierarchy {
  server(address: string): FakeAuthServer;
  /** Queries received by every server. */
  total(): number;
  /** Forgets what was received (behaviours stay). */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_TTL = 300;

export async function startAuthoritativeServers(specs: AuthServerSpec[]): Promise<FakeHierarchy> {
  const servers = new Map<string, ReturnType<typeof makeServer>>();
  for (const spec of specs) {
    const s = makeServer(spec);
    await s.listen();
    servers.set(spec.address, s);
  }
  return {
    server(address) {
      const s = servers.get(address);
      if (!s) throw new Error(`no fake server at ${address}`);
      return s.view;
    },
    total: () => [...servers.values()].reduce((n, s) => n + s.view.queries.length, 0),
    reset: () => {
      for (const s of servers.values()) s.reset();
    },
    close: async () => {
      await Promise.all([...servers.values()].map((s) => s.close()));
    },
  };
}

function makeServer(spec: AuthServerSpec) {
  const life = new FakeLifecycle();
  let behaviour: AuthBehaviour = {};
  let packets = 0;
  const queries: AuthQuery[] = [];
  const view: FakeAuthServer = {
    address: spec.address,
    get packets() {
      return packets;
    },
    queries,
    set(b) {
      behaviour = { ...behaviour, ...b };
    },
  };

  function respond(bytes: Buffer, transport: 'udp' | 'tcp', port: number): Buffer | undefined {
    let query: packet.DecodedPacket;
    try {
      query = packet.decode(bytes);
    } catch {
      return undefined;
    }
    const q = query.questions?.[0];
    if (!q) return undefined;
    const opt = query.additionals?.find((rr) => rr.type === 'OPT') as
      | { udpPayloadSize?: number; flags?: number }
      | undefined;
    const flags = query.flags ?? 0;
    queries.push({
      transport,
      id: query.id ?? 0,
      name: q.name.toLowerCase(),
      type: q.type,
      rd: (flags & packet.RECURSION_DESIRED) !== 0,
      cd: (flags & packet.CHECKING_DISABLED) !== 0,
      edns: opt && {
        udpPayloadSize: opt.udpPayloadSize ?? 0,
        do: ((opt.flags ?? 0) & packet.DNSSEC_OK) !== 0,
      },
      port,
    });
    if (behaviour.drop) return undefined;
    const answer = authoritativeAnswer(spec, q.name.toLowerCase(), q.type);
    const message = {
      type: 'response' as const,
      id: query.id,
      flags:
        (answer.aa ? packet.AUTHORITATIVE_ANSWER : 0) | (flags & packet.CHECKING_DISABLED) | answer.rcode,
      questions: [q],
      answers: answer.answers,
      authorities: answer.authorities,
      additionals: [
        ...answer.additionals,
        ...(opt
          ? [{ name: '.', type: 'OPT', udpPayloadSize: 1232, flags: (opt.flags ?? 0) & packet.DNSSEC_OK }]
          : []),
      ],
    };
    let wire = packet.encode(message as unknown as packet.Packet);
    const limit = opt ? Math.max(512, opt.udpPayloadSize ?? 512) : 512;
    if (transport === 'udp' && (behaviour.truncateUdp || wire.length > limit)) {
      wire = packet.encode({
        ...message,
        flags: message.flags | packet.TRUNCATED_RESPONSE,
        answers: [],
        authorities: [],
        additionals: message.additionals.filter((rr) => rr.type === 'OPT'),
      } as unknown as packet.Packet);
    }
    return wire;
  }

  let udp: UdpSocket | undefined;
  const tcp: Server = createServer((socket: Socket) => {
    packets += 1;
    life.track(socket);
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0);
        if (buffered.length < 2 + len) break;
        const wire = respond(Buffer.from(buffered.subarray(2, 2 + len)), 'tcp', socket.remotePort ?? 0);
        buffered = buffered.subarray(2 + len);
        if (!wire || socket.destroyed) continue;
        const frame = Buffer.alloc(2 + wire.length);
        frame.writeUInt16BE(wire.length, 0);
        wire.copy(frame, 2);
        socket.write(frame);
      }
    });
  });

  return {
    view,
    reset() {
      packets = 0;
      queries.length = 0;
    },
    async listen() {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(53, spec.address, () => resolve());
      });
      udp = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp?.once('error', reject);
        udp?.bind(53, spec.address, () => resolve());
      });
      udp.on('message', (bytes: Buffer, from: RemoteInfo) => {
        packets += 1;
        const wire = respond(bytes, 'udp', from.port);
        if (wire && !life.closing) udp?.send(wire, from.port, from.address);
      });
    },
    async close() {
      udp?.close();
      await life.close(tcp);
    },
  };
}

interface Answer {
  rcode: number;
  aa: boolean;
  answers: FakeRecord[];
  authorities: FakeRecord[];
  additionals: FakeRecord[];
}

const RCODE = { NOERROR: 0, NXDOMAIN: 3, REFUSED: 5 } as const;

function under(name: string, origin: string): boolean {
  return origin === '.' || name === origin || name.endsWith(`.${origin}`);
}

function withTtl(r: FakeRecord, zone: AuthZone): FakeRecord {
  return { ...r, ttl: r.ttl ?? zone.ttl ?? DEFAULT_TTL };
}

function soa(zone: AuthZone): FakeRecord {
  const apex = zone.origin === '.' ? '' : zone.origin;
  return {
    name: zone.origin,
    type: 'SOA',
    ttl: zone.ttl ?? DEFAULT_TTL,
    data: {
      mname: `ns.${apex}`.replace(/\.$/, ''),
      rname: `hostmaster.${apex}`.replace(/\.$/, ''),
      serial: 1,
      refresh: 3600,
      retry: 600,
      expire: 86400,
      minimum: 60,
    },
  };
}

/** An RRSIG over `type` (zones carry their signatures as records; the fake signs nothing). */
function covers(r: FakeRecord, type: string): boolean {
  return r.type === 'RRSIG' && (r.data as { typeCovered?: string }).typeCovered === type;
}

/** What a server holding `spec.zones` answers to qname/qtype. */
function authoritativeAnswer(spec: AuthServerSpec, qname: string, qtype: string): Answer {
  const zone = spec.zones
    .filter((z) => under(qname, z.origin))
    .sort((a, b) => (b.origin === '.' ? 0 : b.origin.length) - (a.origin === '.' ? 0 : a.origin.length))[0];
  if (!zone) return { rcode: RCODE.REFUSED, aa: false, answers: [], authorities: [], additionals: [] };

  // The highest delegation between the apex and the name: everything below it is the child's.
  const cuts = zone.records
    .filter((r) => r.type === 'NS' && r.name !== zone.origin && under(qname, r.name))
    .map((r) => r.name)
    .sort((a, b) => a.length - b.length);
  const cut = cuts[0];
  if (cut !== undefined && !(qtype === 'DS' && qname === cut)) {
    const ns = zone.records.filter((r) => r.type === 'NS' && r.name === cut).map((r) => withTtl(r, zone));
    const targets = ns.map((r) => String(r.data).toLowerCase());
    const glue = zone.records
      .filter((r) => (r.type === 'A' || r.type === 'AAAA') && targets.includes(r.name))
      .map((r) => withTtl(r, zone));
    return {
      rcode: RCODE.NOERROR,
      aa: false,
      answers: [],
      authorities: ns,
      additionals: [...glue, ...(spec.extraAdditional ?? [])],
    };
  }

  const answers: FakeRecord[] = [];
  let name = qname;
  for (let hop = 0; hop < 8; hop++) {
    const here = zone.records.filter((r) => r.name === name);
    const matching = here.filter((r) => r.type === qtype || covers(r, qtype));
    if (matching.some((r) => r.type === qtype)) {
      answers.push(...matching.map((r) => withTtl(r, zone)));
      return { rcode: RCODE.NOERROR, aa: true, answers, authorities: [], additionals: [] };
    }
    const cname = here.find((r) => r.type === 'CNAME');
    if (cname && qtype !== 'CNAME') {
      answers.push(...here.filter((r) => r === cname || covers(r, 'CNAME')).map((r) => withTtl(r, zone)));
      const target = String(cname.data).toLowerCase();
      // Out of this zone, or into a delegated part of it: the resolver carries on from there.
      const delegated = zone.records.some(
        (r) => r.type === 'NS' && r.name !== zone.origin && under(target, r.name),
      );
      if (!under(target, zone.origin) || delegated || answers.some((r) => r.name === target)) {
        return { rcode: RCODE.NOERROR, aa: true, answers, authorities: [], additionals: [] };
      }
      name = target;
      continue;
    }
    const exists =
      here.length > 0 || name === zone.origin || zone.records.some((r) => r.name.endsWith(`.${name}`));
    return {
      rcode: exists ? RCODE.NOERROR : RCODE.NXDOMAIN,
      aa: true,
      answers,
      authorities: [soa(zone)],
      additionals: [],
    };
  }
  return { rcode: RCODE.NOERROR, aa: true, answers, authorities: [], additionals: [] };
}
