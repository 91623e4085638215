/**
 * The `named` of test/fakes/bind-hierarchy.ts: its config (one view per server, each matched
 * by the address a query arrives on, plus a recursive, non-validating view for delv), the
 * loopback addresses it listens on, its process, and the wait until every zone answers.
 *
 * named listens only on addresses it finds on an interface (unlike unbound or a Node socket,
 * which may bind any 127/8 address), so the servers' addresses are added to `lo` (/32) for
 * as long as it runs, and those it added are removed when it stops.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import * as packet from 'dns-packet';
import { fqdn } from './bind-signing.js';
import { SERVER_NAMES, type ServerRole, type ZonePlan } from './bind-zones.js';

const run = promisify(execFile);

export type ServerAddresses = Record<ServerRole | 'resolver', string>;

/** An executable on PATH or in the sbin directories an ordinary user's PATH may lack. */
export function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return undefined;
}

function namedConf(
  dir: string,
  plans: ZonePlan[],
  files: Record<string, string>,
  addresses: ServerAddresses,
) {
  const work = join(dir, 'named');
  const view = (role: ServerRole) =>
    [
      `view "${role}" {`,
      `  match-destinations { ${addresses[role]}; };`,
      ...plans
        .filter((p) => p.server === role)
        .map((p) => `  zone "${fqdn(p.zone)}" { type primary; file "${files[p.zone]}"; };`),
      '};',
    ].join('\n');
  // Pre-signed zones served as they are: no dnssec-policy, no keys in named's directory,
  // so named neither re-signs the broken zones nor refreshes the expired ones.
  return `options {
  directory "${work}";
  pid-file "${work}/named.pid";
  session-keyfile "${work}/session.key";
  managed-keys-directory "${work}";
  bindkeys-file "/dev/null";
  listen-on port 53 { ${Object.values(addresses).join('; ')}; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  allow-transfer { none; };
};
controls { };
${(Object.keys(SERVER_NAMES) as ServerRole[]).map(view).join('\n')}
view "resolver" {
  match-destinations { ${addresses.resolver}; };
  recursion yes;
  allow-recursion { any; };
  servfail-ttl 0;
  zone "." { type hint; file "${join(dir, 'root.hints')}"; };
};
`;
}

/** One query over UDP to `address`:53; undefined when nothing answers within 200 ms. */
export async function udpQuery(
  address: string,
  name: string,
  type: string,
): Promise<packet.DecodedPacket | undefined> {
  const socket = createSocket('udp4');
  try {
    return await new Promise<packet.DecodedPacket | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 200);
      socket.once('message', (msg) => {
        clearTimeout(timer);
        try {
          resolve(packet.decode(msg));
        } catch {
          resolve(undefined);
        }
      });
      socket.once('error', () => resolve(undefined));
      const query = packet.encode({ type: 'query', id: 1, questions: [{ type: type as 'SOA', name }] });
      socket.send(query, 53, address);
    });
  } finally {
    socket.close();
  }
}

/** Whether `address`:53 answers at all (the server is up). */
export async function udpAnswers(address: string): Promise<boolean> {
  return (await udpQuery(address, '.', 'SOA')) !== undefined;
}

/**
 * Waits until every zone answers its SOA with authority, from its own server, with this
 * start's serial: a zone named could not load answers SERVFAIL, and a named left over from
 * a test process that was killed (holding the address, so this one could not listen) would
 * answer with another serial.
 */
async function waitForZones(child: ChildProcess, log: string, o: NamedOptions) {
  const deadline = Date.now() + 15_000;
  for (const plan of o.plans) {
    const address = o.addresses[plan.server];
    for (;;) {
      const answer = await udpQuery(address, fqdn(plan.zone), 'SOA');
      const rcode = answer && (answer.flags ?? 0) & 0xf;
      const soa = answer?.answers?.find((rr) => rr.type === 'SOA');
      const serial = soa?.type === 'SOA' ? soa.data.serial : undefined;
      if (rcode === 0 && answer?.flag_aa && serial === o.serial) break;
      if (child.exitCode !== null || Date.now() > deadline) {
        const why =
          child.exitCode !== null
            ? `named exited (${child.exitCode})`
            : !answer
              ? `${plan.zone}: no answer from ${address}`
              : rcode !== 0 || !answer.flag_aa
                ? `${plan.zone}: rcode ${rcode}, aa ${answer.flag_aa}`
                : `${plan.zone}: serial ${serial}, not ${o.serial}: another named holds ${address}`;
        const tail = (await readFile(log, 'utf8')).split('\n').slice(-30).join('\n');
        throw new Error(`bind hierarchy did not start: ${why}; named's log:\n${tail}`);
      }
      if (answer) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  if (!(await udpAnswers(o.addresses.resolver)))
    throw new Error('bind hierarchy: the resolver view does not answer');
}

/**
 * The command that runs `argv` and kills it with SIGKILL if this process dies first
 * (setpriv --pdeathsig, util-linux), so no server outlives a killed test worker.
 */
export function dyingWithUs(argv: string[]): string[] {
  const setpriv = findTool('setpriv');
  return setpriv ? [setpriv, '--pdeathsig', 'KILL', ...argv] : argv;
}

export interface NamedProcess {
  log: string;
  stop(): Promise<void>;
}

export interface NamedOptions {
  dir: string;
  plans: ZonePlan[];
  files: Record<string, string>;
  addresses: ServerAddresses;
  /** The SOA serial of every zone. */
  serial: number;
}

/** Starts named (foreground, its own config and directory under `dir`) and waits for every zone. */
export async function startNamed(o: NamedOptions): Promise<NamedProcess> {
  const { dir, addresses } = o;
  const ip = findTool('ip')!;
  const conf = join(dir, 'named.conf');
  await writeFile(conf, namedConf(dir, o.plans, o.files, addresses));
  const { stdout } = await run(ip, ['-o', '-4', 'addr', 'show', 'dev', 'lo']);
  const added: string[] = [];
  let child: ChildProcess | undefined;
  // A test process that dies without close() leaves no named behind.
  const kill = () => child?.kill('SIGKILL');
  const stop = async () => {
    process.off('exit', kill);
    const c = child;
    child = undefined;
    if (c) await terminate(c);
    for (const a of added.splice(0)) await run(ip, ['addr', 'del', `${a}/32`, 'dev', 'lo']).catch(() => {});
  };
  const log = join(dir, 'named.log');
  try {
    for (const a of Object.values(addresses)) {
      if (stdout.includes(` ${a}/`)) continue;
      await run(ip, ['addr', 'add', `${a}/32`, 'dev', 'lo']);
      added.push(a);
    }
    const fd = openSync(log, 'a');
    const [command, ...args] = dyingWithUs([findTool('named')!, '-g', '-4', '-n', '1', '-c', conf]);
    const started = spawn(command!, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child = started;
    process.once('exit', kill);
    await waitForZones(started, log, o);
    return { log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Stops a server process: SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
export async function terminate(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    c.kill('SIGTERM');
  });
}
