/**
 * The validators netdiag's own is held to, asked about the hierarchy of
 * test/fakes/bind-hierarchy.ts: BIND's `delv` and a validating `unbound`, each given
 * that hierarchy's root and trust anchor and nothing else, each asked every case.
 *
 * - delv (bind9-dnsutils) validates itself but, before BIND 9.19, does not iterate: it asks
 *   the hierarchy's recursive, non-validating view (`serverAddresses.resolver`) and
 *   checks every signature and proof on its own, from the anchor in `delvAnchorFile`.
 *   Its words: "fully validated", "unsigned answer", "negative response, ...", or
 *   ";; resolution failed: broken trust chain" with the validator's own lines before it.
 * - unbound resolves from the root hints itself (its own config, directory and log),
 *   with the trust anchor file, `val-log-level: 2` and `ede: yes`, so that a SERVFAIL
 *   carries its reason (RFC 8914) and the log line says which key or record failed.
 *   Asked with dig: AD set → secure; an answer without AD → insecure; SERVFAIL → bogus.
 *
 *   const h = await startBindHierarchy();
 *   const unbound = await startValidatingUnbound(h);   // port 53 of 127.53.B.9
 *   await askDelv(h, 'www.expired.test', 'A');        // { status: 'bogus', rcode: 'SERVFAIL', reason }
 *   await unbound.ask('www.expired.test', 'A');
 *   await unbound.close();
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Verdict } from './bind-cases.js';
import type { BindHierarchy } from './bind-hierarchy.js';
import { dyingWithUs, findTool, terminate, udpAnswers } from './bind-named.js';

const run = promisify(execFile);

export interface PeerVerdict {
  /** 'error': the peer gave no verdict (a timeout, a failure that is not DNSSEC's). */
  status: Verdict | 'error';
  /** NOERROR, NXDOMAIN, or SERVFAIL where validation failed. */
  rcode: string;
  /** The peer's own words: delv's status and validator lines, unbound's EDE and log line. */
  reason: string;
}

/** Why delv cannot be asked here, or undefined. */
export function delvUnavailable(): string | undefined {
  return findTool('delv') ? undefined : 'delv not found (Debian: apt-get install bind9-dnsutils)';
}

/** Why unbound cannot be asked here, or undefined. */
export function unboundUnavailable(): string | undefined {
  const missing = ['unbound', 'dig'].filter((t) => !findTool(t));
  return missing.length === 0
    ? undefined
    : `${missing.join(', ')} not found (Debian: apt-get install unbound bind9-dnsutils)`;
}

/** The bogus reasons delv prints after ";; resolution failed:" (any other failure is no verdict). */
const DELV_BOGUS = /broken trust chain|insecurity proof failed|no valid (RRSIG|DS|signature)|verify failed/;

/** delv's output → a verdict. A CNAME chain prints one status per RRset: the weakest counts. */
export function parseDelv(output: string): PeerVerdict {
  const lines = output.split('\n');
  const statuses = lines.filter((l) => /^; (negative response, )?(fully validated|unsigned answer)/.test(l));
  const failure = /^;; resolution failed: (.*)$/m.exec(output)?.[1];
  const negative = failure === 'ncache nxdomain' || failure === 'ncache nxrrset';
  const rcode = /;-\$NXDOMAIN|ncache nxdomain/.test(output) ? 'NXDOMAIN' : 'NOERROR';
  if (failure && !negative) {
    const said = lines.filter((l) => l.startsWith(';;')).map((l) => l.replace(/^;;\s*/, ''));
    return {
      status: DELV_BOGUS.test(output) ? 'bogus' : 'error',
      rcode: 'SERVFAIL',
      reason: said.join('; '),
    };
  }
  const reason = statuses.map((l) => l.slice(2)).join('; ');
  if (statuses.some((l) => l.includes('unsigned answer'))) return { status: 'insecure', rcode, reason };
  if (statuses.length > 0) return { status: 'secure', rcode, reason };
  return { status: 'error', rcode, reason: output.trim().split('\n').slice(-3).join('; ') };
}

export async function askDelv(h: BindHierarchy, name: string, type: string): Promise<PeerVerdict> {
  const args = [`@${h.serverAddresses.resolver}`, '-a', h.delvAnchorFile, '+root=.', '+nodnssec', name, type];
  try {
    const { stdout, stderr } = await run(findTool('delv')!, args, { timeout: 30_000 });
    return parseDelv(`${stdout}\n${stderr}`);
  } catch (err) {
    return { status: 'error', rcode: 'error', reason: String(err) };
  }
}

/** dig's view of unbound's answer → a verdict, with the EDE (RFC 8914) unbound attached. */
export function parseDig(output: string): PeerVerdict {
  const rcode = /status: ([A-Z]+)/.exec(output)?.[1] ?? 'error';
  const flags = /;; flags: ([a-z ]*);/.exec(output)?.[1]?.split(' ') ?? [];
  const ede = [...output.matchAll(/^; EDE: (.*)$/gm)].map((m) => m[1]!).join('; ');
  if (rcode === 'SERVFAIL') {
    // EDE 1-12 are DNSSEC's (unsupported algorithm ... NSEC missing): a validation failure.
    const code = Number(/^(\d+)/.exec(ede)?.[1]);
    return {
      status: code >= 1 && code <= 12 ? 'bogus' : 'error',
      rcode,
      reason: ede || 'SERVFAIL without EDE',
    };
  }
  if (rcode !== 'NOERROR' && rcode !== 'NXDOMAIN') return { status: 'error', rcode, reason: ede };
  return flags.includes('ad')
    ? { status: 'secure', rcode, reason: 'AD' }
    : { status: 'insecure', rcode, reason: ede || 'no AD' };
}

export interface ValidatingUnbound {
  address: string;
  ask(name: string, type: string): Promise<PeerVerdict>;
  /** Its log so far (validation failures at val-log-level 2). */
  log(): Promise<string>;
  close(): Promise<void>;
}

function unboundConf(h: BindHierarchy, address: string): string {
  const dir = h.dir;
  return `server:
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: "${dir}/unbound-${address}.pid"
  use-syslog: no
  logfile: "${dir}/unbound-${address}.log"
  verbosity: 1
  val-log-level: 2
  log-servfail: yes
  ede: yes
  interface: ${address}
  port: 53
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  num-threads: 1
  outgoing-range: 64
  so-reuseport: no
  # Our root, on loopback, and nothing else.
  root-hints: "${h.rootHintsFile}"
  do-not-query-localhost: no
  # unbound answers the special-use test. itself (RFC 6761) unless told not to.
  local-zone: "test." nodefault
  module-config: "validator iterator"
  trust-anchor-file: "${h.trustAnchorFile}"
  trust-anchor-signaling: no
  root-key-sentinel: no
  # Every case validated from its own answers, none synthesized from an earlier one's NSEC.
  aggressive-nsec: no
  prefetch: no
  val-clean-additional: yes
remote-control:
  control-enable: no
`;
}

/** unbound on port 53 of `address` (default 127.53.B.9), validating from the hierarchy's root. */
export async function startValidatingUnbound(
  h: BindHierarchy,
  opts: { address?: string } = {},
): Promise<ValidatingUnbound> {
  const unavailable = unboundUnavailable();
  if (unavailable) throw new Error(unavailable);
  const address = opts.address ?? `${h.prefix}.9`;
  const dir = h.dir;
  const conf = join(dir, `unbound-${address}.conf`);
  const logFile = join(dir, `unbound-${address}.log`);
  await writeFile(conf, unboundConf(h, address));
  const out = openSync(join(dir, `unbound-${address}.out`), 'a');
  const [command, ...args] = dyingWithUs([findTool('unbound')!, '-d', '-p', '-c', conf]);
  const child: ChildProcess = spawn(command!, args, {
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const log = () => readFile(logFile, 'utf8').catch(() => '');
  const close = async () => {
    process.off('exit', kill);
    await terminate(child);
  };
  const deadline = Date.now() + 10_000;
  while (!(await udpAnswers(address))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      const said = `${await readFile(join(dir, `unbound-${address}.out`), 'utf8').catch(() => '')}${await log()}`;
      throw new Error(`unbound did not start:\n${said.split('\n').slice(-20).join('\n')}`);
    }
  }
  const dig = findTool('dig')!;
  return {
    address,
    log,
    close,
    async ask(name, type) {
      try {
        const args = [`@${address}`, '+dnssec', '+time=10', '+tries=1', '+nocookie', name, type];
        const { stdout } = await run(dig, args, { timeout: 30_000 });
        const verdict = parseDig(stdout);
        if (verdict.status !== 'bogus') return verdict;
        // The log names the record or key that failed (val-log-level 2).
        const line = (await log())
          .split('\n')
          .find((l) => l.includes(`validation failure <${name}. ${type} IN>`));
        return line
          ? { ...verdict, reason: `${verdict.reason}; ${line.replace(/^.*?validation failure /, '')}` }
          : verdict;
      } catch (err) {
        return { status: 'error', rcode: 'error', reason: String(err) };
      }
    },
  };
}
