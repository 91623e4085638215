/**
 * POST /api/message end to end: a message signed at test time (mailauth's dkimSign, keys made
 * here) judged against a fake DNS server holding its key, SPF and DMARC records; the forms a
 * message comes in (raw, JSON, pasted with bare LF, headers alone); what is refused (empty,
 * another content type, too large — over a real socket, the answer read by a client still
 * uploading); and privacy: the message's text in no log line, no cache entry, no cacheable
 * answer.
 */
import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { dkimSign } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { MemoryCache } from '../../src/cache/memory.js';
import type { Cache } from '../../src/cache/types.js';
import { testConfig } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { characterStrings, testZone } from '../fakes/dns-zones.js';
import { capturingLogger } from '../helper.js';

const DOMAIN = 'message.test';
const SELECTOR = 'sel1';
/** A public address (never contacted: SPF only compares it). */
const CLIENT = '93.184.215.14';
const TOKEN = 'zebra-quokka-7f3e91';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEY_RECORD = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

const MESSAGE = [
  `Received: from mail.${DOMAIN} (mail.${DOMAIN} [${CLIENT}])`,
  `\tby mx.receiver.test with ESMTPS id 4Xyz (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384);`,
  '\tSat, 28 Nov 2026 10:00:05 +0000',
  `Received: by mail.${DOMAIN} (Postfix, from userid 1000) id 1A2B3C; Sat, 28 Nov 2026 10:00:01 +0000`,
  `Return-Path: <alice@${DOMAIN}>`,
  `From: Alice <alice@${DOMAIN}>`,
  'To: bob@receiver.test',
  `Subject: the ${TOKEN} report`,
  'Date: Sat, 28 Nov 2026 10:00:00 +0000',
  `Message-ID: <1@${DOMAIN}>`,
  '',
  `Hello Bob, the secret word is ${TOKEN}.`,
  '',
].join('\r\n');

let signed: string;
let dns: FakeDnsServer;
const stored: string[] = [];
const log = capturingLogger('trace');
let app: FastifyInstance;

/** The one cache, recording every value stored in it. */
function recordingCache(): Cache {
  const inner = new MemoryCache();
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'set' && typeof value === 'function')
        return (key: string, v: unknown, ttl: number) => {
          stored.push(`${key} ${JSON.stringify(v)}`);
          return (value as Cache['set']).call(target, key, v, ttl);
        };
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

beforeAll(async () => {
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  // mailauth signs what signatureData lists (the top-level key fields are its defaults).
  const result = await dkimSign(MESSAGE, {
    signingDomain: DOMAIN,
    selector: SELECTOR,
    privateKey: pem,
    signatureData: [{ signingDomain: DOMAIN, selector: SELECTOR, privateKey: pem }],
  });
  if (!result.signatures) throw new Error(`not signed: ${JSON.stringify(result.errors)}`);
  signed = result.signatures + MESSAGE;
  dns = await startFakeDnsServer({
    zones: [
      testZone(DOMAIN, [
        { name: `${SELECTOR}._domainkey.${DOMAIN}`, type: 'TXT', data: characterStrings(KEY_RECORD) },
        { name: DOMAIN, type: 'TXT', data: [`v=spf1 ip4:${CLIENT} -all`] },
        { name: `_dmarc.${DOMAIN}`, type: 'TXT', data: ['v=DMARC1; p=reject; adkim=s'] },
      ]),
    ],
  });
  app = await buildApp(
    testConfig({
      dnsResolvers: [dns.udp],
      messageMaxBytes: 64 * 1024,
      rateLimitExpensive: { points: 1_000, seconds: 60 },
      loadShedEventLoopDelayMs: 0,
    }),
    { logger: log.logger, cache: recordingCache() },
  );
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await dns?.close();
});

const post = (payload: string | Buffer, type = 'message/rfc822', url = '/api/message') =>
  app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });

describe('POST /api/message', () => {
  it('a signed message from its own server: DKIM pass and aligned, SPF pass, DMARC pass, the hops', async () => {
    const res = await post(signed);
    expect(res.statusCode, res.body).toBe(200);
    const a = res.json();
    expect(a.verdict.status).toBe('authenticated');
    expect(a.dkim).toHaveLength(1);
    expect(a.dkim[0]).toMatchObject({
      domain: DOMAIN,
      selector: SELECTOR,
      result: 'pass',
      body_hash: 'match',
      aligned: true,
    });
    expect(a.envelope).toMatchObject({ ip: CLIENT, source: 'received', received_index: 0 });
    expect(a.spf).toMatchObject({ result: 'pass', ip: CLIENT });
    expect(a.dmarc).toMatchObject({
      result: 'pass',
      policy: 'reject',
      dkim_aligned: true,
      spf_aligned: true,
      disposition: 'none',
    });
    expect(a.received.map((h: { delay_seconds: number | null }) => h.delay_seconds)).toEqual([4, null]);
    expect(a.received[0].tls).toEqual({ version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' });
    expect(a.dns_lookups).toContainEqual({
      name: `${SELECTOR}._domainkey.${DOMAIN}`,
      type: 'TXT',
      result: 'answer',
      purpose: 'dkim/arc key',
    });
    expect(a.dns_lookups).toContainEqual(
      expect.objectContaining({ name: `_dmarc.${DOMAIN}`, purpose: 'dmarc' }),
    );
    expect(a.source_id).toBeTruthy();
  });

  it('reads pasted text (bare LF) and JSON as the raw message', async () => {
    const lf = await post(signed.replace(/\r\n/g, '\n'), 'text/plain');
    const json = await app.inject({ method: 'POST', url: '/api/message', payload: { message: signed } });
    for (const res of [lf, json]) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().dkim[0].result).toBe('pass');
    }
  });

  it('headers alone: the signature checked over the headers, the body hash not checked, not a failure', async () => {
    const headers = signed.slice(0, signed.indexOf('\r\n\r\n') + 2);
    const a = (await post(headers)).json();
    expect(a.headers_only).toBe(true);
    expect(a.dkim[0]).toMatchObject({ result: 'pass', body_hash: 'not_checked' });
  });

  it('a changed body fails DKIM, and with SPF from another address DMARC fails at p=reject', async () => {
    const tampered = signed.replace('the secret word', 'the public word');
    const a = (await post(tampered, 'message/rfc822', '/api/message?ip=198.18.0.1')).json();
    expect(a.dkim[0]).toMatchObject({ result: 'fail', body_hash: 'mismatch' });
    expect(a.envelope).toMatchObject({ ip: '198.18.0.1', source: 'given' });
    expect(a.dmarc).toMatchObject({ result: 'fail', disposition: 'reject' });
    expect(a.verdict.status).toBe('not_authenticated');
    expect(a.findings.map((f: { code: string }) => f.code)).toEqual(
      expect.arrayContaining(['dkim_fail', 'dmarc_fail']),
    );
  });

  it('refuses an empty message, another content type, and a bad JSON field, naming what', async () => {
    const empty = await post('\r\n \r\n');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toMatch(/body is empty/);
    const xml = await post('<a/>', 'application/xml');
    expect(xml.statusCode).toBe(415);
    expect(xml.json().error).toMatch(/message\/rfc822/);
    const json = await app.inject({ method: 'POST', url: '/api/message', payload: { message: '' } });
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toMatch(/message/);
  });

  it('never logs, caches or lets anyone cache the message', async () => {
    const res = await post(signed);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-service-cache']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const lines = log.lines();
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(stored.join('\n')).not.toContain(TOKEN);
    expect(stored.join('\n')).not.toContain('secret word');
  });
});

/** Sends a request over a real socket, the body written as fast as it goes, and reads the whole answer. */
function rawRequest(port: number, head: string, body: Buffer | Buffer[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      for (const part of [body].flat()) socket.write(part);
    });
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString();
    });
    socket.on('end', () => resolve(got));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    setTimeout(() => socket.end(), 3_000);
  });
}

const errorOf = (response: string) =>
  JSON.parse(
    response
      .slice(response.indexOf('\r\n\r\n') + 4)
      .trim()
      .split('\r\n')
      .find((l) => l.startsWith('{')) ?? '{}',
  );

describe('POST /api/message over a socket: a message over MESSAGE_MAX_BYTES', () => {
  let port: number;
  beforeAll(async () => {
    port = Number(new URL(await app.listen({ host: '127.0.0.1', port: 0 })).port);
  });

  it('is a 413 JSON answer the uploading client reads, decided from Content-Length', async () => {
    const body = Buffer.alloc(1024 * 1024, 0x61);
    const response = await rawRequest(
      port,
      `POST /api/message HTTP/1.1\r\nHost: x\r\nContent-Type: message/rfc822\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(errorOf(response).error).toMatch(/larger than 65536 bytes \(MESSAGE_MAX_BYTES\)/);
  });

  it('is a 413 too without Content-Length, once a chunked body passes the cap', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x62);
    const chunks = Array.from({ length: 8 }, () =>
      Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
    );
    chunks.push(Buffer.from('0\r\n\r\n'));
    const response = await rawRequest(
      port,
      'POST /api/message HTTP/1.1\r\nHost: x\r\nContent-Type: message/rfc822\r\nTransfer-Encoding: chunked\r\n\r\n',
      chunks,
    );
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
  });
});
