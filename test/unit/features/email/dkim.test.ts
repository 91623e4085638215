/**
 * DKIM keys (RFC 6376 §3.6.1, RFC 8301, RFC 8463) with their size read from
 * the key itself, the selector input, and the disclosed selector list.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { evaluateDkim, isDkimRecord, parseDkimKey } from '../../../../src/features/email/dkim.js';
import {
  COMMON_DKIM_SELECTORS,
  parseSelectors,
  selectorsToTest,
} from '../../../../src/features/email/dkim-selectors.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { DKIM_KEYS } from '../../../fixtures/email/zones.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const key = (record: string) => parseDkimKey(record);

describe('DKIM key size, parsed from the key (RFC 8301 §3.2, RFC 8463)', () => {
  it.each([
    ['2048-bit RSA (SubjectPublicKeyInfo)', `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`, 'valid', 'rsa', 2048],
    [
      '2048-bit RSA (PKCS#1, as RFC 6376 names it)',
      `v=DKIM1; p=${DKIM_KEYS.rsa2048pkcs1}`,
      'valid',
      'rsa',
      2048,
    ],
    ['1024-bit RSA', `p=${DKIM_KEYS.rsa1024}`, 'weak', 'rsa', 1024],
    ['512-bit RSA', `v=DKIM1; p=${DKIM_KEYS.rsa512}`, 'too_short', 'rsa', 512],
    ['Ed25519', `v=DKIM1; k=ed25519; p=${DKIM_KEYS.ed25519}`, 'valid', 'ed25519', 256],
  ])('%s', (_, record, state, type, bits) => {
    expect(key(record).key).toMatchObject({ state, key_type: type, key_bits: bits });
  });

  it('reads a 4096-bit key split across character-strings (with spaces inside p=)', () => {
    const der = generateKeyPairSync('rsa', { modulusLength: 4096 }).publicKey.export({
      type: 'spki',
      format: 'der',
    });
    const b64 = der.toString('base64');
    const spaced = `${b64.slice(0, 200)} ${b64.slice(200, 500)} ${b64.slice(500)}`;
    expect(key(`v=DKIM1; k=rsa; p=${spaced}`).key).toMatchObject({ state: 'valid', key_bits: 4096 });
  });

  it('an Ed25519 key published as SubjectPublicKeyInfo instead of the raw 32 bytes is unusable', () => {
    const spki = generateKeyPairSync('ed25519')
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    expect(key(`v=DKIM1; k=ed25519; p=${spki}`).key).toMatchObject({
      state: 'invalid',
      problem: 'an Ed25519 p= must be the raw 32-byte key, not 44 bytes',
    });
  });

  it('an RSA key record holding an EC key is unusable', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
      type: 'spki',
      format: 'der',
    });
    expect(key(`v=DKIM1; p=${ec.toString('base64')}`).key).toMatchObject({
      state: 'invalid',
      problem: 'p= holds a ec key, not RSA',
    });
  });

  it.each([
    ['v=DKIM1; p=', 'revoked', 'empty p=: the key is revoked'],
    ['k=rsa; v=DKIM1; p=AAAA', 'invalid', 'v= must be the first tag when present'],
    ['v=DKIM2; p=AAAA', 'invalid', 'v=DKIM2 is not DKIM1; the record must be discarded'],
    ['v=DKIM1; k=dsa; p=AAAA', 'invalid', 'k=dsa is not a key type verifiers know (rsa, ed25519)'],
    ['v=DKIM1; h=sha1; p=AAAA', 'invalid', 'h=sha1 allows only SHA-1, which must not be used'],
    ['v=DKIM1; s=tlsrpt; p=AAAA', 'invalid', 's=tlsrpt does not include email or *'],
    ['v=DKIM1; k=rsa', 'invalid', 'no p= tag (the public key is required)'],
    ['v=DKIM1; p=not*base64', 'invalid', 'p= is not base64'],
    ['v=DKIM1; p=AAAA', 'invalid', 'p= does not parse as an RSA public key'],
    ['v=DKIM1; p=AAAA; p=BBBB', 'invalid', 'tag p appears more than once'],
  ])('%s → %s', (record, state, problem) => {
    expect(key(record).key).toMatchObject({ state, problem });
  });

  it('notes testing mode and a SHA-1 allowance', () => {
    const result = key(`v=DKIM1; h=sha1:sha256; t=y:s; p=${DKIM_KEYS.rsa2048}`);
    expect(result.key).toMatchObject({ state: 'valid', testing: true });
    expect(result.findings.map((f) => f.message)).toEqual([
      'h= still allows SHA-1, which must not be used.',
      't=y: the key is in testing mode; verifiers treat failures as unsigned.',
    ]);
  });

  it('recognizes key records among other TXT records', () => {
    expect(isDkimRecord('v=DKIM1; p=AAAA')).toBe(true);
    expect(isDkimRecord('k=rsa; p=AAAA')).toBe(true);
    expect(isDkimRecord('google-site-verification=abc')).toBe(false);
  });
});

describe('DKIM selectors', () => {
  it('parses up to 5 comma-separated selectors, lower-cased and without repeats', () => {
    expect(parseSelectors(undefined)).toEqual({ selectors: [] });
    expect(parseSelectors('S1, s1 ,k2.dept,my_key-2')).toEqual({ selectors: ['s1', 'k2.dept', 'my_key-2'] });
  });

  it.each([
    ['a,b,c,d,e,f', 'lists more than 5 selectors'],
    ['', 'needs 1–63 characters per selector'],
    ['a,,b', 'needs 1–63 characters per selector'],
    ['x'.repeat(64), 'needs 1–63 characters per selector'],
    [
      'bad selector',
      '"bad selector" may only contain letters, digits, ".", "_" and "-", with no empty label',
    ],
    ['a..b', '"a..b" may only contain letters, digits, ".", "_" and "-", with no empty label'],
    ['.lead', '".lead" may only contain letters, digits, ".", "_" and "-", with no empty label'],
  ])('%j is refused: %s', (input, error) => {
    expect(parseSelectors(input)).toEqual({ error });
  });

  it('tests the caller’s selectors first, then the disclosed list without repeats', () => {
    const order = selectorsToTest(['mykey', 'google']);
    expect(order.slice(0, 3)).toEqual(['mykey', 'google', 'selector1']);
    expect(order).toHaveLength(COMMON_DKIM_SELECTORS.length + 1);
    expect(new Set(order).size).toBe(order.length);
  });

  it('the disclosed list is the one issue 5 names, in its order', () => {
    expect(COMMON_DKIM_SELECTORS.join(',')).toBe(
      'google,selector1,selector2,default,s1,s2,k1,k2,k3,dkim,mail,smtp,mandrill,everlytickey1,everlytickey2,mxvault,sig1,zoho,protonmail,protonmail2,protonmail3,fm1,fm2,fm3,x,pm,cm',
    );
  });
});

describe('DKIM evaluation across selectors', () => {
  const Z = 'dk.test';
  const run = (rows: [string, string, unknown][], fail?: (name: string) => boolean) =>
    evaluateDkim(
      Z,
      selectorsToTest([]),
      createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { fail: fail && ((n) => fail(n)) })),
    );

  it('the weakest published key decides the strength; a key under 1024 bits fails the check', async () => {
    const result = await run([
      ['google._domainkey.dk.test', 'TXT', `v=DKIM1; p=${DKIM_KEYS.rsa2048}`],
      ['s1._domainkey.dk.test', 'TXT', `v=DKIM1; p=${DKIM_KEYS.rsa512}`],
    ]);
    expect(result).toMatchObject({ state: 'found', validKey: true, weakest: 'too_short', status: 'fail' });
    expect(result.selectors.map((s) => s.selector)).toEqual(['google', 's1']);
  });

  it('a revoked key alone is no valid key', async () => {
    const result = await run([['selector1._domainkey.dk.test', 'TXT', 'v=DKIM1; p=']]);
    expect(result).toMatchObject({ state: 'found', validKey: false, weakest: null, status: 'fail' });
    expect(result.summary).toBe('DKIM records were found, but none holds a usable key.');
  });

  it('follows a CNAME-delegated selector', async () => {
    const zones = [
      TLD_ZONE,
      makeZone(Z, [['selector1._domainkey.dk.test', 'CNAME', 'selector1-dk._domainkey.tenant.test']]),
      makeZone('tenant.test', [
        ['selector1-dk._domainkey.tenant.test', 'TXT', `v=DKIM1; k=rsa; p=${DKIM_KEYS.rsa2048}`],
      ]),
    ];
    const result = await evaluateDkim(Z, selectorsToTest([]), createMailDns(zoneResolver(zones)));
    expect(result.selectors).toMatchObject([
      { selector: 'selector1', result: 'key', aliases: ['selector1-dk._domainkey.tenant.test'] },
    ]);
  });

  it('no key found and some lookups failed: error, not "no DKIM"', async () => {
    const result = await run([], (name) => name.startsWith('google.'));
    expect(result).toMatchObject({ state: 'error', status: 'error' });
    expect(result.selectors).toMatchObject([{ selector: 'google', result: 'error' }]);
  });
});
