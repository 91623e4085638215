/**
 * Interop: our DNS client against a real resolver (unbound), compared with
 * what dig reports for the same questions. scripts/interop-dns.sh starts
 * unbound with test/interop/unbound-zone.conf and sets the NETDIAG_INTEROP_DNS_*
 * variables; without them the suite is skipped (a plain `npm test` has no
 * resolver to talk to).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createDnsProviders,
  type DnsAnswer,
  type DnsRecordType,
  type DnsTransportProvider,
  presentation,
} from '../../src/providers/dns/index.js';

const run = promisify(execFile);
const env = process.env;
const enabled = Boolean(env.NETDIAG_INTEROP_DNS);

if (!enabled) {
  console.info('dns-unbound interop skipped: NETDIAG_INTEROP_DNS is not set (run scripts/interop-dns.sh)');
}

/** Questions about the zone in unbound-zone.conf: every type, a chain, negative answers. */
const QUESTIONS: [string, DnsRecordType][] = [
  ['interop.test', 'A'],
  ['interop.test', 'AAAA'],
  ['interop.test', 'MX'],
  ['interop.test', 'TXT'],
  ['interop.test', 'NS'],
  ['interop.test', 'SOA'],
  ['interop.test', 'CAA'],
  ['www.interop.test', 'A'],
  ['www.interop.test', 'CNAME'],
  ['long.interop.test', 'TXT'],
  ['quotes.interop.test', 'TXT'],
  ['_sip._tcp.interop.test', 'SRV'],
  ['10.2.0.192.in-addr.arpa', 'PTR'],
  ['0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', 'PTR'],
  ['missing.interop.test', 'A'],
  ['mail.interop.test', 'AAAA'],
];

interface DigView {
  status: string;
  ad: boolean;
  /** `dig +short` lines, normalized as below and sorted. */
  lines: string[];
}

/**
 * dig prints names with a trailing dot and in the case they were stored;
 * our presentation drops the dot and lower-cases names. Lines with quoted
 * strings (TXT, CAA) are compared as they are; order is ignored because
 * resolvers may rotate RRsets.
 */
function normalize(line: string): string {
  if (line.includes('"')) return line;
  return line
    .split(/\s+/)
    .map((token) => (token.length > 1 && token.endsWith('.') ? token.slice(0, -1) : token).toLowerCase())
    .join(' ');
}

async function dig(name: string, type: string): Promise<DigView> {
  const [host, port] = new URL(env.NETDIAG_INTEROP_DNS_UDP!).host.split(':');
  const base = [`@${host}`, '-p', port ?? '53', '+time=2', '+tries=1', name, type];
  const short = await run('dig', ['+short', ...base]);
  const full = await run('dig', ['+noall', '+comments', ...base]);
  const status = /status: ([A-Z0-9]+)/.exec(full.stdout)?.[1] ?? 'unknown';
  const flags = /;; flags: ([a-z ]+);/.exec(full.stdout)?.[1]?.split(' ') ?? [];
  const lines = short.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(normalize);
  return { status, ad: flags.includes('ad'), lines: lines.sort() };
}

function ours(answer: DnsAnswer): DigView {
  return {
    status: answer.rcode,
    ad: answer.flags.ad,
    lines: answer.answers.map((rr) => normalize(presentation(rr))).sort(),
  };
}

describe.skipIf(!enabled)('DNS interop with unbound', () => {
  const ca = enabled ? readFileSync(env.NETDIAG_INTEROP_DNS_CA!, 'utf8') : undefined;
  const transports: [string, string | undefined][] = [
    ['udp', env.NETDIAG_INTEROP_DNS_UDP],
    ['tcp', env.NETDIAG_INTEROP_DNS_TCP],
    ['doh', env.NETDIAG_INTEROP_DNS_DOH],
    ['dot', env.NETDIAG_INTEROP_DNS_DOT],
  ];
  const configured = transports.filter((t): t is [string, string] => t[1] !== undefined);
  const providers: DnsTransportProvider[] = enabled
    ? createDnsProviders(
        configured.map(([, url]) => url),
        { ca },
      )
    : [];

  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close()));
  });

  describe.each(configured.map(([transport], i) => [transport, i] as const))(
    'over %s',
    (_transport, index) => {
      it.each(QUESTIONS)('%s %s matches dig', async (name, type) => {
        const provider = providers[index]!;
        const [reference, answer] = await Promise.all([
          dig(name, type),
          provider.query(name, type, AbortSignal.timeout(5000)),
        ]);
        expect(ours(answer)).toEqual(reference);
      });
    },
  );

  it('DoH negotiates HTTP/2 with unbound (which serves nothing else)', async () => {
    const doh = providers[configured.findIndex(([t]) => t === 'doh')];
    expect(doh).toBeDefined();
    // unbound's DoH listener speaks only HTTP/2: an answer at all proves h2 was negotiated.
    const answers = await Promise.all(
      QUESTIONS.slice(0, 8).map(([name, type]) => doh!.query(name, type, AbortSignal.timeout(5000))),
    );
    expect(answers.every((a) => a.rcode === 'NOERROR')).toBe(true);
  });

  it('the zone loaded as written (a mis-parsed zone would fool dig and us alike)', async () => {
    const udp = providers[0]!;
    const spf = await udp.query('interop.test', 'TXT', AbortSignal.timeout(5000));
    expect(spf.answers.map((rr) => rr.data)).toEqual([
      { text: 'v=spf1 ip4:192.0.2.0/24 -all', strings: ['v=spf1 ip4:192.0.2.0/24 -all'] },
    ]);
    const quotes = await udp.query('quotes.interop.test', 'TXT', AbortSignal.timeout(5000));
    expect(quotes.answers.map((rr) => rr.data)).toEqual([
      { text: 'say "hi"semi;colon', strings: ['say "hi"', 'semi;colon'] },
    ]);
  });

  it('the long TXT arrives as several character-strings', async () => {
    const answer = await providers[0]!.query('long.interop.test', 'TXT', AbortSignal.timeout(5000));
    const [rr] = answer.answers;
    expect(rr?.type === 'TXT' && rr.data.strings.length).toBe(2);
    expect(rr?.type === 'TXT' && rr.data.text.length).toBeGreaterThan(255);
  });
});
