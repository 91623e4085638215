/**
 * Interop: GET /api/tls-scan?service=smtp against a real MTA, Debian's Postfix
 * (scripts/interop-smtp.sh starts it on 127.0.0.77:25 as Postfix comes and
 * 127.0.0.78:25 held to TLS 1.2), held against `openssl s_client -starttls
 * smtp`: every protocol and every suite OpenSSL knows is tried with s_client
 * on its own, and the scan must have found exactly those s_client could
 * negotiate; Postfix's log shows one session per handshake and never a MAIL.
 * Without NETDIAG_INTEROP_SMTP the suite is skipped.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import type { TlsScan, TlsScanResponse } from '../../src/features/tls-scan/tls-scan.schema.js';

const env = process.env;
const enabled = Boolean(env.NETDIAG_INTEROP_SMTP);
if (!enabled)
  console.info(
    'tls-scan-postfix interop skipped: NETDIAG_INTEROP_SMTP is not set (run scripts/interop-smtp.sh)',
  );

const S_CLIENT_FLAG: Record<string, string> = {
  TLSv1: '-tls1',
  'TLSv1.1': '-tls1_1',
  'TLSv1.2': '-tls1_2',
  'TLSv1.3': '-tls1_3',
};

/** Whether `openssl s_client -starttls smtp` completes a handshake with these options (its own session). */
function sClientAccepts(address: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    // stdin from /dev/null: s_client ends the session at once after the handshake.
    const child = spawn(
      'openssl',
      ['s_client', '-connect', `${address}:25`, '-starttls', 'smtp', '-brief', ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 10_000,
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('close', () =>
      resolve(/Protocol version: TLSv/.test(output) && !/Cipher is \(NONE\)/.test(output)),
    );
    child.once('error', () => resolve(false));
  });
}

/** At most `n` at once: Postfix is a shared server, and so is the test machine. */
async function mapLimited<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

function postfixLog(): string[] {
  return readFileSync(env.NETDIAG_INTEROP_SMTP_LOG!, 'utf8').split('\n');
}

describe.skipIf(!enabled)(
  'GET /api/tls-scan?service=smtp against Postfix, checked by openssl s_client',
  () => {
    let app: FastifyInstance;
    beforeAll(async () => {
      app = await buildApp(
        testConfig({
          unsafeAllowTargetCidrs: ['127.0.0.0/8'],
          rateLimitExpensive: { points: 100, seconds: 60 },
          providerTimeoutMs: 5_000,
          loadShedEventLoopDelayMs: 0,
        }),
        { ca: readFileSync(env.NETDIAG_INTEROP_SMTP_CA!, 'utf8'), logger: pino({ level: 'silent' }) },
      );
    });
    afterAll(() => app?.close());

    it.each([
      ['as Postfix comes', env.NETDIAG_INTEROP_SMTP!],
      ['held to TLS 1.2', env.NETDIAG_INTEROP_SMTP12!],
    ])(
      '%s: the protocols and suites s_client can negotiate, one session per handshake, no MAIL',
      async (_, address) => {
        const linesBefore = postfixLog().length;
        const res = await app.inject({ url: `/api/tls-scan?target=${address}&service=smtp` });
        const { scan } = res.json<TlsScanResponse>();
        expect(scan.status, JSON.stringify(scan)).toBe('ok');
        const ok = scan as TlsScan & { status: 'ok' };

        for (const [protocol, flag] of Object.entries(S_CLIENT_FLAG)) {
          const accepted = await sClientAccepts(address, [flag, '-cipher', 'ALL:@SECLEVEL=0']);
          expect(ok.protocols.find((p) => p.name === protocol)?.offered, protocol).toBe(accepted);
        }
        for (const protocol of ['TLSv1.2', 'TLSv1.3'] as const) {
          if (!ok.protocols.find((p) => p.name === protocol)?.offered) continue;
          const candidates =
            protocol === 'TLSv1.3'
              ? [
                  'TLS_AES_256_GCM_SHA384',
                  'TLS_CHACHA20_POLY1305_SHA256',
                  'TLS_AES_128_GCM_SHA256',
                  'TLS_AES_128_CCM_SHA256',
                  'TLS_AES_128_CCM_8_SHA256',
                ]
              : execFileSync('openssl', ['ciphers', '-tls1_2', 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'], {
                  encoding: 'utf8',
                })
                  .trim()
                  .split(':')
                  .filter((c) => !c.startsWith('TLS_'));
          const verdicts = await mapLimited(candidates, 4, (c) =>
            sClientAccepts(
              address,
              protocol === 'TLSv1.3'
                ? ['-tls1_3', '-ciphersuites', c]
                : ['-tls1_2', '-cipher', `${c}:@SECLEVEL=0`],
            ),
          );
          const peer = candidates.filter((_, i) => verdicts[i]).sort();
          const found = ok.cipher_suites
            .filter((s) => s.protocol === protocol)
            .map((s) => (protocol === 'TLSv1.3' ? s.name : (s.openssl_name ?? s.name)))
            .filter((name) => candidates.includes(name))
            .sort();
          expect(found, protocol).toEqual(peer);
        }
        // tls_preempt_cipherlist = no (Postfix's default): the client's order.
        expect(
          Object.values(ok.server_preference)
            .filter((v) => v !== null)
            .every((v) => v === false),
        ).toBe(true);

        // Postfix logged every connection of the scan (s_client's come after), each ended by us.
        const sessions = await vi.waitFor(
          () => {
            const lines = postfixLog().slice(linesBefore);
            const connects = lines.filter((l) => / connect from /.test(l)).length;
            if (connects < ok.handshakes) throw new Error(`${connects} of ${ok.handshakes} sessions logged`);
            return lines;
          },
          { timeout: 15_000, interval: 200 },
        );
        expect(sessions.some((l) => /\bmail=|\brcpt=|\bdata=/.test(l))).toBe(false);
      },
      180_000,
    );
  },
);
