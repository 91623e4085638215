/**
 * The signed hierarchy test/fakes/bind-hierarchy.ts builds, as data: every zone (its keys,
 * denial, validity, the DS its parent publishes, what is broken after signing). The
 * questions asked of it and their verdicts are in bind-cases.ts.
 *
 * Names are under the reserved TLDs `.test` and `.example` (RFC 2606) of a root of our own,
 * addresses from 192.0.2.0/24 and 2001:db8::/32. Four servers, one per level of the
 * delegation, so a resolver follows real referrals: the root, the TLDs, the second-level
 * zones, the third-level zones.
 */
import { isRrsigOver, type KeySpec, type ZoneLine } from './bind-signing.js';

export type ServerRole = 'root' | 'tld' | 'zones' | 'leaves';

/** The name of each server; its address is in the `test.` zone (and as glue in the root). */
export const SERVER_NAMES: Record<ServerRole, string> = {
  root: 'a.root-servers.test',
  tld: 'ns.nic.test',
  zones: 'ns.zones.test',
  leaves: 'ns.leaves.test',
};

/** What the parent publishes for a zone. */
export type DsMode =
  | 'match' // the DS of the zone's KSK (or CSK)
  | 'none' // an unsigned delegation
  | 'other-key' // the DS of a key the zone does not publish
  | 'bad-digest' // the zone's key tag and algorithm, the digest's last hex digit changed
  | 'private-algorithm' // only a DS for an algorithm-253 (PRIVATEDNS) DNSKEY
  | 'unsupported-digest'; // only a DS of digest type 3 (GOST R 34.11-94), which no one here implements

export interface ZonePlan {
  zone: string;
  server: ServerRole;
  /** Empty: the zone is not signed. */
  keys: KeySpec[];
  ds: DsMode;
  nsec3?: { salt: string; iterations: number; optOut?: boolean };
  /** An NSEC3 chain with more iterations than BIND will make (bind-signing.ts, rechainNsec3). */
  nsec3BeyondLimit?: { salt: string; iterations: number };
  /** Signature validity in days from now (default: BIND's, an hour ago for 30 days). */
  validityDays?: { inception: number; expiration: number };
  /** Zone-file lines relative to the origin ($TTL 300). */
  records: string[];
  /** Breaks the zone after signing. */
  edit?: (lines: ZoneLine[]) => ZoneLine[];
}

const P256: KeySpec[] = [{ algorithm: 13, role: 'csk' }];
const WWW = ['www IN A 192.0.2.10', 'www IN AAAA 2001:db8::10'];
/** A DANE-EE record (SHA-256 of a SubjectPublicKeyInfo): any 32 bytes serve a validator. */
const TLSA_DIGEST = '8f43288ad272f3103b6fb1428485ea3014c0bcfe547b2d1a4a5c1f9b7e4e2a4d';

/** The A record of each server, authoritative in `test.` (and glue in the root). */
function serverRecords(addresses: Record<ServerRole, string>): string[] {
  return (Object.keys(SERVER_NAMES) as ServerRole[]).map(
    (role) => `${SERVER_NAMES[role]}. IN A ${addresses[role]}`,
  );
}

export function zonePlans(addresses: Record<ServerRole, string>): ZonePlan[] {
  const rsa = (algorithm: 5 | 7 | 8 | 10, bits = 2048): KeySpec[] => [{ algorithm, bits, role: 'csk' }];
  return [
    {
      zone: '.',
      server: 'root',
      keys: [
        { algorithm: 8, bits: 2048, role: 'ksk' },
        { algorithm: 8, bits: 2048, role: 'zsk' },
      ],
      ds: 'match',
      // The root's own NS name is under test.: glue here, authoritative there.
      records: [`${SERVER_NAMES.root}. IN A ${addresses.root}`],
    },
    {
      zone: 'test',
      server: 'tld',
      keys: [
        { algorithm: 13, role: 'ksk' },
        { algorithm: 13, role: 'zsk' },
      ],
      ds: 'match',
      records: serverRecords(addresses),
    },
    {
      // A TLD as most are: NSEC3 with opt-out, no salt, no extra iterations (RFC 9276).
      zone: 'example',
      server: 'tld',
      keys: P256,
      ds: 'match',
      nsec3: { salt: '', iterations: 0, optOut: true },
      records: [],
    },
    { zone: 'signed.example', server: 'zones', keys: P256, ds: 'match', records: WWW },
    { zone: 'unsigned.example', server: 'zones', keys: [], ds: 'none', records: WWW },
    {
      zone: 'secure.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      records: [
        ...WWW,
        '@ IN MX 10 mail',
        'mail IN A 192.0.2.25',
        `_25._tcp.mail IN TLSA 3 1 1 ${TLSA_DIGEST}`,
        '*.wild IN A 192.0.2.30',
        'alias IN CNAME www',
        'to-unsigned IN CNAME www.unsigned.test.',
      ],
    },
    {
      zone: 'sub.secure.test',
      server: 'leaves',
      keys: [
        { algorithm: 13, role: 'ksk' },
        { algorithm: 13, role: 'zsk' },
      ],
      ds: 'match',
      records: WWW,
    },
    {
      zone: 'nsec3.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      nsec3: { salt: 'cafe', iterations: 5 },
      records: [...WWW, '*.wild IN A 192.0.2.31'],
    },
    { zone: 'unsigned.nsec3.test', server: 'leaves', keys: [], ds: 'none', records: WWW },
    {
      // The most iterations the installed validators (and RFC 9276's current practice) accept.
      zone: 'iterations-150.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      nsec3: { salt: 'ab', iterations: 150 },
      records: WWW,
    },
    {
      zone: 'iterations-200.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      nsec3BeyondLimit: { salt: 'ab', iterations: 200 },
      records: WWW,
    },
    { zone: 'unsigned.test', server: 'zones', keys: [], ds: 'none', records: WWW },
    { zone: 'ds-mismatch.test', server: 'zones', keys: P256, ds: 'other-key', records: WWW },
    { zone: 'ds-bad-digest.test', server: 'zones', keys: P256, ds: 'bad-digest', records: WWW },
    {
      zone: 'expired.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      // Far enough back that no validator's clock-skew allowance (unbound: up to a day) covers it.
      validityDays: { inception: -60, expiration: -30 },
      records: WWW,
    },
    {
      zone: 'expiring.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      validityDays: { inception: -25, expiration: 3 },
      records: WWW,
    },
    {
      zone: 'not-yet-valid.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      validityDays: { inception: 30, expiration: 60 },
      records: WWW,
    },
    {
      zone: 'missing-rrsig.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      records: WWW,
      edit: (lines) => lines.filter((l) => !isRrsigOver(l, 'www.missing-rrsig.test', 'A')),
    },
    {
      zone: 'no-denial.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      records: WWW,
      edit: (lines) =>
        lines.filter((l) => l.type !== 'NSEC' && !(l.type === 'RRSIG' && l.rdata.startsWith('NSEC '))),
    },
    {
      zone: 'forged-denial.test',
      server: 'zones',
      keys: P256,
      ds: 'match',
      records: ['a IN A 192.0.2.1', 'c IN A 192.0.2.3', ...WWW],
      // a → c becomes a → www after signing: c "does not exist", and the NSEC's RRSIG no longer verifies.
      edit: (lines) =>
        lines.map((l) =>
          l.type === 'NSEC' && l.owner === 'a.forged-denial.test.'
            ? { ...l, rdata: l.rdata.replace(/^c\.forged-denial\.test\./, 'www.forged-denial.test.') }
            : l,
        ),
    },
    { zone: 'private-algorithm.test', server: 'zones', keys: [], ds: 'private-algorithm', records: WWW },
    { zone: 'unknown-digest.test', server: 'zones', keys: P256, ds: 'unsupported-digest', records: WWW },
    { zone: 'rsasha1.test', server: 'zones', keys: rsa(5), ds: 'match', records: WWW },
    {
      zone: 'rsasha1-nsec3.test',
      server: 'zones',
      keys: rsa(7),
      ds: 'match',
      nsec3: { salt: '', iterations: 0 },
      records: WWW,
    },
    { zone: 'rsa1024.test', server: 'zones', keys: rsa(8, 1024), ds: 'match', records: WWW },
    { zone: 'rsasha512.test', server: 'zones', keys: rsa(10), ds: 'match', records: WWW },
    {
      zone: 'ecdsa384.test',
      server: 'zones',
      keys: [{ algorithm: 14, role: 'csk' }],
      ds: 'match',
      records: WWW,
    },
    {
      zone: 'ed25519.test',
      server: 'zones',
      keys: [{ algorithm: 15, role: 'csk' }],
      ds: 'match',
      records: WWW,
    },
    {
      zone: 'ed448.test',
      server: 'zones',
      keys: [{ algorithm: 16, role: 'csk' }],
      ds: 'match',
      records: WWW,
    },
  ];
}
