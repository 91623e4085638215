/**
 * A real signed DNS hierarchy on loopback: a root of our own, the TLDs `test.` and
 * `example.`, and the zones of test/fakes/bind-zones.ts (secure, insecure and deliberately
 * bogus), keyed by `dnssec-keygen`, signed by `dnssec-signzone` at test time, and served by
 * Debian's `named` — one process, one view per server, each on port 53 of its own address:
 *
 *   127.53.B.1 root   .2 TLDs   .3 second-level zones   .4 third-level zones
 *   127.53.B.8 a recursive, non-validating view (delv before 9.19 does not iterate: it
 *              asks a resolver and validates what it gets)
 *
 * B is the block (default: one per vitest worker, so parallel files never share an address).
 * named binds only addresses found on an interface, so these are added to `lo` while it runs
 * and removed by close(): that needs root, as CI runs, or the user and network namespace of
 * `npm test` (scripts/test.mjs). Without root, or without named and bind9-utils, the suites
 * skip, saying why (`bindHierarchyUnavailable()`; .ci/run installs them).
 *
 *   const h = await startBindHierarchy();
 *   h.rootHints;          // ['127.53.1.1']
 *   h.trustAnchorFile;    // the root KSK as DS and DNSKEY, zone-file format (unbound's root.key)
 *   h.cases;              // [{ name, type, expected: { status, rcode, zone, code }, about }]
 *   await h.close();
 *
 * A start takes a few seconds (keys, ~30 zones signed, named): share one per test file.
 */
import { randomInt } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES, type DnssecCase } from './bind-cases.js';
import { findTool, type NamedProcess, type ServerAddresses, startNamed } from './bind-named.js';
import { dsFromKey, formatZone, fqdn, keygen, rechainNsec3, signZone, type ZoneKey } from './bind-signing.js';
import { SERVER_NAMES, type ServerRole, type ZonePlan, zonePlans } from './bind-zones.js';

export type { DnssecCase, ExpectedVerdict, ReasonCode, Verdict } from './bind-cases.js';
export { findTool, type ServerAddresses, udpAnswers, udpQuery } from './bind-named.js';

const TOOLS = ['named', 'dnssec-keygen', 'dnssec-signzone', 'dnssec-dsfromkey', 'ip'] as const;

/** Why the hierarchy cannot run here, or undefined when it can. */
export function bindHierarchyUnavailable(): string | undefined {
  const missing = TOOLS.filter((t) => !findTool(t));
  if (missing.length > 0) {
    return `${missing.join(', ')} not found (Debian: apt-get install bind9 bind9-utils iproute2; CI installs them)`;
  }
  if (process.getuid?.() !== 0) {
    return 'named must listen on port 53 of addresses added to lo: run as root, or through `npm test` (its own namespace)';
  }
  return undefined;
}

export interface BindHierarchyOptions {
  /** B in 127.53.B.0/24 (default: 1 + the vitest worker's number). */
  block?: number;
  /** Extra zone-file lines for a zone, relative to its origin (e.g. a TLSA for a test certificate). */
  records?: Record<string, string[]>;
}

export interface BindHierarchy {
  /** The root server's address: where an iterative resolver starts. */
  rootHints: string[];
  /** The root KSK as a DS and as a DNSKEY record, zone-file format, like unbound's root.key. */
  trustAnchorFile: string;
  trustAnchorText: string;
  /** The same DS in named.conf's `trust-anchors` syntax, which `delv -a` reads. */
  delvAnchorFile: string;
  /** A root hints file (NS and A of the root server), for unbound and named. */
  rootHintsFile: string;
  cases: DnssecCase[];
  serverAddresses: ServerAddresses;
  /** 127.53.B: a test may take other addresses of the block (.9 up) for servers of its own. */
  prefix: string;
  /** Covers every address of the block, for UNSAFE_ALLOW_TARGET_CIDRS. */
  cidr: string;
  /** The temporary directory: keys, zone files, named's and unbound's configs and logs. */
  dir: string;
  /** Each zone's signed (or, unsigned, served) file. */
  zoneFiles: Record<string, string>;
  /** How long each part of the start took, in ms. */
  timings: { keys: number; signing: number; named: number; total: number };
  close(): Promise<void>;
}

/** `task` over `items`, at most `limit` at once (keygen and signzone are CPU-bound; CI has two cores). */
async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const DAY = 86_400_000;

function parentOf(zone: string, plans: ZonePlan[]): ZonePlan {
  const labels = zone.split('.');
  for (let i = 1; i <= labels.length; i++) {
    const candidate = i === labels.length ? '.' : labels.slice(i).join('.');
    const found = plans.find((p) => p.zone === candidate);
    if (found) return found;
  }
  throw new Error(`no parent zone for ${zone}`);
}

/** A DNSKEY of algorithm 253 (PRIVATEDNS: the key starts with the algorithm's domain name). */
function privateAlgorithmDnskey(): string {
  const name = Buffer.from('\x07private\x07netdiag\x04test\x00', 'latin1');
  return `@ IN DNSKEY 257 3 253 ${Buffer.concat([name, Buffer.alloc(32, 0x5a)]).toString('base64')}`;
}

/** The DS lines the parent publishes for `plan`. */
async function delegationDs(dir: string, plan: ZonePlan, keys: ZoneKey[]): Promise<string[]> {
  const ksks = keys.filter((k) => k.role !== 'zsk');
  switch (plan.ds) {
    case 'none':
      return [];
    case 'match':
      return Promise.all(ksks.map((k) => dsFromKey(k)));
    case 'other-key':
      return [await dsFromKey(await keygen(join(dir, 'keys'), plan.zone, plan.keys[0]!))];
    case 'bad-digest': {
      const ds = await dsFromKey(ksks[0]!);
      const last = ds.at(-1)!;
      return [ds.slice(0, -1) + (last === '0' ? '1' : '0')];
    }
    case 'unsupported-digest':
      return [(await dsFromKey(ksks[0]!)).replace(/( DS \d+ \d+ )2 /, '$13 ')];
    case 'private-algorithm': {
      const file = join(dir, `${plan.zone}.private-dnskey`);
      await writeFile(file, `${fqdn(plan.zone)} 300 IN ${privateAlgorithmDnskey().slice(5)}\n`);
      return [await dsFromKey({ zone: plan.zone, dnskeyFile: file })];
    }
  }
}

interface Built {
  plans: ZonePlan[];
  keys: Map<string, ZoneKey[]>;
  ds: Map<string, string[]>;
  addresses: Record<ServerRole, string>;
  /** Every zone's SOA serial: this start's own, so an answer from another named is told apart. */
  serial: number;
}

function zoneText(plan: ZonePlan, b: Built, extra: string[]): string {
  const { plans, keys, ds } = b;
  const ns = SERVER_NAMES[plan.server];
  const lines = [
    '$TTL 300',
    `$ORIGIN ${fqdn(plan.zone)}`,
    `@ IN SOA ${ns}. hostmaster.nic.test. ${b.serial} 3600 600 86400 300`,
    `@ IN NS ${ns}.`,
    ...plan.records,
    ...extra,
    ...(keys.get(plan.zone) ?? []).map((k) => k.dnskey),
  ];
  if (plan.ds === 'private-algorithm') lines.push(privateAlgorithmDnskey());
  for (const child of plans.filter((p) => p.zone !== '.' && parentOf(p.zone, plans) === plan)) {
    const childNs = SERVER_NAMES[child.server];
    lines.push(`${fqdn(child.zone)} IN NS ${childNs}.`, ...(ds.get(child.zone) ?? []));
  }
  // Glue for name servers under a delegation of this zone (the root's, for test.).
  if (plan.zone === '.') {
    for (const role of Object.keys(SERVER_NAMES) as ServerRole[]) {
      if (role !== 'root') lines.push(`${SERVER_NAMES[role]}. IN A ${b.addresses[role]}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function buildZone(dir: string, plan: ZonePlan, input: string, keys: ZoneKey[]): Promise<string> {
  if (keys.length === 0) return input;
  const now = Date.now();
  const validity = plan.validityDays && {
    inception: new Date(now + plan.validityDays.inception * DAY),
    expiration: new Date(now + plan.validityDays.expiration * DAY),
  };
  const output = `${input}.signed`;
  let lines = await signZone({
    dir: join(dir, 'keys'),
    zone: plan.zone,
    input,
    output,
    keys,
    ...(plan.nsec3 ? { nsec3: plan.nsec3 } : {}),
    ...(validity ? { validity } : {}),
  });
  if (plan.nsec3BeyondLimit) {
    lines = await rechainNsec3(lines, plan.zone, keys[0]!, {
      ...plan.nsec3BeyondLimit,
      inception: new Date(now - 3_600_000),
      expiration: new Date(now + 30 * DAY),
    });
  }
  if (plan.edit) lines = plan.edit(lines);
  if (plan.edit || plan.nsec3BeyondLimit) await writeFile(output, formatZone(lines));
  return output;
}

export async function startBindHierarchy(opts: BindHierarchyOptions = {}): Promise<BindHierarchy> {
  const unavailable = bindHierarchyUnavailable();
  if (unavailable) throw new Error(`bind hierarchy: ${unavailable}`);
  const started = Date.now();
  const block = opts.block ?? 1 + Number(process.env.VITEST_POOL_ID ?? 0);
  const prefix = `127.53.${block}`;
  const serverAddresses: ServerAddresses = {
    root: `${prefix}.1`,
    tld: `${prefix}.2`,
    zones: `${prefix}.3`,
    leaves: `${prefix}.4`,
    resolver: `${prefix}.8`,
  };
  const dir = await mkdtemp(join(tmpdir(), 'netdiag-bind-'));
  let named: NamedProcess | undefined;
  const close = async () => {
    await named?.stop();
    named = undefined;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await mkdir(join(dir, 'keys'));
    await mkdir(join(dir, 'named'));
    const plans = zonePlans(serverAddresses);
    // RSA keys first: generating one takes 100 times longer than any other.
    const specs = plans
      .flatMap((p) => p.keys.map((spec) => ({ zone: p.zone, spec })))
      .sort((a, b) => (b.spec.bits ?? 0) - (a.spec.bits ?? 0));
    const made = await pool(specs, 4, ({ zone, spec }) => keygen(join(dir, 'keys'), zone, spec));
    const keys = new Map(plans.map((p) => [p.zone, made.filter((k) => k.zone === p.zone)]));
    const dsList = await pool(plans, 4, (p) =>
      p.zone === '.' ? Promise.resolve([]) : delegationDs(dir, p, keys.get(p.zone)!),
    );
    const ds = new Map(plans.map((p, i) => [p.zone, dsList[i]!]));
    const keysDone = Date.now();

    const files: Record<string, string> = {};
    const built = { plans, keys, ds, addresses: serverAddresses, serial: randomInt(1, 2 ** 31) };
    await pool(plans, 4, async (plan) => {
      const input = join(dir, `${plan.zone === '.' ? 'root' : plan.zone}.zone`);
      await writeFile(input, zoneText(plan, built, opts.records?.[plan.zone] ?? []));
      files[plan.zone] = await buildZone(dir, plan, input, keys.get(plan.zone)!);
    });
    const signed = Date.now();

    const rootKsk = keys.get('.')!.find((k) => k.role === 'ksk')!;
    const rootDs = (await dsFromKey(rootKsk)).replace(/^\. IN DS/, '. 300 IN DS');
    const trustAnchorText =
      `; The trust anchor of netdiag's test root (test/fakes/bind-hierarchy.ts): its KSK, key tag ${rootKsk.tag}.\n` +
      `${rootDs}\n${rootKsk.dnskey}\n`;
    const trustAnchorFile = join(dir, 'root.key');
    await writeFile(trustAnchorFile, trustAnchorText);
    const [, tag, alg, digestType, digest] = /DS (\d+) (\d+) (\d+) (\S+)$/.exec(rootDs) ?? [];
    const delvAnchorFile = join(dir, 'delv.anchors');
    await writeFile(
      delvAnchorFile,
      `trust-anchors {\n  "." static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`,
    );
    const rootHintsFile = join(dir, 'root.hints');
    const root = SERVER_NAMES.root;
    await writeFile(
      rootHintsFile,
      `. 3600000 IN NS ${root}.\n${root}. 3600000 IN A ${serverAddresses.root}\n`,
    );

    named = await startNamed({ dir, plans, files, addresses: serverAddresses, serial: built.serial });
    const ready = Date.now();
    return {
      rootHints: [serverAddresses.root],
      trustAnchorFile,
      trustAnchorText,
      delvAnchorFile,
      rootHintsFile,
      cases: CASES,
      serverAddresses,
      prefix,
      cidr: `${prefix}.0/24`,
      dir,
      zoneFiles: files,
      timings: {
        keys: keysDone - started,
        signing: signed - keysDone,
        named: ready - signed,
        total: ready - started,
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
