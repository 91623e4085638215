/**
 * DKIM through authenticateMessage: RFC 8463 Appendix A (both of its signatures), and messages
 * signed here with keys made here (mailauth's documented dkimSign), good and broken. Every
 * result and reason asserted is one the RFC 6376/8301/8601 mapping decides.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { authenticateMessage, type KeyResolver } from '../../../src/message/authenticate.js';

const NOW = new Date('2024-06-01T00:00:00Z');

// RFC 8463 Appendix A (A.2 records, A.3 message), as published.
const RFC8463 = [
  'DKIM-Signature: v=1; a=ed25519-sha256; c=relaxed/relaxed;',
  ' d=football.example.com; i=@football.example.com;',
  ' q=dns/txt; s=brisbane; t=1528637909; h=from : to :',
  ' subject : date : message-id : from : subject : date;',
  ' bh=2jUSOH9NhtVGCQWNr9BrIAPreKQjO6Sn7XIkfJVOzv8=;',
  ' b=/gCrinpcQOoIfuHNQIbq4pgh9kyIK3AQUdt9OdqQehSwhEIug4D11Bus',
  ' Fa3bT3FY5OsU7ZbnKELq+eXdp1Q1Dw==',
  'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed;',
  ' d=football.example.com; i=@football.example.com;',
  ' q=dns/txt; s=test; t=1528637909; h=from : to : subject :',
  ' date : message-id : from : subject : date;',
  ' bh=2jUSOH9NhtVGCQWNr9BrIAPreKQjO6Sn7XIkfJVOzv8=;',
  ' b=F45dVWDfMbQDGHJFlXUNB2HKfbCeLRyhDXgFpEL8GwpsRe0IeIixNTe3',
  ' DhCVlUrSjV4BwcVcOF6+FF3Zo9Rpo1tFOeS9mPYQTnGdaSGsgeefOsk2Jz',
  ' dA+L10TeYt9BgDfQNZtKdN1WO//KgIqXP7OdEFE4LjFYNcUxZQ4FADY+8=',
  'From: Joe SixPack <joe@football.example.com>',
  'To: Suzie Q <suzie@shopping.example.net>',
  'Subject: Is dinner ready?',
  'Date: Fri, 11 Jul 2003 21:00:37 -0700 (PDT)',
  'Message-ID: <20030712040037.46341.5F8J@football.example.com>',
  '',
  'Hi.',
  '',
  'We lost the game.  Are you hungry yet?',
  '',
  'Joe.',
  '',
].join('\r\n');
const RFC8463_ZONE: Record<string, string> = {
  'brisbane._domainkey.football.example.com':
    'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
  'test._domainkey.football.example.com':
    'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDkHlOQoBTzWRiGs5V6NpP3idY6Wk08a5qhdR6wy5bdOKb2jLQiY/J16JYi0Qvx/byYzCNb3W91y3FutACDfzwQ/BC/e/8uBsCR+yz1Lxj+PL6lHvqMKrM3rG4hstT5QjvHO9PzoxZyVYLzBfO2EeC3Ip3G+2kryOTIKT+l/K4w3QIDAQAB',
};

/** A zone: a string is a TXT record (split in 255-octet strings), an Error is what the query throws. */
function zoneResolver(zone: Record<string, string | Error>, asked: string[] = []): KeyResolver {
  return async (name) => {
    asked.push(name);
    const v = zone[name.toLowerCase()];
    if (v instanceof Error) throw v;
    if (v === undefined) throw Object.assign(new Error('NXDOMAIN'), { code: 'ENOTFOUND' });
    return [v.match(/.{1,255}/g) ?? ['']];
  };
}

const dnsError = (code: string) => Object.assign(new Error(`query failed: ${code}`), { code });

function rsa(bits: number) {
  return generateKeyPairSync('rsa', { modulusLength: bits });
}
function record(pub: KeyObject, type: 'rsa' | 'ed25519'): string {
  const der = pub.export({ type: 'spki', format: 'der' });
  return `v=DKIM1; k=${type}; p=${(type === 'ed25519' ? der.subarray(-32) : der).toString('base64')}`;
}
function pem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

const RSA2048 = rsa(2048);
const RSA1024 = rsa(1024);
const RSA512 = rsa(512);
const ED = generateKeyPairSync('ed25519');
const ZONE: Record<string, string | Error> = {
  'r2048._domainkey.example.com': record(RSA2048.publicKey, 'rsa'),
  'r1024._domainkey.example.com': record(RSA1024.publicKey, 'rsa'),
  'r512._domainkey.example.com': record(RSA512.publicKey, 'rsa'),
  'ed._domainkey.example.com': record(ED.publicKey, 'ed25519'),
  'revoked._domainkey.example.com': 'v=DKIM1; k=rsa; p=',
  'v2._domainkey.example.com': `v=DKIM2; k=rsa; p=${record(RSA2048.publicKey, 'rsa').split('p=')[1]}`,
  'sha1only._domainkey.example.com': `v=DKIM1; k=rsa; h=sha1; p=${record(RSA2048.publicKey, 'rsa').split('p=')[1]}`,
  'servfail._domainkey.example.com': dnsError('ESERVFAIL'),
  'nodata._domainkey.example.com': dnsError('ENODATA'),
};

const MESSAGE = [
  'From: Alice Example <alice@example.com>',
  'To: bob@example.org',
  'Subject: a subject that is long enough',
  '  to be folded over two lines',
  'Date: Sat, 01 Jun 2024 00:00:00 +0000',
  'Message-ID: <m1@example.com>',
  '',
  'Hello Bob,',
  '',
  'this is the body.  With  two  spaces.',
  '',
].join('\r\n');

interface SignAs {
  selector: string;
  key: KeyObject;
  canonicalization?: string;
  algorithm?: string;
  maxBodyLength?: number;
  expires?: Date;
  signTime?: Date;
}

async function sign(message: string, signers: SignAs[]): Promise<string> {
  const r = await dkimSign(message, {
    signingDomain: 'example.com',
    selector: signers[0]?.selector ?? '',
    privateKey: '',
    // t= and x= are options of the whole call (mailauth's dkim-signer.js), not of each signature.
    signTime: signers[0]?.signTime ?? new Date('2024-05-31T00:00:00Z'),
    ...(signers[0]?.expires ? { expires: signers[0].expires } : {}),
    signatureData: signers.map((s) => ({
      signingDomain: 'example.com',
      selector: s.selector,
      privateKey: pem(s.key),
      canonicalization: s.canonicalization ?? 'relaxed/relaxed',
      ...(s.algorithm ? { algorithm: s.algorithm } : {}),
      ...(s.maxBodyLength !== undefined ? { maxBodyLength: s.maxBodyLength } : {}),
    })),
  });
  expect(r.errors).toEqual([]);
  return r.signatures + message;
}

const run = (
  msg: string,
  opts: { headersOnly?: boolean; zone?: Record<string, string | Error>; asked?: string[] } = {},
) =>
  authenticateMessage(Buffer.from(msg, 'latin1'), {
    resolver: zoneResolver(opts.zone ?? ZONE, opts.asked),
    now: NOW,
    headersOnly: opts.headersOnly ?? false,
  });

const headersOf = (msg: string) => msg.slice(0, msg.indexOf('\r\n\r\n') + 2);

describe('DKIM: RFC 8463 Appendix A', () => {
  it('verifies both signatures (Ed25519 and RSA) of the published message', async () => {
    const r = await run(RFC8463, { zone: RFC8463_ZONE });
    expect(r.dkim.map((d) => [d.selector, d.algorithm, d.result, d.body_hash])).toEqual([
      ['brisbane', 'ed25519-sha256', 'pass', 'match'],
      ['test', 'rsa-sha256', 'pass', 'match'],
    ]);
    expect(r.dkim[0]?.key).toMatchObject({
      name: 'brisbane._domainkey.football.example.com',
      type: 'ed25519',
      bits: 256,
    });
    expect(r.dkim[1]?.key).toMatchObject({
      type: 'rsa',
      bits: 1024,
      record: RFC8463_ZONE['test._domainkey.football.example.com'],
    });
    expect(r.dkim[0]).toMatchObject({
      identity: '@football.example.com',
      canonicalization: { header: 'relaxed', body: 'relaxed' },
      signed_headers: ['from', 'to', 'subject', 'date', 'message-id', 'from', 'subject', 'date'],
      signed_at: new Date(1528637909 * 1000).toISOString(),
      expires_at: null,
      body_length: null,
      aligned: null,
      reason: null,
    });
    expect(r.headerFrom).toEqual({ address: 'joe@football.example.com', domain: 'football.example.com' });
  });

  it('passes both on the headers alone, the body hash not checked', async () => {
    const r = await run(headersOf(RFC8463), { zone: RFC8463_ZONE, headersOnly: true });
    expect(r.dkim.map((d) => [d.result, d.body_hash])).toEqual([
      ['pass', 'not_checked'],
      ['pass', 'not_checked'],
    ]);
    expect(r.dkim[1]?.key?.bits).toBe(1024);
  });

  it('fails both when the body changed, and says the headers still verify', async () => {
    const r = await run(RFC8463.replace('hungry', 'thirsty'), { zone: RFC8463_ZONE });
    for (const d of r.dkim) {
      expect(d.result).toBe('fail');
      expect(d.body_hash).toBe('mismatch');
      expect(d.reason).toMatch(/body hash did not verify; the signed header fields do verify/);
    }
  });
});

describe('DKIM: messages signed here', () => {
  it('passes RSA 2048 and 1024, Ed25519, simple and relaxed, l=, folded headers, several signatures', async () => {
    const signed = await sign(MESSAGE, [
      { selector: 'r2048', key: RSA2048.privateKey, canonicalization: 'relaxed/relaxed' },
      { selector: 'r1024', key: RSA1024.privateKey, canonicalization: 'simple/simple' },
      { selector: 'ed', key: ED.privateKey, canonicalization: 'relaxed/simple', algorithm: 'ed25519-sha256' },
      { selector: 'r2048', key: RSA2048.privateKey, canonicalization: 'simple/relaxed', maxBodyLength: 12 },
    ]);
    const r = await run(signed);
    expect(r.dkim.map((d) => [d.selector, d.result, d.body_hash, d.key?.bits])).toEqual([
      ['r2048', 'pass', 'match', 2048],
      ['r1024', 'pass', 'match', 1024],
      ['ed', 'pass', 'match', 256],
      ['r2048', 'pass', 'match', 2048],
    ]);
    expect(r.dkim.map((d) => `${d.canonicalization.header}/${d.canonicalization.body}`)).toEqual([
      'relaxed/relaxed',
      'simple/simple',
      'relaxed/simple',
      'simple/relaxed',
    ]);
    expect(r.dkim[3]?.body_length).toBe(12);
    expect(r.notes.join(' ')).toMatch(/l=12 leaves \d+ body octets unsigned/);
    expect(r.dkim[0]?.signed_headers).toContain('subject');
  });

  it('fails a signature whose signed header was changed', async () => {
    const signed = await sign(MESSAGE, [{ selector: 'r2048', key: RSA2048.privateKey }]);
    const r = await run(signed.replace('Subject: a subject', 'Subject: another subject'));
    expect(r.dkim[0]).toMatchObject({ result: 'fail', body_hash: 'match' });
    expect(r.dkim[0]?.reason).toMatch(/signed header fields does not verify/);
    const headersOnly = await run(headersOf(signed).replace('Subject: a subject', 'Subject: b subject'), {
      headersOnly: true,
    });
    expect(headersOnly.dkim[0]).toMatchObject({ result: 'fail', body_hash: 'not_checked' });
  });

  it('fails a signature whose body was changed; simple canonicalization sees whitespace', async () => {
    const signed = await sign(MESSAGE, [
      { selector: 'r2048', key: RSA2048.privateKey, canonicalization: 'relaxed/relaxed' },
      { selector: 'r1024', key: RSA1024.privateKey, canonicalization: 'simple/simple' },
    ]);
    const r = await run(signed.replace('With  two', 'With two'));
    expect(r.dkim.map((d) => [d.result, d.body_hash])).toEqual([
      ['pass', 'match'],
      ['fail', 'mismatch'],
    ]);
    const changed = await run(signed.replace('the body', 'the bodies'));
    expect(changed.dkim.every((d) => d.result === 'fail' && d.body_hash === 'mismatch')).toBe(true);
  });

  it('passes a good message on its headers alone: body hash not_checked, never a failure', async () => {
    const signed = await sign(MESSAGE, [
      { selector: 'r2048', key: RSA2048.privateKey },
      { selector: 'ed', key: ED.privateKey, algorithm: 'ed25519-sha256' },
    ]);
    const asked: string[] = [];
    const r = await run(headersOf(signed), { headersOnly: true, asked });
    expect(r.dkim.map((d) => [d.result, d.body_hash, d.reason])).toEqual([
      ['pass', 'not_checked', null],
      ['pass', 'not_checked', null],
    ]);
    expect(r.dkim[0]?.key?.record).toBe(ZONE['r2048._domainkey.example.com']);
    // One question per key record, although the probe asks mailauth again.
    expect(asked.sort()).toEqual(['ed._domainkey.example.com', 'r2048._domainkey.example.com']);
    // Without headersOnly the same text is a message with an empty body: that is a failure.
    const whole = await run(headersOf(signed));
    expect(whole.dkim.map((d) => d.result)).toEqual(['fail', 'fail']);
  });

  it('an expired x= is neutral (RFC 6376 §3.5, §6.1.1), and `now` is the clock', async () => {
    const signed = await sign(MESSAGE, [
      {
        selector: 'r2048',
        key: RSA2048.privateKey,
        signTime: new Date('2024-05-01T00:00:00Z'),
        expires: new Date('2024-05-02T00:00:00Z'),
      },
    ]);
    const r = await run(signed);
    expect(r.dkim[0]).toMatchObject({ result: 'neutral', expires_at: '2024-05-02T00:00:00.000Z' });
    expect(r.dkim[0]?.reason).toMatch(/expired/);
    const only = await run(headersOf(signed), { headersOnly: true });
    expect(only.dkim[0]?.result).toBe('neutral');
    const before = await authenticateMessage(Buffer.from(signed), {
      resolver: zoneResolver(ZONE),
      now: new Date('2024-05-01T12:00:00Z'),
      headersOnly: false,
    });
    expect(before.dkim[0]?.result).toBe('pass');
  });

  it('says why a key cannot be used: revoked, missing, wrong version, h= without the hash, DNS failure, short', async () => {
    const cases: [string, string, RegExp][] = [
      ['revoked', 'neutral', /key revoked: the key record revoked\._domainkey\.example\.com has an empty p=/],
      ['absent', 'neutral', /no key: the key record absent\._domainkey\.example\.com does not exist/],
      ['nodata', 'neutral', /no key/],
      ['v2', 'neutral', /v= other than DKIM1/],
      ['sha1only', 'neutral', /h= does not allow/],
      [
        'servfail',
        'temperror',
        /DNS failure: ESERVFAIL fetching the key record servfail\._domainkey\.example\.com/,
      ],
      ['r512', 'policy', /shorter than 1024 bits/],
    ];
    for (const [selector, result, reason] of cases) {
      const key = selector === 'r512' ? RSA512.privateKey : RSA2048.privateKey;
      const signed = await sign(MESSAGE, [{ selector, key }]);
      for (const headersOnly of [false, true]) {
        const r = await run(headersOnly ? headersOf(signed) : signed, { headersOnly });
        expect([selector, headersOnly, r.dkim[0]?.result], String(r.dkim[0]?.reason)).toEqual([
          selector,
          headersOnly,
          result,
        ]);
        expect(r.dkim[0]?.reason).toMatch(reason);
      }
    }
    const short = await run(await sign(MESSAGE, [{ selector: 'r512', key: RSA512.privateKey }]));
    expect(short.dkim[0]?.key).toMatchObject({ type: 'rsa', bits: 512 });
    const revoked = await run(await sign(MESSAGE, [{ selector: 'revoked', key: RSA2048.privateKey }]));
    expect(revoked.dkim[0]?.key).toMatchObject({ record: 'v=DKIM1; k=rsa; p=', bits: null });
  });

  it('rsa-sha1 is policy (RFC 8301 §3.1), with the reason', async () => {
    const signed = await sign(MESSAGE, [
      { selector: 'r2048', key: RSA2048.privateKey, algorithm: 'rsa-sha1' },
    ]);
    const r = await run(signed);
    expect(r.dkim[0]).toMatchObject({ algorithm: 'rsa-sha1', result: 'policy' });
    expect(r.dkim[0]?.reason).toMatch(/rsa-sha1/);
  });

  it('reports signatures that cannot be processed: i= outside d=, unknown algorithm, missing tags', async () => {
    const signed = await sign(MESSAGE, [{ selector: 'r2048', key: RSA2048.privateKey }]);
    const [sig, rest] = [signed.slice(0, signed.indexOf('From:')), signed.slice(signed.indexOf('From:'))];
    const variants: [string, RegExp][] = [
      [sig.replace('d=example.com;', 'd=example.com; i=@elsewhere.example;'), /i= is not within d=/],
      [sig.replace('a=rsa-sha256', 'a=rsa-md5'), /algorithm verifiers do not know/],
      [sig.replace(/ bh=[^;]+;/, ''), /required tag/],
      [sig.replace('v=1', 'v=2'), /v= is not 1/],
    ];
    for (const [bad, reason] of variants) {
      const r = await run(bad + rest);
      expect(r.dkim).toHaveLength(1);
      expect(['neutral', 'permerror']).toContain(r.dkim[0]?.result);
      expect(r.dkim[0]?.reason).toMatch(reason);
    }
  });

  it('verifies the first signatures only, and says what was left out', async () => {
    const signers = Array.from({ length: 12 }, () => ({
      selector: 'ed',
      key: ED.privateKey,
      algorithm: 'ed25519-sha256',
    }));
    const signed = await sign(MESSAGE, signers);
    const r = await authenticateMessage(Buffer.from(signed), {
      resolver: zoneResolver(ZONE),
      now: NOW,
      headersOnly: false,
      maxSignatures: 10,
    });
    expect(r.dkim).toHaveLength(10);
    expect(r.dkim.every((d) => d.result === 'pass')).toBe(true);
    expect(r.notes.join(' ')).toMatch(/12 DKIM-Signature fields: the first 10 were verified, 2 left out/);
  });

  it('no signature: no entries, and ARC none', async () => {
    const r = await run(MESSAGE);
    expect(r.dkim).toEqual([]);
    expect(r.arc).toEqual({ result: 'none', instances: 0, chain: [], broken_at: null, reason: null });
    expect(r.headerFrom).toEqual({ address: 'alice@example.com', domain: 'example.com' });
  });
});
