/**
 * A real redis-server on a loopback port, one per test file, so a test can
 * kill it mid-flight. Redis tests run when the binary is on PATH (CI installs
 * it in .ci/run) and are skipped with a printed reason otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

export const redisBinary = findRedisServer();
if (!redisBinary && !process.env.CI) {
  process.stdout.write('redis-server not found on PATH: Redis backend tests are skipped (CI installs it).\n');
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface RedisProcess {
  url: string;
  port: number;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function launch(binary: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 5 s')), 5000);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}`));
    });
  });
  return child;
}

export async function startRedis(): Promise<RedisProcess> {
  if (!redisBinary) throw new Error('redis-server not found');
  const binary = redisBinary;
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(binary, port);
  const terminate = async (signal: NodeJS.Signals) => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => terminate('SIGKILL'),
    restart: async () => {
      await terminate('SIGKILL');
      child = await launch(binary, port);
    },
    stop: () => terminate('SIGTERM'),
  };
}
