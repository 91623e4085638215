/**
 * DNSSEC and DANE for mail by netdiag's own verdicts (a stand-in validator over the fixture
 * zones: a zone made with `ad: true` is signed; zone-resolver.ts zoneValidator): signed and
 * unsigned domains, MX hosts with and without TLSA records, TLSA in an unsigned zone, unusable
 * TLSA records, broken chains (bogus) for the domain and for MX hosts, no verdict, failed lookups.
 * The resolver's AD bit plays no part.
 */
import { describe, expect, it } from 'vitest';
import type { DnssecValidator, Reason } from '../../../../src/features/dnssec/verdicts.js';
import { RequestVerdicts } from '../../../../src/features/dnssec/verdicts.js';
import { evaluateDnssec } from '../../../../src/features/email/dnssec.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { describeTlsa } from '../../../../src/features/email/tlsa.js';
import type { DnsRecordType } from '../../../../src/providers/dns/types.js';
import type { FakeZone } from '../../../fakes/dns-zones.js';
import { makeZone, NOT_VALIDATING, TLD_ZONE, zoneResolver, zoneValidator } from './zone-resolver.js';

const D = 'org.test';
/** A SHA2-256 digest's worth of hex. */
const DIGEST = 'ab'.repeat(32);
const tlsa = (usage: number, selector: number, matchingType: number, hex = DIGEST) => ({
  usage,
  selector,
  matchingType,
  certificate: Buffer.from(hex, 'hex'),
});
const EXPIRED: Reason = {
  code: 'signature_expired',
  zone: D,
  detail: 'the DNSKEY RRset of org.test is not signed by a key its DS names: the signature expired',
};

/** The domain's own zone: MX hosts mx1 and mx2 in it, SPF and DMARC; `extra` rows added. */
function orgZone(opts: { ad: boolean }, extra: [string, string, unknown][] = []): FakeZone {
  return makeZone(
    D,
    [
      [D, 'MX', { preference: 10, exchange: `mx1.${D}` }],
      [D, 'MX', { preference: 20, exchange: `mx2.${D}` }],
      [`mx1.${D}`, 'A', '192.0.2.1'],
      [`mx1.${D}`, 'AAAA', '2001:db8::1'],
      [`mx2.${D}`, 'A', '192.0.2.2'],
      [D, 'TXT', 'v=spf1 mx -all'],
      [`_dmarc.${D}`, 'TXT', 'v=DMARC1; p=reject'],
      ...extra,
    ],
    opts,
  );
}

function evaluate(
  zones: FakeZone[],
  fail?: (name: string, type: DnsRecordType) => boolean,
  validator: DnssecValidator = zoneValidator([TLD_ZONE, ...zones]),
) {
  const resolver = zoneResolver([TLD_ZONE, ...zones], fail ? { fail } : {});
  return evaluateDnssec(D, createMailDns(resolver), new RequestVerdicts(validator));
}

const messages = (r: { findings: { severity: string; message: string; rfc: string }[] }) =>
  r.findings.map((f) => `${f.severity}: ${f.message} (${f.rfc})`);

describe('DNSSEC and DANE', () => {
  it('a signed domain with DANE-EE records that validate on every MX host passes', async () => {
    const r = await evaluate([
      orgZone({ ad: true }, [
        [`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)],
        [`_25._tcp.mx2.${D}`, 'TLSA', tlsa(2, 0, 2, 'cd'.repeat(64))],
      ]),
    ]);
    expect(r).toMatchObject({ state: 'secure', dane: 'all', status: 'pass', findings: [], signed: true });
    expect(r.summary).toBe(
      'org.test is DNSSEC-signed and its answers validate; DANE (TLSA records that validate) on all 2 MX hosts.',
    );
    expect(r.answers).toEqual([
      { name: D, type: 'MX', status: 'secure', reason: null },
      { name: D, type: 'TXT', status: 'secure', reason: null },
      { name: `_dmarc.${D}`, type: 'TXT', status: 'secure', reason: null },
    ]);
    expect(r.hosts).toEqual([
      {
        host: `mx1.${D}`,
        addresses: 'secure',
        addresses_reason: null,
        tlsa_name: `_25._tcp.mx1.${D}`,
        tlsa: 'secure',
        tlsa_reason: null,
        records: [
          {
            usage: 3,
            selector: 1,
            matching_type: 1,
            data: DIGEST.toUpperCase(),
            meaning: 'DANE-EE(3) SPKI(1) SHA2-256(1)',
            usable: true,
          },
        ],
        dane: true,
      },
      expect.objectContaining({
        host: `mx2.${D}`,
        // mx2 has no AAAA: a secure "no AAAA" counts as secure.
        addresses: 'secure',
        tlsa: 'secure',
        records: [expect.objectContaining({ meaning: 'DANE-TA(2) Cert(0) SHA2-512(2)', usable: true })],
        dane: true,
      }),
    ]);
  });

  it('the verdict is netdiag’s, not the resolver’s AD: signed zones behind a resolver that strips AD still pass', async () => {
    const signed = orgZone({ ad: true }, [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]]);
    const resolver = zoneResolver([TLD_ZONE, { ...signed, ad: false }]);
    const r = await evaluateDnssec(
      D,
      createMailDns(resolver),
      new RequestVerdicts(zoneValidator([TLD_ZONE, signed])),
    );
    expect(r).toMatchObject({ state: 'secure', signed: true });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'secure', dane: true });
  });

  it('each question is validated once; the first alone, the rest after it', async () => {
    const validator = zoneValidator([TLD_ZONE, orgZone({ ad: true })]);
    await evaluate([orgZone({ ad: true })], undefined, validator);
    expect(validator.asked[0]).toBe(`MX ${D}`);
    expect(new Set(validator.asked).size).toBe(validator.asked.length);
    expect([...validator.asked].sort()).toEqual(
      [
        `MX ${D}`,
        `TXT ${D}`,
        `TXT _dmarc.${D}`,
        ...[`mx1.${D}`, `mx2.${D}`].flatMap((h) => [`A ${h}`, `AAAA ${h}`, `TLSA _25._tcp.${h}`]),
      ].sort(),
    );
  });

  it('an unsigned domain: informational, left for a recommendation, every host without DANE', async () => {
    const r = await evaluate([orgZone({ ad: false })]);
    expect(r).toMatchObject({ state: 'insecure', dane: 'none', status: 'info', signed: false });
    expect(r.summary).toBe('org.test is not DNSSEC-signed; no MX host has DANE.');
    expect(messages(r)).toEqual([
      'info: org.test is not DNSSEC-signed: the chain of trust ends at org.test (no_ds: org.test is delegated without DS: the zone is unsigned). Without DNSSEC, receivers cannot tell forged MX, SPF and DMARC answers from real ones, and DANE cannot protect mail to org.test. (RFC 4033 §5)',
    ]);
    expect(r.hosts.map((h) => [h.host, h.addresses, h.tlsa, h.dane])).toEqual([
      [`mx1.${D}`, 'insecure', 'none', false],
      [`mx2.${D}`, 'insecure', 'none', false],
    ]);
  });

  it('TLSA published in an unsigned zone: a warning, senders ignore it', async () => {
    const r = await evaluate([orgZone({ ad: false }, [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]])]);
    expect(r).toMatchObject({ state: 'insecure', dane: 'none', status: 'warn' });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'insecure', dane: false, records: [{ usable: true }] });
    expect(messages(r)[1]).toBe(
      `warning: TLSA records at _25._tcp.mx1.${D} are published in a zone that is not signed (the chain of trust ends at org.test): senders ignore them, so DANE does not protect mx1.${D}. (RFC 7672 §2.2; RFC 6698 §4.1)`,
    );
  });

  it('a broken chain of trust for the domain: fail, naming the broken link, the records still read', async () => {
    const zones = [orgZone({ ad: true }, [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]])];
    const validator = zoneValidator([TLD_ZONE, ...zones], { bogus: { [D]: EXPIRED } });
    const r = await evaluate(zones, undefined, validator);
    expect(r).toMatchObject({ state: 'bogus', status: 'fail', reason: EXPIRED, signed: false });
    expect(r.summary).toBe(
      "DNSSEC bogus: org.test's chain of trust is broken at org.test (signature_expired), so validating resolvers refuse its records.",
    );
    expect(messages(r)[0]).toBe(
      "error: DNSSEC bogus: the chain of trust of org.test MX, org.test TXT, _dmarc.org.test TXT is broken at org.test (signature_expired: the DNSKEY RRset of org.test is not signed by a key its DS names: the signature expired). Validating resolvers answer SERVFAIL for them: senders that validate cannot deliver mail to org.test, and receivers that validate cannot read org.test's SPF, DKIM and DMARC records (temperror). The records its servers publish were still read, by netdiag’s own resolution, and are checked here as published. (RFC 4035 §5.5)",
    );
    // Its MX hosts are in the broken zone: the same link, said once.
    expect(messages(r)).toHaveLength(1);
    expect(r.hosts.map((h) => [h.host, h.addresses, h.tlsa])).toEqual([
      [`mx1.${D}`, 'bogus', 'bogus'],
      // No TLSA there, but no resolver that validates can say so: the denial is as bogus as the rest.
      [`mx2.${D}`, 'bogus', 'bogus'],
    ]);
  });

  it('an MX host whose TLSA chain is broken: fail; DANE-aware senders defer mail to it', async () => {
    const zones = [
      orgZone({ ad: true }),
      makeZone('_tcp.mx1.org.test', [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]], { ad: true }),
    ];
    const broken: Reason = { ...EXPIRED, zone: '_tcp.mx1.org.test' };
    const r = await evaluate(
      zones,
      undefined,
      zoneValidator([TLD_ZONE, ...zones], { bogus: { '_tcp.mx1.org.test': broken } }),
    );
    expect(r).toMatchObject({ state: 'secure', status: 'fail', bogusHosts: [`mx1.${D}`] });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'bogus', tlsa_reason: broken, dane: false });
    expect(messages(r)).toContain(
      `error: DNSSEC bogus: the TLSA answer at _25._tcp.mx1.${D} fails validation at _tcp.mx1.org.test (signature_expired: the DNSKEY RRset of org.test is not signed by a key its DS names: the signature expired). DANE-aware senders defer mail to mx1.${D} while its TLSA records cannot be validated. (RFC 7672 §2.2)`,
    );
    expect(r.summary).toBe(
      `org.test is DNSSEC-signed and its answers validate; DNSSEC is broken for MX host mx1.${D}.`,
    );
  });

  it('an instance that does not validate: not checked, no verdicts, no DANE claim', async () => {
    const r = await evaluate(
      [orgZone({ ad: true }, [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]])],
      undefined,
      NOT_VALIDATING,
    );
    expect(r).toMatchObject({ state: 'not_checked', status: 'info', dane: null, unknown: true });
    expect(messages(r)).toEqual([
      'info: DNSSEC was not checked: netdiag does not validate DNSSEC here. (RFC 4033 §5)',
    ]);
    expect(r.hosts[0]).toMatchObject({ tlsa: 'indeterminate', records: [{ usable: true }], dane: false });
  });

  it('no verdict for an answer (servers unreachable): error, so the answer is not cached', async () => {
    const zones = [orgZone({ ad: true })];
    const inner = zoneValidator([TLD_ZONE, ...zones]);
    const validator: DnssecValidator = {
      available: true,
      verdict: async (name, type) =>
        name === `_dmarc.${D}`
          ? {
              status: 'indeterminate',
              reason: { code: 'servers_unreachable', zone: D, detail: 'no server of org.test answered' },
              answer: null,
            }
          : inner.verdict(name, type),
    };
    const r = await evaluate(zones, undefined, validator);
    expect(r).toMatchObject({ state: 'indeterminate', status: 'error', unknown: true });
    expect(messages(r)).toEqual([
      `warning: netdiag could not validate _dmarc.${D} TXT: no server of org.test answered. (RFC 4033 §5)`,
    ]);
  });

  it('a signed domain whose MX host lives in an unsigned zone: DANE cannot apply there', async () => {
    const zones = [
      makeZone(
        D,
        [
          [D, 'MX', { preference: 10, exchange: 'mx.provider.test' }],
          [D, 'TXT', 'v=spf1 mx -all'],
          [`_dmarc.${D}`, 'TXT', 'v=DMARC1; p=reject'],
        ],
        { ad: true },
      ),
      makeZone('provider.test', [['mx.provider.test', 'A', '192.0.2.25']]),
    ];
    const r = await evaluate(zones);
    expect(r).toMatchObject({ state: 'secure', dane: 'none', status: 'pass' });
    expect(r.summary).toBe('org.test is DNSSEC-signed and its answers validate; no MX host has DANE.');
    expect(messages(r)).toEqual([
      'info: The address records of MX host mx.provider.test are not signed (the chain of trust ends at provider.test), so DANE cannot apply to it. (RFC 7672 §2.2)',
    ]);
  });

  it('secure TLSA for a host whose addresses are not: a warning, DANE can be bypassed', async () => {
    // The _tcp sub-zone of the host is signed on its own; the host's zone is not.
    const zones = [
      makeZone(
        D,
        [
          [D, 'MX', { preference: 10, exchange: 'mx.unsigned.test' }],
          [D, 'TXT', 'v=spf1 mx -all'],
          [`_dmarc.${D}`, 'TXT', 'v=DMARC1; p=reject'],
        ],
        { ad: true },
      ),
      makeZone('unsigned.test', [['mx.unsigned.test', 'A', '192.0.2.26']]),
      makeZone('_tcp.mx.unsigned.test', [['_25._tcp.mx.unsigned.test', 'TLSA', tlsa(3, 1, 1)]], { ad: true }),
    ];
    const r = await evaluate(zones);
    expect(r).toMatchObject({ dane: 'none', status: 'warn' });
    expect(r.hosts[0]).toMatchObject({ addresses: 'insecure', tlsa: 'secure', dane: false });
    expect(messages(r)).toEqual([
      'warning: TLSA records at _25._tcp.mx.unsigned.test validate, but the address answers of mx.unsigned.test are not secure: senders need not apply DANE to mx.unsigned.test, and an attacker who forges those answers bypasses it. (RFC 7672 §2.2)',
    ]);
  });

  it('TLSA records SMTP cannot use: PKIX usages, unassigned values, a digest of the wrong length', async () => {
    expect(
      [tlsa(0, 0, 1), tlsa(1, 1, 1), tlsa(4, 1, 1), tlsa(3, 2, 1), tlsa(3, 1, 3), tlsa(3, 1, 1, 'abcd')].map(
        (t) => {
          const d = describeTlsa({ ...t, data: t.certificate.toString('hex').toUpperCase() });
          return `${d.meaning}: ${d.problem}`;
        },
      ),
    ).toEqual([
      'PKIX-TA(0) Cert(0) SHA2-256(1): SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages',
      'PKIX-EE(1) SPKI(1) SHA2-256(1): SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages',
      'unassigned(4) SPKI(1) SHA2-256(1): certificate usage 4 is unassigned',
      'DANE-EE(3) unassigned(2) SHA2-256(1): selector 2 is unassigned',
      'DANE-EE(3) SPKI(1) unassigned(3): matching type 3 is unassigned',
      'DANE-EE(3) SPKI(1) SHA2-256(1): a SHA2-256 digest has 64 hex digits, this one 4',
    ]);

    const r = await evaluate([
      orgZone({ ad: true }, [
        [`_25._tcp.mx1.${D}`, 'TLSA', tlsa(1, 0, 1)],
        [`_25._tcp.mx2.${D}`, 'TLSA', tlsa(3, 1, 1)],
        [`_25._tcp.mx2.${D}`, 'TLSA', tlsa(3, 1, 1, 'abcd')],
      ]),
    ]);
    expect(r.hosts.map((h) => [h.host, h.dane])).toEqual([
      [`mx1.${D}`, false],
      [`mx2.${D}`, true],
    ]);
    expect(r).toMatchObject({ dane: 'some', status: 'warn' });
    expect(messages(r)).toEqual([
      `warning: No TLSA record at _25._tcp.mx1.${D} is usable for SMTP (1 0 1: SMTP clients do not use the PKIX-TA(0) and PKIX-EE(1) usages): DANE-aware senders then require TLS but authenticate nothing. Publish DANE-EE(3) or DANE-TA(2) records. (RFC 7672 §3.1)`,
      `info: 1 of 2 TLSA records at _25._tcp.mx2.${D} are not usable for SMTP and are ignored (3 1 1: a SHA2-256 digest has 64 hex digits, this one 4). (RFC 7672 §3.1)`,
      `warning: DANE protects 1 of 2 MX hosts; mail routed to mx1.${D} has no DANE protection. (RFC 7672 §2.2)`,
    ]);
  });

  it('a failed TLSA lookup on a host DANE could protect: error (left incomplete) and a warning', async () => {
    const r = await evaluate(
      [orgZone({ ad: true }, [[`_25._tcp.mx2.${D}`, 'TLSA', tlsa(3, 1, 1)]])],
      (name, type) => type === 'TLSA' && name === `_25._tcp.mx1.${D}`,
    );
    expect(r).toMatchObject({ state: 'secure', status: 'error' });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'error', dane: false });
    expect(r.summary).toBe(
      `DNSSEC could not be fully reported: the TLSA lookup for _25._tcp.mx1.${D} failed (timeout: no answer within 5000 ms).`,
    );
    expect(messages(r)[0]).toBe(
      `warning: The TLSA lookup for _25._tcp.mx1.${D} failed: DANE-aware senders defer mail to mx1.${D} while it fails. (RFC 7672 §2.1)`,
    );
  });

  it('a failed MX lookup: error, the MX hosts unknown (netdiag still validated the MX answer)', async () => {
    const r = await evaluate([orgZone({ ad: true })], (name, type) => name === D && type === 'MX');
    expect(r).toMatchObject({ state: 'secure', status: 'error', dane: null, hosts: [], unknown: true });
    expect(r.answers[0]).toEqual({ name: D, type: 'MX', status: 'secure', reason: null });
    expect(r.summary).toBe(
      'DNSSEC could not be fully reported: the MX lookup for org.test failed (timeout: no answer within 5000 ms).',
    );
  });

  it('a null MX: no host for DANE; a signed domain passes', async () => {
    const r = await evaluate([
      makeZone(
        D,
        [
          [D, 'MX', { preference: 0, exchange: '' }],
          [D, 'TXT', 'v=spf1 -all'],
          [`_dmarc.${D}`, 'TXT', 'v=DMARC1; p=reject'],
        ],
        { ad: true },
      ),
    ]);
    expect(r).toMatchObject({ state: 'secure', dane: 'not_applicable', status: 'pass', hosts: [] });
    expect(r.summary).toBe(
      'org.test is DNSSEC-signed and its answers validate; no MX host name, so DANE does not apply.',
    );
  });

  it('no MX record: the domain itself is the host whose TLSA is asked (RFC 7672 §2.2.2)', async () => {
    const r = await evaluate([
      makeZone(
        D,
        [
          [D, 'A', '192.0.2.7'],
          [`_25._tcp.${D}`, 'TLSA', tlsa(3, 1, 1)],
        ],
        { ad: true },
      ),
    ]);
    expect(r.hosts).toEqual([expect.objectContaining({ host: D, tlsa_name: `_25._tcp.${D}`, dane: true })]);
    expect(r.dane).toBe('all');
    expect(r.summary).toBe(
      'org.test is DNSSEC-signed and its answers validate; DANE (TLSA records that validate) on its MX host.',
    );
  });

  it('partly secure: the _dmarc name is an alias into an unsigned zone', async () => {
    const zones = [
      makeZone(
        D,
        [
          [D, 'MX', { preference: 10, exchange: `mx1.${D}` }],
          [`mx1.${D}`, 'A', '192.0.2.1'],
          [D, 'TXT', 'v=spf1 mx -all'],
          [`_dmarc.${D}`, 'CNAME', 'dmarc.provider.test'],
        ],
        { ad: true },
      ),
      makeZone('provider.test', [['dmarc.provider.test', 'TXT', 'v=DMARC1; p=reject']]),
    ];
    const r = await evaluate(zones);
    // The domain is signed: that is the strength the score counts; the alias is worth a note.
    expect(r).toMatchObject({ state: 'partial', status: 'pass', signed: true });
    expect(messages(r)).toEqual([
      'info: Only some answers validate as secure: org.test MX, org.test TXT do; _dmarc.org.test TXT is not signed (the chain of trust ends at provider.test: an alias into an unsigned zone, or a sub-zone without a DS record). (RFC 4033 §5)',
    ]);
  });
});
