/**
 * DNSSEC and DANE from DNS alone (RFC 4035 §3.2.3, RFC 6698, RFC 7672):
 * fixture zones signed or not (AD on their answers), MX hosts with and without
 * TLSA records, TLSA without AD, unusable TLSA records, failed lookups.
 */
import { describe, expect, it } from 'vitest';
import { evaluateDnssec } from '../../../../src/features/email/dnssec.js';
import { createMailDns } from '../../../../src/features/email/mail-dns.js';
import { describeTlsa } from '../../../../src/features/email/tlsa.js';
import type { DnsRecordType } from '../../../../src/providers/dns/types.js';
import type { FakeZone } from '../../../fakes/dns-zones.js';
import { makeZone, TLD_ZONE, zoneResolver } from './zone-resolver.js';

const D = 'org.test';
/** A SHA2-256 digest's worth of hex. */
const DIGEST = 'ab'.repeat(32);
const tlsa = (usage: number, selector: number, matchingType: number, hex = DIGEST) => ({
  usage,
  selector,
  matchingType,
  certificate: Buffer.from(hex, 'hex'),
});

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

function evaluate(zones: FakeZone[], fail?: (name: string, type: DnsRecordType) => boolean) {
  return evaluateDnssec(D, createMailDns(zoneResolver([TLD_ZONE, ...zones], fail ? { fail } : {})));
}

const messages = (r: { findings: { severity: string; message: string; rfc: string }[] }) =>
  r.findings.map((f) => `${f.severity}: ${f.message} (${f.rfc})`);

describe('DNSSEC and DANE', () => {
  it('a signed domain with validated DANE-EE records on every MX host passes', async () => {
    const r = await evaluate([
      orgZone({ ad: true }, [
        [`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)],
        [`_25._tcp.mx2.${D}`, 'TLSA', tlsa(2, 0, 2, 'cd'.repeat(64))],
      ]),
    ]);
    expect(r).toMatchObject({ state: 'validated', dane: 'all', status: 'pass', findings: [] });
    expect(r.summary).toBe(
      'The answers for org.test are DNSSEC-validated; DANE (validated TLSA) on all 2 MX hosts.',
    );
    expect(r.answers).toEqual([
      { name: D, type: 'MX', validated: true },
      { name: D, type: 'TXT', validated: true },
      { name: `_dmarc.${D}`, type: 'TXT', validated: true },
    ]);
    expect(r.hosts).toEqual([
      {
        host: `mx1.${D}`,
        addresses_validated: true,
        tlsa_name: `_25._tcp.mx1.${D}`,
        tlsa: 'validated',
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
        // mx2 has no AAAA: the validated NODATA answer counts as validated.
        addresses_validated: true,
        tlsa: 'validated',
        records: [expect.objectContaining({ meaning: 'DANE-TA(2) Cert(0) SHA2-512(2)', usable: true })],
        dane: true,
      }),
    ]);
  });

  it('an unsigned domain: not validated, informational, every host without DANE', async () => {
    const r = await evaluate([orgZone({ ad: false })]);
    expect(r).toMatchObject({ state: 'not_validated', dane: 'none', status: 'info' });
    expect(r.summary).toBe('The answers for org.test are not DNSSEC-validated; no MX host has DANE.');
    expect(messages(r)).toEqual([
      'info: The answers for org.test (MX, TXT) were not DNSSEC-validated: the zone is not signed, or no DS record at its parent links it to the root. Without DNSSEC, DANE cannot protect mail to org.test. (RFC 4035 §3.2.3)',
    ]);
    expect(r.hosts.map((h) => [h.host, h.addresses_validated, h.tlsa, h.dane])).toEqual([
      [`mx1.${D}`, false, 'none', false],
      [`mx2.${D}`, false, 'none', false],
    ]);
  });

  it('TLSA published in an unsigned zone is not validated: a warning, senders ignore it', async () => {
    const r = await evaluate([orgZone({ ad: false }, [[`_25._tcp.mx1.${D}`, 'TLSA', tlsa(3, 1, 1)]])]);
    expect(r).toMatchObject({ state: 'not_validated', dane: 'none', status: 'warn' });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'not_validated', dane: false, records: [{ usable: true }] });
    expect(messages(r)[1]).toBe(
      `warning: TLSA records at _25._tcp.mx1.${D} are published but were not DNSSEC-validated: senders ignore them, so DANE does not protect mx1.${D}. (RFC 7672 §2.2; RFC 6698 §4.1)`,
    );
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
    expect(r).toMatchObject({ state: 'validated', dane: 'none', status: 'info' });
    expect(r.summary).toBe('The answers for org.test are DNSSEC-validated; no MX host has DANE.');
    expect(messages(r)).toEqual([
      'info: The address answers of MX host mx.provider.test were not DNSSEC-validated (its zone is not signed), so DANE cannot apply to it. (RFC 7672 §2.2)',
    ]);
  });

  it('validated TLSA for a host whose addresses are not validated: a warning, DANE can be bypassed', async () => {
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
    expect(r.hosts[0]).toMatchObject({ addresses_validated: false, tlsa: 'validated', dane: false });
    expect(messages(r)).toEqual([
      'warning: TLSA records at _25._tcp.mx.unsigned.test validated, but the address answers of mx.unsigned.test were not: senders need not apply DANE to mx.unsigned.test, and an attacker who forges those answers bypasses it. (RFC 7672 §2.2)',
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
    expect(r).toMatchObject({ state: 'validated', status: 'error' });
    expect(r.hosts[0]).toMatchObject({ tlsa: 'error', dane: false });
    expect(r.summary).toBe(
      `DNSSEC could not be fully reported: the TLSA lookup for _25._tcp.mx1.${D} failed (timeout: no answer within 5000 ms).`,
    );
    expect(messages(r)[0]).toBe(
      `warning: The TLSA lookup for _25._tcp.mx1.${D} failed: DANE-aware senders defer mail to mx1.${D} while it fails. (RFC 7672 §2.1)`,
    );
  });

  it('a failed MX lookup: error, the MX hosts unknown', async () => {
    const r = await evaluate([orgZone({ ad: true })], (name, type) => name === D && type === 'MX');
    expect(r).toMatchObject({ state: 'error', status: 'error', dane: null, hosts: [] });
    expect(r.answers[0]).toEqual({ name: D, type: 'MX', validated: null });
    expect(r.summary).toBe(
      'DNSSEC could not be fully reported: the MX lookup for org.test failed (timeout: no answer within 5000 ms).',
    );
  });

  it('a null MX: no host for DANE; validated answers pass', async () => {
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
    expect(r).toMatchObject({ state: 'validated', dane: 'not_applicable', status: 'pass', hosts: [] });
    expect(r.summary).toBe(
      'The answers for org.test are DNSSEC-validated; no MX host name, so DANE does not apply.',
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
      'The answers for org.test are DNSSEC-validated; DANE (validated TLSA) on its MX host.',
    );
  });

  it('partly validated: the _dmarc name is an alias into an unsigned zone', async () => {
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
    expect(r).toMatchObject({ state: 'partial', status: 'info' });
    expect(messages(r)).toEqual([
      'info: Only some answers were DNSSEC-validated: org.test MX, org.test TXT validated; _dmarc.org.test TXT not (an alias into an unsigned zone, or a sub-zone without a DS record). (RFC 4035 §3.2.3)',
    ]);
  });
});
