/**
 * Real DNS blocklists on loopback: Debian's `rbldnsd` (the server Spamhaus, SORBS and most
 * DNSBLs run) serving five lists, delegated from a test root that netdiag's iterative engine
 * resolves from, served by BIND `named` (test/fakes/bind-named.ts, unsigned zones):
 *
 *   127.58.B.1  root `.`               127.58.B.2  `test.`      127.58.B.3  `dnsbl-hosts.test.`
 *   127.58.B.4  `example.`, which delegates each list zone to rbl1/rbl2.dnsbl-hosts.test
 *   127.58.B.8  named's recursive view (unused here; bind-named.ts always has one)
 *   127.58.B.10 rbl1, 127.58.B.11 rbl2: one rbldnsd on both, every list zone
 *
 * As the real lists are run, and as the engine must cope with:
 * - the list zones' name servers come **without glue**: their names are in dnsbl-hosts.test,
 *   another zone, so the engine resolves rbl1/rbl2.dnsbl-hosts.test from the root first;
 * - rbldnsd answers over **UDP only** (it has no TCP listener at all);
 * - rbldnsd answers NXDOMAIN for the **intermediate labels** of a listed address (for
 *   198.51.100.5 listed, 100.51.198.dnsbl.example is NXDOMAIN), which is wrong by RFC 8020
 *   (an NXDOMAIN denies everything below): a resolver that minimises query names (RFC 9156)
 *   must fall back to the full name there. netdiag's engine does not minimise: it sends the
 *   full name to every server on the way down (src/dns-engine/resolver.ts).
 * - lists without $SOA answer NODATA without a SOA, and rbldnsd sends no OPT record back to
 *   an EDNS query.
 *
 * rbldnsd refuses to run as root and drops to the `rbldns` user, so it runs only where that
 * user exists in this user namespace: as root on the machine (CI), not in `npm test`'s
 * `unshare -rn` namespace, where only uid 0 is mapped (rbldnsdUnavailable() says so).
 * B is the block, one per vitest worker as in bind-hierarchy.ts (127.53.B), so both can run at
 * once. named needs root to add its addresses to `lo`; rbldnsd binds any 127/8 address.
 *
 *   const h = await startRbldnsdHierarchy();
 *   new IterativeResolver({ cache, rootHints: h.rootHints, allowCidrs: [h.cidr] });
 *   h.entries;   // every subject asked about, with the A records and TXT rbldnsd answers
 *   await h.close();
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dyingWithUs,
  findTool,
  type NamedProcess,
  type ServerAddresses,
  startNamed,
  terminate,
  udpQuery,
} from './bind-named.js';
import { SERVER_NAMES, type ServerRole, type ZonePlan } from './bind-zones.js';
import { BLOCKLISTS, type BlocklistEntry, type BlocklistSpec, rbldnsdData } from './rbldnsd-lists.js';

export type { BlocklistEntry, BlocklistKind, BlocklistSpec } from './rbldnsd-lists.js';

/** rbldnsd's own user (Debian's package makes it): it will not run as root. */
const RBLDNS_USER = 'rbldns';

/** Whether `uid` exists in this process's user namespace (all of them do outside one). */
function uidMapped(uid: number): boolean {
  try {
    const map = readFileSync('/proc/self/uid_map', 'utf8');
    return map
      .trim()
      .split('\n')
      .some((line) => {
        const [inside, , count] = line.trim().split(/\s+/).map(Number);
        return inside !== undefined && count !== undefined && uid >= inside && uid < inside + count;
      });
  } catch {
    return true;
  }
}

/** rbldns's uid from /etc/passwd, or undefined. */
function rbldnsUid(): number | undefined {
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {}
  const line = passwd.split('\n').find((l) => l.startsWith(`${RBLDNS_USER}:`));
  const uid = line ? Number(line.split(':')[2]) : Number.NaN;
  return Number.isInteger(uid) ? uid : undefined;
}

/** Why the blocklist hierarchy cannot run here, or undefined when it can. */
export function rbldnsdUnavailable(): string | undefined {
  const missing = ['rbldnsd', 'named', 'ip'].filter((t) => !findTool(t));
  if (missing.length > 0) {
    return `${missing.join(', ')} not found (Debian: apt-get install rbldnsd bind9 iproute2; CI installs them)`;
  }
  if (process.getuid?.() !== 0) return 'named must listen on addresses added to lo: run as root (CI does)';
  const uid = rbldnsUid();
  if (uid === undefined) return `no ${RBLDNS_USER} user, which Debian's rbldnsd package creates`;
  if (!uidMapped(uid)) {
    return (
      `rbldnsd refuses to run as root and must become ${RBLDNS_USER} (uid ${uid}), which this user ` +
      `namespace does not map (npm test's unshare -rn maps uid 0 only): run as root on the machine, as CI does`
    );
  }
  return undefined;
}

export interface RbldnsdHierarchyOptions {
  /** B in 127.58.B.0/24 (default: 1 + the vitest worker's number). */
  block?: number;
}

export interface RbldnsdHierarchy {
  /** The root server's address: where the iterative resolver starts. */
  rootHints: string[];
  /** Every address of the block, for allowCidrs / UNSAFE_ALLOW_TARGET_CIDRS. */
  cidr: string;
  /** rbldnsd's two addresses (rbl1, rbl2.dnsbl-hosts.test), for asking it directly (dig). */
  rbldnsd: string[];
  lists: BlocklistSpec[];
  /** Every subject the lists are asked about, listed or not, with what rbldnsd answers. */
  entries: BlocklistEntry[];
  dir: string;
  /** How long the start took, in ms. */
  timings: { named: number; rbldnsd: number; total: number };
  close(): Promise<void>;
}

const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);

/** The unsigned zones named serves: the root, test., dnsbl-hosts.test. and example. */
function zones(
  a: ServerAddresses & { rbl1: string; rbl2: string },
  lists: BlocklistSpec[],
): { plan: ZonePlan; text: string[] }[] {
  const rbl = ['rbl1.dnsbl-hosts.test.', 'rbl2.dnsbl-hosts.test.'];
  const zone = (name: string, server: ServerRole, records: string[]) => ({
    plan: { zone: name, server, keys: [], ds: 'none' as const, records: [] },
    text: records,
  });
  const glue = (role: ServerRole) => `${SERVER_NAMES[role]}. IN A ${a[role]}`;
  return [
    zone('.', 'root', [
      'test. IN NS ns.nic.test.',
      'example. IN NS ns.leaves.test.',
      glue('root'),
      glue('tld'),
      glue('leaves'),
    ]),
    zone('test', 'tld', [
      glue('root'),
      glue('tld'),
      glue('zones'),
      glue('leaves'),
      'dnsbl-hosts.test. IN NS ns.zones.test.',
    ]),
    zone('dnsbl-hosts.test', 'zones', [`rbl1 IN A ${a.rbl1}`, `rbl2 IN A ${a.rbl2}`]),
    // The delegations to rbldnsd: NS names in another zone, so no glue can come with them.
    zone(
      'example',
      'leaves',
      lists.flatMap((l) => rbl.map((ns) => `${fqdn(l.zone)} IN NS ${ns}`)),
    ),
  ];
}

/** Waits until rbldnsd answers this start's SOA serial on each address (not a leftover's). */
async function waitForRbldnsd(child: ChildProcess, addresses: string[], serial: number, log: () => string) {
  const deadline = Date.now() + 10_000;
  for (const address of addresses) {
    for (;;) {
      const answer = await udpQuery(address, BLOCKLISTS[0]!.zone, 'SOA');
      const soa = answer?.answers?.find((rr) => rr.type === 'SOA');
      if (soa?.type === 'SOA' && soa.data.serial === serial) break;
      if (child.exitCode !== null || Date.now() > deadline) {
        const why =
          child.exitCode !== null ? `rbldnsd exited (${child.exitCode})` : `no answer from ${address}`;
        throw new Error(`rbldnsd did not start: ${why}; its output:\n${log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export async function startRbldnsdHierarchy(opts: RbldnsdHierarchyOptions = {}): Promise<RbldnsdHierarchy> {
  const unavailable = rbldnsdUnavailable();
  if (unavailable) throw new Error(`rbldnsd hierarchy: ${unavailable}`);
  const started = Date.now();
  const block = opts.block ?? 1 + Number(process.env.VITEST_POOL_ID ?? 0);
  const prefix = `127.58.${block}`;
  const a = {
    root: `${prefix}.1`,
    tld: `${prefix}.2`,
    zones: `${prefix}.3`,
    leaves: `${prefix}.4`,
    resolver: `${prefix}.8`,
    rbl1: `${prefix}.10`,
    rbl2: `${prefix}.11`,
  };
  const named: ServerAddresses = {
    root: a.root,
    tld: a.tld,
    zones: a.zones,
    leaves: a.leaves,
    resolver: a.resolver,
  };
  const dir = await mkdtemp(join(tmpdir(), 'netdiag-rbldnsd-'));
  let namedProcess: NamedProcess | undefined;
  let child: ChildProcess | undefined;
  // rbldnsd becomes rbldns, which clears the parent-death signal dyingWithUs sets: this kills it.
  const kill = () => child?.kill('SIGKILL');
  const close = async () => {
    process.off('exit', kill);
    const c = child;
    child = undefined;
    if (c) await terminate(c);
    await namedProcess?.stop();
    namedProcess = undefined;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await mkdir(join(dir, 'named'));
    const serial = randomInt(1, 2 ** 31);
    const plans = zones(a, BLOCKLISTS);
    const files: Record<string, string> = {};
    for (const { plan, text } of plans) {
      const ns = SERVER_NAMES[plan.server];
      const file = join(dir, `${plan.zone === '.' ? 'root' : plan.zone}.zone`);
      const head = [
        '$TTL 300',
        `$ORIGIN ${fqdn(plan.zone)}`,
        `@ IN SOA ${ns}. hostmaster.nic.test. ${serial} 3600 600 86400 300`,
        `@ IN NS ${ns}.`,
      ];
      await writeFile(file, `${[...head, ...text].join('\n')}\n`);
      files[plan.zone] = file;
    }
    // bind-named.ts's recursive view reads these hints.
    await writeFile(
      join(dir, 'root.hints'),
      `. 3600000 IN NS ${SERVER_NAMES.root}.\n${SERVER_NAMES.root}. 3600000 IN A ${a.root}\n`,
    );
    namedProcess = await startNamed({
      dir,
      plans: plans.map((p) => p.plan),
      files,
      addresses: named,
      serial,
    });
    const namedReady = Date.now();

    // rbldnsd reads its data as rbldns (and rereads it on SIGHUP): the directory must be open to it.
    const data = join(dir, 'rbldnsd');
    await mkdir(data);
    await chmod(dir, 0o755);
    await chmod(data, 0o755);
    const zoneArgs: string[] = [];
    for (const list of BLOCKLISTS) {
      for (const dataset of list.datasets) {
        await writeFile(join(data, dataset.file), rbldnsdData(list, dataset, serial), { mode: 0o644 });
        zoneArgs.push(`${list.zone}:${dataset.type}:${dataset.file}`);
      }
    }
    let output = '';
    const [command, ...args] = dyingWithUs([
      findTool('rbldnsd')!,
      '-n', // foreground
      '-u',
      RBLDNS_USER,
      '-b',
      a.rbl1,
      '-b',
      a.rbl2,
      '-w',
      data,
      '-c',
      '0', // no reload checks: the data never changes while it runs
      ...zoneArgs,
    ]);
    const started2 = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started2;
    process.once('exit', kill);
    for (const stream of [started2.stdout, started2.stderr]) {
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        output = (output + chunk).slice(-4000);
      });
    }
    await waitForRbldnsd(started2, [a.rbl1, a.rbl2], serial, () => output);
    const ready = Date.now();
    return {
      rootHints: [a.root],
      cidr: `${prefix}.0/24`,
      rbldnsd: [a.rbl1, a.rbl2],
      lists: BLOCKLISTS,
      entries: BLOCKLISTS.flatMap((l) => l.entries),
      dir,
      timings: { named: namedReady - started, rbldnsd: ready - namedReady, total: ready - started },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
