/**
 * DMARC per RFC 9989: record syntax, the DNS Tree Walk, the policy that
 * applies (p, sp for an inheriting subdomain, t=y one step lower) and the
 * external report destination check (RFC 9990).
 */
import { describe, expect, it } from 'vitest';
import {
  evaluateDmarc,
  isDmarcRecord,
  lowered,
  MAX_REPORT_URIS,
  parseDmarcRecord,
  treeWalkDomains,
} from '../../../../src/features/email/dmarc.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const messages = (text: string) => parseDmarcRecord(text).findings.map((f) => `${f.severity}: ${f.message}`);

describe('DMARC record syntax', () => {
  it.each([
    ['v=DMARC1; p=reject', true],
    ['v = DMARC1 ; p=reject', true],
    ['v=DMARC1', true],
    ['v=dmarc1; p=reject', false],
    ['p=reject; v=DMARC1', false],
    ['v=DMARC10; p=reject', false],
  ])('%s is a DMARC record: %s', (text, expected) => {
    expect(isDmarcRecord(text)).toBe(expected);
  });

  it('a tag given twice invalidates the record', () => {
    const parsed = parseDmarcRecord('v=DMARC1; p=reject; p=none');
    expect(parsed.valid).toBe(false);
    expect(messages('v=DMARC1; p=reject; p=none')).toEqual([
      'error: Tag p appears more than once: the record is invalid.',
    ]);
  });

  it('flags the tags RFC 9989 removed and notes unknown ones', () => {
    expect(
      messages('v=DMARC1; p=reject; pct=50; rf=afrf; ri=3600; foo=bar; rua=mailto:d@example.com'),
    ).toEqual([
      'warning: The "pct" tag was removed by RFC 9989; current receivers ignore it.',
      'warning: The "rf" tag was removed by RFC 9989; current receivers ignore it.',
      'warning: The "ri" tag was removed by RFC 9989; current receivers ignore it.',
      'info: Unknown tag "foo" is ignored.',
    ]);
  });

  it('treats a missing or invalid p as none, and ignores invalid values of other tags', () => {
    expect(parseDmarcRecord('v=DMARC1; rua=mailto:d@example.com').p).toBeUndefined();
    expect(messages('v=DMARC1; rua=mailto:d@example.com')).toEqual([
      'warning: No p= tag: the record is treated as p=none.',
    ]);
    expect(
      messages('v=DMARC1; p=block; sp=maybe; t=x; adkim=q; fo=2; psd=z; rua=mailto:d@example.com'),
    ).toEqual([
      'error: p=block is not none, quarantine or reject; it is ignored and the policy is none.',
      'warning: sp=maybe is not none, quarantine or reject; it is ignored.',
      'warning: t=x is not one of y, n; it is ignored.',
      'warning: psd=z is not one of y, n, u; it is ignored.',
      'warning: adkim=q is not one of r, s; it is ignored.',
      'warning: fo=2 is not a colon-separated list of 0, 1, d and s; it is ignored.',
    ]);
  });

  it('keeps only mailto: report URIs and drops the obsolete size suffix', () => {
    const parsed = parseDmarcRecord(
      'v=DMARC1; p=none; rua=mailto:a@example.com!10m, https://r.example.com/x, mailto:nope',
    );
    expect(parsed.rua).toEqual([
      { uri: 'mailto:a@example.com', address: 'a@example.com', domain: 'example.com' },
      { uri: 'https://r.example.com/x' },
      { uri: 'mailto:nope' },
    ]);
    expect(parsed.findings.map((f) => f.message)).toEqual([
      'The "!10m" size limit on mailto:a@example.com!10m is obsolete and ignored.',
      'rua URI "https://r.example.com/x" is not mailto:; reports are only sent by email.',
      'rua URI "mailto:nope" is not a valid mailto: address.',
    ]);
  });

  it('t=y lowers the policy one step', () => {
    expect([lowered('reject'), lowered('quarantine'), lowered('none')]).toEqual([
      'quarantine',
      'none',
      'none',
    ]);
  });
});

describe('DNS Tree Walk (RFC 9989): at most 8 names', () => {
  it('walks up one label at a time to the top-level domain', () => {
    expect(treeWalkDomains('a.b.example.com')).toEqual([
      'a.b.example.com',
      'b.example.com',
      'example.com',
      'com',
    ]);
  });

  it('jumps to 7 labels when the name has 8 or more', () => {
    const name = 'l10.l9.l8.l7.l6.l5.l4.l3.example.com';
    const walk = treeWalkDomains(name);
    expect(walk).toHaveLength(8);
    expect(walk.slice(0, 3)).toEqual([name, 'l7.l6.l5.l4.l3.example.com', 'l6.l5.l4.l3.example.com']);
    expect(walk.at(-1)).toBe('com');
  });
});

const Z = 'org.test';
function dmarcOf(domain: string, rows: [string, string, unknown][], fail?: (name: string) => boolean) {
  const dns = createMailDns(zoneResolver([TLD_ZONE, makeZone(Z, rows)], { fail: fail && ((n) => fail(n)) }));
  return evaluateDmarc(domain, dns);
}

describe('DMARC evaluation', () => {
  it('p=reject at the domain, sp and np not weaker, reports requested: pass', async () => {
    const result = await dmarcOf(Z, [
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=reject; np=reject; rua=mailto:d@org.test'],
    ]);
    expect(result).toMatchObject({
      state: 'found',
      recordDomain: Z,
      inherited: false,
      policyTag: 'p',
      requestedPolicy: 'reject',
      effectivePolicy: 'reject',
      subPoliciesNotWeaker: true,
      hasRua: true,
      status: 'pass',
      findings: [],
    });
  });

  it('a subdomain without a record inherits the parent’s sp through the tree walk', async () => {
    const result = await dmarcOf('a.b.org.test', [
      ['a.b.org.test', 'A', '192.0.2.1'],
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:d@org.test'],
    ]);
    expect(result).toMatchObject({
      inherited: true,
      recordDomain: Z,
      policyTag: 'sp',
      requestedPolicy: 'quarantine',
    });
    expect(result.lookups.map((l) => `${l.name} ${l.result}`)).toEqual([
      '_dmarc.a.b.org.test none',
      '_dmarc.b.org.test none',
      '_dmarc.org.test record',
    ]);
    expect(result.findings.map((f) => f.message)).toContain(
      'sp=quarantine is weaker than p=reject: subdomains are less protected than the domain.',
    );
  });

  it('two records at a level are all discarded and the walk goes on', async () => {
    const result = await dmarcOf('sub.org.test', [
      ['sub.org.test', 'A', '192.0.2.1'],
      ['_dmarc.sub.org.test', 'TXT', 'v=DMARC1; p=reject'],
      ['_dmarc.sub.org.test', 'TXT', 'v=DMARC1; p=none'],
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=quarantine; rua=mailto:d@org.test'],
    ]);
    expect(result.lookups.map((l) => l.result)).toEqual(['multiple_records', 'record']);
    expect(result).toMatchObject({ inherited: true, requestedPolicy: 'quarantine' });
    expect(result.findings[0]!.message).toBe(
      '_dmarc.sub.org.test has 2 DMARC records; all of them are discarded.',
    );
  });

  it('a record that does not start with v=DMARC1 is ignored and reported', async () => {
    const result = await dmarcOf(Z, [['_dmarc.org.test', 'TXT', 'p=reject; v=DMARC1']]);
    expect(result.state).toBe('none');
    expect(result.findings.map((f) => f.message)).toEqual([
      'At _dmarc.org.test: "p=reject; v=DMARC1" is ignored; the record must begin with "v=DMARC1".',
      'No DMARC record at _dmarc.org.test or any parent domain: receivers apply no policy.',
    ]);
  });

  it('t=y: reject is applied as quarantine', async () => {
    const result = await dmarcOf(Z, [
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=reject; t=y; rua=mailto:d@org.test'],
    ]);
    expect(result).toMatchObject({
      requestedPolicy: 'reject',
      effectivePolicy: 'quarantine',
      testing: true,
      status: 'warn',
    });
    expect(result.summary).toBe('DMARC p=reject with t=y (applied as quarantine), with aggregate reports.');
  });

  it('pct=100 at full points: the warning says why in the summary, not only in the findings (issue 31)', async () => {
    const result = await dmarcOf(Z, [
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=reject; pct=100; rua=mailto:d@org.test'],
    ]);
    expect(result.status).toBe('warn');
    expect(result.summary).toBe(
      'DMARC p=reject, with aggregate reports. Warning: The "pct" tag was removed by RFC 9989; current receivers ignore it.',
    );
  });

  it('np weaker than p is a warning', async () => {
    const result = await dmarcOf(Z, [
      ['_dmarc.org.test', 'TXT', 'v=DMARC1; p=reject; np=none; rua=mailto:d@org.test'],
    ]);
    expect(result.subPoliciesNotWeaker).toBe(false);
    expect(result.findings.map((f) => f.message)).toEqual([
      'np=none is weaker than p=reject: subdomains are less protected than the domain.',
    ]);
  });

  it('an external destination authorized by its exact name passes; an unrelated one without authorization warns', async () => {
    const zones = [
      TLD_ZONE,
      makeZone(Z, [
        [
          '_dmarc.org.test',
          'TXT',
          'v=DMARC1; p=reject; rua=mailto:a@ok.test,mailto:b@no.test; ruf=mailto:f@reports.org.test',
        ],
      ]),
      makeZone('ok.test', [['org.test._report._dmarc.ok.test', 'TXT', 'v=DMARC1']]),
      makeZone('no.test', [['no.test', 'A', '192.0.2.9']]),
    ];
    const result = await evaluateDmarc(Z, createMailDns(zoneResolver(zones)));
    expect(result.destinations).toEqual([
      {
        domain: 'ok.test',
        tags: ['rua'],
        external: true,
        authorized: true,
        authorization_name: 'org.test._report._dmarc.ok.test',
      },
      {
        domain: 'no.test',
        tags: ['rua'],
        external: true,
        authorized: false,
        authorization_name: 'org.test._report._dmarc.no.test',
      },
      { domain: 'reports.org.test', tags: ['ruf'], external: false, authorized: true },
    ]);
    expect(result.findings.map((f) => f.severity)).toEqual(['warning']);
  });

  // Regression: a sibling sub-domain of the same organization was treated as external (it is neither
  // the policy domain nor a parent of it), so its missing authorization record was reported as a problem.
  it('a sibling sub-domain of the same organization is not external: no authorization asked', async () => {
    const zones = [
      TLD_ZONE,
      makeZone(Z, [['_dmarc.mail.org.test', 'TXT', 'v=DMARC1; p=reject; rua=mailto:agg@reports.org.test']]),
    ];
    const resolver = zoneResolver(zones);
    const result = await evaluateDmarc('mail.org.test', createMailDns(resolver));
    expect(result.destinations).toEqual([
      { domain: 'reports.org.test', tags: ['rua'], external: false, authorized: true },
    ]);
    expect(result.findings).toEqual([]);
    expect(resolver.asked.map((q) => q.name)).toEqual(['_dmarc.mail.org.test']);
  });

  it('neighbours on a shared public suffix (a.github.io, b.github.io) are different organizations', async () => {
    const zones = [
      makeZone('a.github.io', [
        ['_dmarc.a.github.io', 'TXT', 'v=DMARC1; p=reject; rua=mailto:agg@b.github.io'],
      ]),
      makeZone('b.github.io', []),
    ];
    const result = await evaluateDmarc('a.github.io', createMailDns(zoneResolver(zones)));
    expect(result.destinations).toEqual([
      {
        domain: 'b.github.io',
        tags: ['rua'],
        external: true,
        authorized: false,
        authorization_name: 'a.github.io._report._dmarc.b.github.io',
      },
    ]);
  });

  it('a DNS failure during the walk makes the check error', async () => {
    const result = await dmarcOf(
      'sub.org.test',
      [['sub.org.test', 'A', '192.0.2.1']],
      (n) => n === '_dmarc.org.test',
    );
    expect(result).toMatchObject({ state: 'error', status: 'error' });
    expect(result.lookups.map((l) => `${l.name} ${l.result}`)).toEqual([
      '_dmarc.sub.org.test none',
      '_dmarc.org.test error',
    ]);
  });
});

describe('issue 29: a DMARC record cannot make one check thousands of queries', () => {
  it('checks the first 10 rua URIs and names the rest in one finding', async () => {
    const rua = Array.from({ length: 3000 }, (_, i) => `mailto:r@d${i}.example`).join(',');
    const resolver = zoneResolver([
      TLD_ZONE,
      makeZone(Z, [['_dmarc.org.test', 'TXT', `v=DMARC1; p=reject; rua=${rua}`]]),
    ]);
    const result = await evaluateDmarc(Z, createMailDns(resolver));
    expect(result.destinations).toHaveLength(MAX_REPORT_URIS);
    // Two authorization names per external destination, plus the record itself.
    expect(resolver.asked.filter((q) => q.name.includes('._report._dmarc.'))).toHaveLength(
      2 * MAX_REPORT_URIS,
    );
    expect(result.findings.map((f) => f.message)).toContain(
      'rua= lists 3000 URIs: only the first 10 are checked here, and receivers may send reports to fewer (they need support only two).',
    );
  });
});
