/**
 * netdiag/client/words, the site's and the CLI's one vocabulary: the formats whose edges are
 * easy to get wrong (time zones, plural forms, the unit each duration is rounded to).
 */
import { describe, expect, it } from 'vitest';
import { capText, inspectVerdict, rdapVerdict } from '../../../src/client/verdicts.js';
import {
  certificateDaysTone,
  commonName,
  daysUntil,
  expiryText,
  formatDate,
  formatDateTime,
  formatMs,
  formatSeconds,
  keyExchangeText,
  keyText,
  plural,
  relativeDays,
} from '../../../src/client/words.js';

describe('netdiag/client/words', () => {
  it('writes dates in UTC, and passes through what is not one', () => {
    expect(formatDate('2026-03-01T23:30:00-05:00')).toBe('2026-03-02');
    expect(formatDateTime('2026-03-01T23:30:00-05:00')).toBe('2026-03-02 04:30 UTC');
    expect(formatDate('soon')).toBe('soon');
    expect(formatDate(null)).toBe('—');
  });

  it('counts whole days and says them in the largest unit that reads well', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(daysUntil('2026-01-31T12:00:00Z', now)).toBe(30);
    expect(daysUntil('2025-12-31T12:00:00Z', now)).toBe(-1);
    expect(relativeDays(0)).toBe('today');
    expect(relativeDays(1)).toBe('in 1 day');
    expect(relativeDays(-59)).toBe('59 days ago');
    expect(relativeDays(90)).toBe('in 3 months');
    expect(relativeDays(-800)).toBe('2 years ago');
    expect(expiryText(-3)).toBe('expired 3 days ago');
  });

  it('rounds durations to the unit shown', () => {
    expect(formatSeconds(45)).toBe('45 s');
    expect(formatSeconds(300)).toBe('5 min');
    expect(formatSeconds(5400)).toBe('1.5 h');
    expect(formatSeconds(172_800)).toBe('2 d');
    expect(formatMs(12.4)).toBe('12 ms');
    expect(formatMs(1530)).toBe('1.5 s');
    expect(plural(1, 'host')).toBe('1 host');
    expect(plural(1200, 'query', 'queries')).toBe('1,200 queries');
  });

  it('names certificates and keys as people recognise them', () => {
    expect(commonName('CN=example.com, O=Example')).toBe('example.com');
    expect(commonName('O=No Common Name')).toBe('O=No Common Name');
    expect(keyText({ type: 'RSA', bits: 2048 })).toBe('RSA 2048 bits');
    expect(keyExchangeText(null)).toBe('not ephemeral');
    expect([13, 14, 29, 30].map((d) => certificateDaysTone(d))).toEqual(['bad', 'warn', 'warn', 'ok']);
    // A certificate clients reject: its days are no comfort, never green (issue 31); expired stays red.
    expect(certificateDaysTone(396, 'rejected')).toBe('muted');
    expect(certificateDaysTone(-3, 'rejected')).toBe('bad');
    expect(certificateDaysTone(396, 'trusted')).toBe('ok');
  });
});

describe('the one sentence a view opens with (issue 31)', () => {
  const NOW = Date.parse('2026-11-28T12:00:00Z');
  const domain = (expiration: string | undefined) =>
    ({
      target: 'quillsecure.example',
      registry: {
        object_class: 'domain',
        nameservers: [],
        events: { registration: '2019-05-01T00:00:00Z', ...(expiration ? { expiration } : {}) },
        entities: { registrar: { name: 'Example Registrar, Inc.' } },
      },
    }) as unknown as Parameters<typeof rdapVerdict>[0];

  it('RDAP: who holds the domain and until when, amber within a month of expiry, red after', () => {
    expect(rdapVerdict(domain('2027-05-01T00:00:00Z'), NOW)).toEqual({
      tone: 'ok',
      text: 'quillsecure.example is registered through Example Registrar, Inc. since 2019-05-01; it expires in 5 months (2027-05-01).',
    });
    expect(rdapVerdict(domain('2026-12-10T00:00:00Z'), NOW).tone).toBe('warn');
    expect(rdapVerdict(domain('2026-11-01T00:00:00Z'), NOW).tone).toBe('bad');
    expect(rdapVerdict(domain(undefined), NOW).text).toBe(
      'quillsecure.example is registered through Example Registrar, Inc. since 2019-05-01.',
    );
    expect(rdapVerdict({ target: 'gone.example', registry: null } as never).text).toBe(
      'No registration data for gone.example.',
    );
  });

  const site = (over: Record<string, unknown>) =>
    ({
      http: { status: 'ok', final: { url: 'https://www.example/', status: 200 }, redirects_to_https: true },
      security_headers: { grade: 'B' },
      tls: { status: 'ok', verdict: { status: 'trusted', summary: 'Trusted by browsers for www.example.' } },
      ...over,
    }) as unknown as Parameters<typeof inspectVerdict>[0];

  it('inspect: an answer over HTTPS a browser accepts, or the first thing in the way', () => {
    expect(inspectVerdict(site({}))).toEqual({
      tone: 'ok',
      text: 'https://www.example/ answers 200 over HTTPS with a trusted certificate; security headers grade B.',
    });
    const rejected = inspectVerdict(
      site({
        tls: {
          status: 'ok',
          verdict: { status: 'rejected', summary: 'Browsers reject this certificate: it is self-signed.' },
        },
      }),
    );
    expect(rejected).toEqual({
      tone: 'bad',
      text: 'https://www.example/ answers 200, but browsers reject this certificate: it is self-signed.',
    });
    expect(
      inspectVerdict(
        site({
          http: {
            status: 'ok',
            final: { url: 'http://www.example/', status: 200 },
            redirects_to_https: false,
          },
          tls: undefined,
        }),
      ),
    ).toEqual({
      tone: 'warn',
      text: 'http://www.example/ answers 200, but plain HTTP is not redirected to HTTPS.',
    });
    expect(
      inspectVerdict(site({ http: { status: 'error', final: null, error: 'connection refused' } })),
    ).toEqual({
      tone: 'bad',
      text: 'No HTTP answer: connection refused.',
    });
  });
});

describe('capText', () => {
  const cap = { check: 'dmarc', max_grade: 'C', max_score: 74, reason: 'DMARC is p=none.' } as const;
  it('says "Capped" only when the cap bit: a D 45 under a C cap was not capped (issue 31)', () => {
    expect(capText(cap, 88)).toEqual({ tone: 'warn', text: 'Capped at C: DMARC is p=none.' });
    expect(capText(cap, 45)).toEqual({
      tone: 'muted',
      text: 'Would be capped at C (the points are below it already): DMARC is p=none.',
    });
  });
});
