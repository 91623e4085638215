/**
 * The cases of the signed hierarchy (test/fakes/bind-hierarchy.ts) are what real validators
 * say: BIND's delv and a validating unbound, given our root and trust anchor, must each reach
 * every case's expected verdict (secure / insecure / bogus, and the rcode), and for bogus
 * name the zone of the broken link. netdiag's own validator is held to the same cases, so a
 * case that no peer confirms cannot slip in.
 *
 * Runs in `npm test` wherever named and bind9-utils are installed and the process is root
 * (CI; `npm test` is root in its own namespace); otherwise skips, saying why.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASES, type DnssecCase, type ReasonCode } from '../fakes/bind-cases.js';
import {
  type BindHierarchy,
  bindHierarchyUnavailable,
  findTool,
  startBindHierarchy,
} from '../fakes/bind-hierarchy.js';
import {
  askDelv,
  delvUnavailable,
  type PeerVerdict,
  startValidatingUnbound,
  unboundUnavailable,
  type ValidatingUnbound,
} from '../fakes/dnssec-peers.js';

const run = promisify(execFile);

const unavailable = bindHierarchyUnavailable();
const noDelv = unavailable ?? delvUnavailable();
const noUnbound = unavailable ?? unboundUnavailable();
const noDig = findTool('dig') ? undefined : 'dig not found (Debian: apt-get install bind9-dnsutils)';
for (const [what, why] of [
  ['the signed hierarchy', unavailable],
  ['delv', noDelv],
  ['unbound', noUnbound],
  ['dig', noDig],
] as const) {
  if (why) console.info(`dnssec-peers interop: ${what} skipped: ${why}`);
}

const title = (c: DnssecCase) =>
  `${c.name} ${c.type} → ${c.expected.status}${c.expected.code ? ` (${c.expected.code})` : ''}`;
const cases = CASES.map((c) => [title(c), c] as const);

/** What a peer's answer must be for a case. */
function expectAgreement(verdict: PeerVerdict, c: DnssecCase): void {
  const rcode = c.expected.status === 'bogus' ? 'SERVFAIL' : c.expected.rcode;
  expect({ status: verdict.status, rcode: verdict.rcode }, verdict.reason).toEqual({
    status: c.expected.status,
    rcode,
  });
  // The broken link's zone appears in what the peer says failed.
  if (c.expected.status === 'bogus') expect(verdict.reason).toContain(c.expected.zone);
}

/** unbound's Extended DNS Error (RFC 8914) for each bogus reason, as observed with unbound 1.17. */
const UNBOUND_EDE: Partial<Record<ReasonCode, number>> = {
  no_dnskey_matches_ds: 9, // DNSKEY Missing: "no keys have a DS with algorithm ..."
  ds_digest_mismatch: 9, // DNSKEY Missing: "DS hash mismatches key"
  signature_expired: 7,
  signature_not_yet_valid: 8,
  rrsig_missing: 10,
  denial_missing: 10, // RRSIGs Missing: the NXDOMAIN for the DS it asks on the way is unsigned
  signature_invalid: 6, // DNSSEC Bogus: "signature crypto failed"
};

describe.skipIf(unavailable)('the signed hierarchy', () => {
  let h: BindHierarchy;

  beforeAll(async () => {
    h = await startBindHierarchy();
    console.info(`bind hierarchy started in ${h.timings.total} ms`, h.timings);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it.skipIf(noDig)(
    'serves as its root the key the trust anchor names, and the anchor holds that key as DS and as DNSKEY',
    async () => {
      const { stdout } = await run(findTool('dig')!, [
        `@${h.rootHints[0]}`,
        '+norec',
        '+short',
        '.',
        'DNSKEY',
      ]);
      const ksk = stdout.split('\n').find((l) => l.startsWith('257 '));
      expect(ksk).toBeDefined();
      const [dsLine, dnskeyLine] = h.trustAnchorText
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith(';'));
      expect(dsLine).toMatch(/^\. 300 IN DS \d+ 8 2 [0-9A-F]{64}$/);
      const key = (text: string) => text.replace(/^.*DNSKEY\s+/, '').replace(/\s/g, '');
      expect(key(dnskeyLine!)).toBe(key(ksk!));
      expect(await readFile(h.trustAnchorFile, 'utf8')).toBe(h.trustAnchorText);
    },
  );

  it.skipIf(noDig)('serves each level from its own address, so a resolver follows referrals', async () => {
    const dig = async (server: string, name: string) =>
      (await run(findTool('dig')!, [`@${server}`, '+norec', name, 'A'])).stdout;
    // The root refers to test., test. to secure.test, which answers: three servers, three steps.
    expect(await dig(h.serverAddresses.root, 'www.secure.test')).toMatch(
      /AUTHORITY SECTION:\ntest\.\s+\d+\s+IN\s+NS/,
    );
    expect(await dig(h.serverAddresses.tld, 'www.secure.test')).toMatch(
      /AUTHORITY SECTION:\nsecure\.test\.\s+\d+\s+IN\s+NS/,
    );
    expect(await dig(h.serverAddresses.zones, 'www.secure.test')).toMatch(/flags: qr aa;.*ANSWER: 1,/);
  });

  it('makes the NSEC3 chain of iterations-200.test with 200 iterations, beyond what dnssec-signzone allows', async () => {
    const zone = await readFile(h.zoneFiles['iterations-200.test']!, 'utf8');
    expect(zone).toMatch(/ NSEC3PARAM 1 0 200 AB\n/);
    expect(zone.match(/ IN NSEC3 1 0 200 AB /g)?.length).toBe(2);
  });

  it('names in every case a zone the hierarchy has', () => {
    const zones = new Set(Object.keys(h.zoneFiles));
    for (const c of CASES) {
      if (c.expected.zone !== null) expect(zones, c.name).toContain(c.expected.zone);
    }
  });

  describe.skipIf(noDelv)('delv agrees with every case', () => {
    it.each(cases)('%s', async (_title, c) => {
      expectAgreement(await askDelv(h, c.name, c.type), c);
    });
  });

  describe.skipIf(noUnbound)('a validating unbound agrees with every case', () => {
    let unbound: ValidatingUnbound;
    beforeAll(async () => {
      unbound = await startValidatingUnbound(h);
    });
    afterAll(async () => {
      await unbound?.close();
    });

    it.each(cases)('%s', async (_title, c) => {
      const verdict = await unbound.ask(c.name, c.type);
      expectAgreement(verdict, c);
      const ede = c.expected.code ? UNBOUND_EDE[c.expected.code] : undefined;
      if (ede !== undefined) expect(verdict.reason).toMatch(new RegExp(`^${ede} \\(`));
    });
  });
});
