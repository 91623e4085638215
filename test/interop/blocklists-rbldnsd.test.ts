/**
 * netdiag's iterative engine reads real DNS blocklists as `dig` does: Debian's rbldnsd serving
 * an IPv4 list (ip4set, CIDR edges, exclusions, two datasets in one zone), an IPv6 list
 * (ip6trie, nibbles), a domain list (dnset, wildcards), a list answering refusal codes and a
 * list that lists everything, delegated without glue from a test root (test/fakes/
 * rbldnsd-hierarchy.ts). For every subject and for A and TXT: the engine's rcode, A set and
 * TXT equal what the fake's table says and what `dig @rbldnsd` gets.
 *
 * Runs where rbldnsd and named are installed and the process is root on the machine (CI);
 * otherwise skips, saying why (rbldnsdUnavailable()).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCache } from '../../src/cache/memory.js';
import { IterativeResolver, type ResolveResult } from '../../src/dns-engine/index.js';
import { blocklistQueryName } from '../../src/net/names.js';
import { findTool } from '../fakes/bind-named.js';
import {
  type BlocklistEntry,
  type RbldnsdHierarchy,
  rbldnsdUnavailable,
  startRbldnsdHierarchy,
} from '../fakes/rbldnsd-hierarchy.js';
import { BLOCKLISTS } from '../fakes/rbldnsd-lists.js';

const run = promisify(execFile);

const unavailable = rbldnsdUnavailable();
const noDig =
  unavailable ?? (findTool('dig') ? undefined : 'dig not found (Debian: apt-get install bind9-dnsutils)');
if (unavailable) console.warn(`blocklists-rbldnsd interop skipped: ${unavailable}`);
else if (noDig) console.warn(`blocklists-rbldnsd interop: the dig comparison skipped: ${noDig}`);

/** What one question got: the rcode, the A addresses and the TXT strings, each sorted. */
interface Seen {
  rcode: string;
  a: string[];
  txt: string[];
}

const queryName = (e: BlocklistEntry) =>
  blocklistQueryName(e.kind === 'domain' ? { domain: e.subject } : { ip: e.subject }, e.zone);

/** A TXT record's strings joined, as a blocklist's reason is read. */
const txtOf = (data: unknown) =>
  Array.isArray(data)
    ? data.map((part) => Buffer.from(part as Buffer).toString('utf8')).join('')
    : String(data);

function fromEngine(r: ResolveResult, type: 'A' | 'TXT'): Seen {
  const records = r.answer.filter((rr) => rr.type === type);
  return {
    rcode: r.rcode,
    a: type === 'A' ? records.map((rr) => String(rr.data)).sort() : [],
    txt: type === 'TXT' ? records.map((rr) => txtOf(rr.data)).sort() : [],
  };
}

/** `dig @server name type`, read from its header and answer section. */
async function fromDig(server: string, name: string, type: 'A' | 'TXT'): Promise<Seen> {
  const { stdout } = await run(findTool('dig')!, [
    `@${server}`,
    name,
    type,
    '+norec',
    '+time=2',
    '+tries=1',
    '+noall',
    '+comments',
    '+answer',
  ]);
  const rcode = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? `unreadable: ${stdout}`;
  const answers = stdout
    .split('\n')
    .filter((line) => !line.startsWith(';') && line.trim() !== '')
    .map((line) => line.split(/\s+/))
    .filter((f) => f[3] === type);
  const a = type === 'A' ? answers.map((f) => f[4]!).sort() : [];
  // One TXT record may hold several strings: dig prints each quoted; ours hold no quote or backslash.
  const txt =
    type === 'TXT'
      ? stdout
          .split('\n')
          .filter((line) => /\sIN\s+TXT\s/.test(line) && !line.startsWith(';'))
          .map((line) => [...line.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(''))
          .sort()
      : [];
  return { rcode, a, txt };
}

/** What the fake's table says rbldnsd answers. */
function expected(e: BlocklistEntry, type: 'A' | 'TXT'): Seen {
  if (e.a.length === 0) return { rcode: 'NXDOMAIN', a: [], txt: [] };
  return { rcode: 'NOERROR', a: type === 'A' ? e.a : [], txt: type === 'TXT' ? e.txt : [] };
}

describe.skipIf(unavailable)('blocklists on rbldnsd, through the iterative engine', () => {
  let h: RbldnsdHierarchy;
  let engine: IterativeResolver;
  const newEngine = () =>
    new IterativeResolver({
      cache: new MemoryCache(),
      rootHints: h.rootHints,
      allowCidrs: [h.cidr],
      // Loopback answers in microseconds; a second is far from any answer on a busy CI.
      minTimeoutMs: 1000,
      maxTimeoutMs: 3000,
    });

  beforeAll(async () => {
    h = await startRbldnsdHierarchy();
    console.info(
      `rbldnsd hierarchy started in ${h.timings.total} ms (named ${h.timings.named}, rbldnsd ${h.timings.rbldnsd})`,
    );
    engine = newEngine();
  });
  afterAll(() => h?.close());

  it('serves every kind of list the issue names', () => {
    const roles = BLOCKLISTS.flatMap((l) => l.kinds.map((k) => `${l.role}:${k}`));
    expect(new Set(roles)).toEqual(
      new Set([
        'list:ip4',
        'list:ip6',
        'list:domain',
        'refusing:ip4',
        'lists-everything:ip4',
        'lists-everything:ip6',
      ]),
    );
    expect(h.entries.length).toBeGreaterThan(35);
  });

  it('reaches rbldnsd through a delegation without glue, over UDP only, asking the full name at every cut', async () => {
    const name = blocklistQueryName({ ip: '127.0.0.2' }, 'dnsbl.example');
    const r = await newEngine().resolve(name, 'A');
    expect(fromEngine(r, 'A')).toEqual({ rcode: 'NOERROR', a: ['127.0.0.2'], txt: [] });
    const cut = r.path.at(-1)!;
    expect(cut.zone).toBe('dnsbl.example');
    expect(cut.nameservers.map((ns) => ns.name).sort()).toEqual([
      'rbl1.dnsbl-hosts.test',
      'rbl2.dnsbl-hosts.test',
    ]);
    // The referral came without addresses: they were looked up (root → test → dnsbl-hosts.test).
    expect(
      r.queries.some((q) => q.qname === 'rbl1.dnsbl-hosts.test' || q.qname === 'rbl2.dnsbl-hosts.test'),
    ).toBe(true);
    expect(r.queries.every((q) => q.transport === 'udp')).toBe(true);
    // No query-name minimisation: every server on the way to the list was asked the whole name.
    const forList = r.queries.filter((q) => q.qname.endsWith('.example'));
    expect(forList.map((q) => q.zone)).toEqual(['.', 'example', 'dnsbl.example']);
    expect(forList.every((q) => q.qname === name)).toBe(true);
    expect(h.rbldnsd).toContain(forList.at(-1)!.server);
    expect(r.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('takes an NXDOMAIN for an intermediate label as no denial of the names below it', async () => {
    // rbldnsd denies 100.51.198.dnsbl.example though 5.100.51.198.dnsbl.example is listed.
    const r1 = await engine.resolve('100.51.198.dnsbl.example', 'A');
    expect(r1.rcode).toBe('NXDOMAIN');
    const r2 = await engine.resolve(blocklistQueryName({ ip: '198.51.100.5' }, 'dnsbl.example'), 'A');
    expect(fromEngine(r2, 'A')).toEqual({ rcode: 'NOERROR', a: ['127.0.0.3'], txt: [] });
  });

  it('takes a list without $SOA answering NODATA with no SOA as NODATA, not as a lame server', async () => {
    const r = await engine.resolve(blocklistQueryName({ ip: '127.0.0.2' }, 'refuse.example'), 'AAAA');
    expect({ status: r.status, rcode: r.rcode, answer: r.answer }).toEqual({
      status: 'nodata',
      rcode: 'NOERROR',
      answer: [],
    });
    expect(r.authority.filter((rr) => rr.type === 'SOA')).toEqual([]);
  });

  const table = BLOCKLISTS.flatMap((l) => l.entries).flatMap((e) =>
    (['A', 'TXT'] as const).map((type) => [`${e.zone} ${e.subject} ${type} (${e.about})`, e, type] as const),
  );

  it.each(table)('%s', async (_title, e, type) => {
    const name = queryName(e);
    const want = expected(e, type);
    const r = await engine.resolve(name, type);
    expect(fromEngine(r, type), JSON.stringify(r.findings)).toEqual(want);
    // NXDOMAIN, an answer, or an answer with no TXT (NODATA): never a failure.
    expect(r.status).toBe(
      want.rcode === 'NXDOMAIN' ? 'nxdomain' : want.a.length + want.txt.length > 0 ? 'answer' : 'nodata',
    );
    if (noDig) return;
    for (const server of h.rbldnsd) expect(await fromDig(server, name, type), `dig @${server}`).toEqual(want);
  });
});
