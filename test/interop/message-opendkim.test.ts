/**
 * Interop: POST /api/message verifies a message signed by a real signer, Debian's
 * OpenDKIM as Postfix's milter, and says what OpenDKIM signed (domain, selector,
 * algorithm, canonicalization, headers); a copy with one body byte changed fails on
 * its body hash. OpenDKIM's own verifier (`opendkim -t`, libopendkim, with the key
 * from its TestDNSData) is the second witness, both ways.
 *
 * scripts/interop-dkim.sh makes the key (opendkim-genkey, RSA 2048), starts OpenDKIM
 * (mode s, relaxed/simple) and a Postfix on 127.0.0.79:25 that delivers interop.test's
 * mail to a Maildir, and sets the NETDIAG_INTEROP_DKIM* variables; without them the
 * suite is skipped (a plain `npm test` has no Postfix to send to). The message goes in
 * over SMTP from here and is read back from the Maildir as Postfix wrote it; the key
 * record is served, as opendkim-genkey split it, by the fake DNS server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MessageAnalysis } from '../../src/features/message/message.schema.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { testZone } from '../fakes/dns-zones.js';
import { buildTestApp } from '../helper.js';

const env = process.env;
const enabled = Boolean(env.NETDIAG_INTEROP_DKIM);

if (!enabled) {
  console.info(
    'message-opendkim interop skipped: NETDIAG_INTEROP_DKIM is not set (run scripts/interop-dkim.sh as root)',
  );
}

const DOMAIN = env.NETDIAG_INTEROP_DKIM_DOMAIN ?? 'interop.test';
const SELECTOR = env.NETDIAG_INTEROP_DKIM_SELECTOR ?? '';
const KEY_NAME = `${SELECTOR}._domainkey.${DOMAIN}`;
const MESSAGE_ID = `<${Date.now()}.${process.pid}@${DOMAIN}>`;
/** The body line whose one byte the tampered copy changes. */
const BODY_LINE = 'The quarterly numbers are attached; nothing in them should surprise you.';

/**
 * Headers with what relaxed canonicalization folds away (runs of spaces, a folded
 * Subject, trailing space) and a body with what simple keeps (an indented line, an
 * empty line, trailing empty lines it trims to one).
 */
const MESSAGE = [
  `From: Alice Example <alice@${DOMAIN}>`,
  `To: Bob <bob@${DOMAIN}>`,
  'Subject:   DKIM   interop,',
  '\tsigned by OpenDKIM  ',
  `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
  `Message-ID: ${MESSAGE_ID}`,
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=us-ascii',
  '',
  'Hello Bob,',
  '',
  BODY_LINE,
  '    (an indented line, kept as it is)',
  '',
  '-- ',
  'Alice',
  '',
  '',
].join('\r\n');

/** The TXT record opendkim-genkey wrote, as its character-strings (the quoted parts, in order). */
function keyRecordStrings(): string[] {
  const zoneText = readFileSync(env.NETDIAG_INTEROP_DKIM_KEY_RECORD!, 'utf8');
  return [...zoneText.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
}

/**
 * One SMTP session: each command sent after the reply before it, each reply's code checked
 * (220 banner, 354 for DATA, 221 for QUIT, 250 otherwise); resolves with the replies.
 */
function smtpSession(address: string, commands: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port: 25, localAddress: '127.0.0.1' });
    socket.setTimeout(15_000, () => socket.destroy(new Error('SMTP session timed out')));
    const replies: string[] = [];
    // The first expected reply is the banner's.
    const expected = ['220', ...commands.map((c) => (c === 'DATA' ? '354' : c === 'QUIT' ? '221' : '250'))];
    const toSend = [...commands];
    let buffer = '';
    let current = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let eol = buffer.indexOf('\r\n');
      while (eol >= 0) {
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        eol = buffer.indexOf('\r\n');
        current += `${line}\n`;
        if (line[3] === '-') continue;
        const want = expected[replies.length];
        replies.push(current.trimEnd());
        current = '';
        if (!line.startsWith(want!)) {
          socket.destroy(new Error(`SMTP: expected ${want}, got: ${replies.at(-1)}`));
          return;
        }
        const next = toSend.shift();
        if (next === undefined) socket.end();
        else socket.write(`${next}\r\n`);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(replies));
  });
}

/** Sends MESSAGE to Postfix and returns the queue id Postfix gave it. */
async function send(): Promise<string> {
  // Dot-stuffing (RFC 5321 §4.5.2): no line of MESSAGE starts with a dot, which this checks.
  expect(MESSAGE).not.toMatch(/(^|\n)\./);
  const replies = await smtpSession(env.NETDIAG_INTEROP_DKIM!, [
    'EHLO client.netdiag.test',
    `MAIL FROM:<alice@${DOMAIN}>`,
    `RCPT TO:<bob@${DOMAIN}>`,
    'DATA',
    `${MESSAGE}.`,
    'QUIT',
  ]);
  const queued = / queued as (\w+)/.exec(replies.at(-2) ?? '');
  expect(queued, replies.join('\n')).not.toBeNull();
  return queued![1]!;
}

/** The delivered file (Maildir new/) holding MESSAGE_ID, with CRLF line ends as on the wire. */
async function delivered(): Promise<string> {
  const dir = join(env.NETDIAG_INTEROP_DKIM_MAILDIR!, 'new');
  const text = await vi.waitFor(
    () => {
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        // Maildir is created on the first delivery.
      }
      for (const name of names) {
        const t = readFileSync(join(dir, name), 'latin1');
        if (t.includes(MESSAGE_ID)) return t;
      }
      throw new Error(`no message with ${MESSAGE_ID} in ${dir} yet`);
    },
    { timeout: 15_000, interval: 100 },
  );
  return text.replace(/\r?\n/g, '\r\n');
}

/** The tags of the first DKIM-Signature header (unfolded, whitespace removed from values). */
function signatureTags(message: string): Record<string, string> {
  const head = message.slice(0, message.indexOf('\r\n\r\n') + 2);
  const m = /^DKIM-Signature:((?:.*\r\n)(?:[ \t].*\r\n)*)/im.exec(head);
  expect(m, 'OpenDKIM added no DKIM-Signature').not.toBeNull();
  const tags: Record<string, string> = {};
  for (const part of m![1]!.replace(/\s+/g, '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return tags;
}

/** OpenDKIM's own verdict on a message: `opendkim -t` with the key record as its DNS data. */
async function opendkimVerdict(message: string, record: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-opendkim-t-'));
  try {
    writeFileSync(join(dir, 'dns'), `${KEY_NAME} ${record}\n`);
    writeFileSync(join(dir, 'opendkim.conf'), `Mode v\nSyslog no\nTestDNSData file:${join(dir, 'dns')}\n`);
    writeFileSync(join(dir, 'message.eml'), message, 'latin1');
    const { stdout, stderr } = await promisify(execFile)('opendkim', [
      '-x',
      join(dir, 'opendkim.conf'),
      '-vv',
      '-t',
      join(dir, 'message.eml'),
    ]);
    // "### INSHEADER: idx=0 hname='Authentication-Results' hvalue='...; dkim=pass (2048-bit key) ...'"
    const m = /\bdkim=(\w+)/.exec(`${stdout}\n${stderr}`);
    expect(m, `opendkim -t said: ${stdout}${stderr}`).not.toBeNull();
    return m![1]!;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!enabled)('POST /api/message on a message OpenDKIM signed behind Postfix', () => {
  let dns: FakeDnsServer;
  let message: string;
  /** One body byte changed. */
  let tampered: string;
  /** One byte of a signed header (To) changed, the body as signed. */
  let tamperedHeader: string;
  let tags: Record<string, string>;
  let strings: string[];

  beforeAll(async () => {
    strings = keyRecordStrings();
    dns = await startFakeDnsServer({
      zones: [
        testZone(DOMAIN, [
          { name: KEY_NAME, type: 'TXT', data: strings },
          { name: `_dmarc.${DOMAIN}`, type: 'TXT', data: ['v=DMARC1; p=reject'] },
        ]),
      ],
    });
    const queueId = await send();
    message = await delivered();
    console.info(`Postfix queued ${queueId}; delivered:\n${message}`);
    tags = signatureTags(message);
    expect(message).toContain(BODY_LINE);
    tampered = message.replace(BODY_LINE, BODY_LINE.replace('quarterly', 'quarterlY'));
    tamperedHeader = message.replace(`To: Bob <bob@${DOMAIN}>`, `To: Rob <bob@${DOMAIN}>`);
    expect(tamperedHeader).not.toBe(message);
  });

  afterAll(async () => {
    await dns?.close();
  });

  async function analyze(raw: string): Promise<MessageAnalysis> {
    // Built per test: buildTestApp closes the app when the test ends.
    const app = await buildTestApp({
      config: { dnsResolvers: [dns.udp], rateLimitExpensive: { points: 1000, seconds: 60 } },
    });
    const res = await app.inject({
      method: 'POST',
      url: '/api/message',
      headers: { 'content-type': 'message/rfc822' },
      payload: Buffer.from(raw, 'latin1'),
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as MessageAnalysis;
  }

  it('OpenDKIM signed as configured: the key and canonicalization the script set, rsa-sha256', () => {
    expect(strings.length, 'a 2048-bit key record does not fit one character-string').toBeGreaterThan(1);
    expect(strings.every((s) => Buffer.byteLength(s) <= 255)).toBe(true);
    expect(tags).toMatchObject({
      v: '1',
      a: 'rsa-sha256',
      d: DOMAIN,
      s: SELECTOR,
      c: env.NETDIAG_INTEROP_DKIM_CANONICALIZATION,
    });
    const signed = tags.h!.toLowerCase().split(':');
    expect(signed).toEqual(expect.arrayContaining(['from', 'to', 'subject', 'date']));
    // OversignHeaders From: listed once more than the message has it.
    expect(signed.filter((h) => h === 'from')).toHaveLength(2);
  });

  it('OpenDKIM itself verifies it pass, and the copies with a body or header byte changed fail', async () => {
    const record = strings.join('');
    expect(await opendkimVerdict(message, record)).toBe('pass');
    expect(await opendkimVerdict(tampered, record)).toBe('fail');
    expect(await opendkimVerdict(tamperedHeader, record)).toBe('fail');
  });

  it('netdiag: pass, with the domain, selector, algorithm, canonicalization and headers OpenDKIM signed', async () => {
    const a = await analyze(message);
    console.info(`POST /api/message: ${JSON.stringify(a.dkim)}`);
    expect(a.headers_only).toBe(false);
    expect(a.dkim).toHaveLength(1);
    const [header, body] = tags.c!.split('/');
    expect(a.dkim[0]).toMatchObject({
      index: 0,
      domain: DOMAIN,
      selector: SELECTOR,
      algorithm: 'rsa-sha256',
      canonicalization: { header, body: body ?? 'simple' },
      signed_headers: tags.h!.toLowerCase().split(':'),
      result: 'pass',
      body_hash: 'match',
      body_length: null,
      key: { name: KEY_NAME, type: 'rsa', bits: 2048, record: strings.join('') },
      aligned: true,
    });
    expect(a.dmarc.dkim_aligned).toBe(true);
    expect(a.dns_lookups).toContainEqual(
      expect.objectContaining({ name: KEY_NAME, type: 'TXT', result: 'answer' }),
    );
  });

  it('netdiag: the copy with one body byte changed fails on its body hash', async () => {
    const a = await analyze(tampered);
    expect(a.dkim).toHaveLength(1);
    expect(a.dkim[0]).toMatchObject({
      domain: DOMAIN,
      selector: SELECTOR,
      result: 'fail',
      body_hash: 'mismatch',
    });
    expect(a.dkim[0]!.reason).toMatch(/body/i);
    // The key is fetched before the hashes are compared (RFC 6376 §6.1.2-6.1.3), and every
    // signature's key lookup is in the answer (issue 34).
    expect(a.dns_lookups).toContainEqual(
      expect.objectContaining({ name: KEY_NAME, type: 'TXT', result: 'answer' }),
    );
  });

  it('netdiag: the copy with a signed header changed fails, its body hash still matching', async () => {
    const a = await analyze(tamperedHeader);
    expect(a.dkim).toHaveLength(1);
    expect(a.dkim[0]).toMatchObject({
      domain: DOMAIN,
      selector: SELECTOR,
      result: 'fail',
      body_hash: 'match',
    });
  });
});
