/** Recommendations: one per thing to fix, high priority for caps and big losses, most valuable first. */
import { describe, expect, it, vi } from 'vitest';
import { checkEmailSecurity } from '../../../../src/features/email/email.service.js';
import type { ResourceFetcher } from '../../../../src/features/email/resource-fetcher.js';
import { scenario, sharedZones } from '../../../fixtures/email/zones.js';
import { zoneResolver, zoneValidator } from './zone-resolver.js';

async function recommendationsFor(name: string) {
  const s = scenario(name);
  const zones = [...sharedZones(), s.zone];
  const body = await checkEmailSecurity(
    {
      dns: zoneResolver(zones),
      dnssec: zoneValidator(zones),
      fetcher: vi.fn<ResourceFetcher>(),
      clock: Date.now,
    },
    { domain: s.domain, selectors: [] },
  );
  return body.recommendations;
}

describe('recommendations', () => {
  it('p=none with ~all and a 1024-bit key: the capping DMARC first, then by points missing', async () => {
    expect(await recommendationsFor('dmarc-none-softfail')).toEqual([
      {
        check: 'dmarc',
        priority: 'high',
        text: 'Move DMARC from p=none to p=quarantine and then p=reject once aggregate reports show your legitimate mail passes SPF or DKIM.',
      },
      {
        check: 'mta_sts',
        priority: 'high',
        text: 'Publish MTA-STS: TXT at _mta-sts.monitor.email.test "v=STSv1; id=<version>" and a policy at https://mta-sts.monitor.email.test/.well-known/mta-sts.txt; start in testing mode, then enforce.',
      },
      {
        check: 'tls_rpt',
        priority: 'medium',
        text: 'Publish TXT at _smtp._tls.monitor.email.test "v=TLSRPTv1; rua=mailto:tls-reports@monitor.email.test" to learn about failed TLS deliveries.',
      },
      {
        check: 'bimi',
        priority: 'medium',
        text: 'Optional: publish a BIMI record with an SVG Tiny PS logo (and a VMC) to show your brand in supporting inboxes; it needs DMARC at quarantine or reject.',
      },
      {
        check: 'dkim',
        priority: 'low',
        text: 'Rotate the 1024-bit DKIM key to a 2048-bit RSA key (or add an Ed25519 key).',
      },
      {
        check: 'dnssec',
        priority: 'low',
        text: 'Optional: sign monitor.email.test with DNSSEC (your DNS host signs the zone, your registrar publishes its DS record), so validating receivers can trust your MX, SPF and DMARC answers and DANE becomes possible.',
      },
    ]);
  });

  it('a warning that costs no points still gets a low-priority recommendation', async () => {
    const recs = await recommendationsFor('dmarc-external-rua');
    expect(recs.find((r) => r.check === 'dmarc')).toEqual({
      check: 'dmarc',
      priority: 'low',
      text: 'Ask collector.test to publish TXT "v=DMARC1" at ext-rua.email.test._report._dmarc.collector.test, or reports addressed there are not sent.',
    });
  });

  it('DNSSEC and DANE advice is always low priority and comes last: it carries no points', async () => {
    expect((await recommendationsFor('dnssec-unsigned-tlsa')).slice(-2)).toEqual([
      {
        check: 'dnssec',
        priority: 'low',
        text: 'Optional: sign tlsa-unsigned.email.test with DNSSEC (your DNS host signs the zone, your registrar publishes its DS record), so validating receivers can trust your MX, SPF and DMARC answers and DANE becomes possible.',
      },
      {
        check: 'dnssec',
        priority: 'low',
        text: 'Sign the zone holding _25._tcp.mx.tlsa-unsigned.email.test, or remove those TLSA records: without DNSSEC every sender ignores them.',
      },
    ]);
    expect((await recommendationsFor('dnssec-partial-dane')).filter((r) => r.check === 'dnssec')).toEqual([
      {
        check: 'dnssec',
        priority: 'low',
        text: 'Replace the TLSA records at _25._tcp.mx3.dane-partial.email.test with DANE-EE(3) or DANE-TA(2) records, for example "3 1 1" and the SHA-256 digest of the server\'s public key.',
      },
      {
        check: 'dnssec',
        priority: 'low',
        text: 'Optional: publish TLSA records at _25._tcp.mx2.dane-partial.email.test (for example "3 1 1" and the SHA-256 digest of each server\'s public key), so DANE-aware senders insist on authenticated TLS to your MX hosts.',
      },
    ]);
  });

  it('a non-sending domain is not told to set up DKIM, MTA-STS, TLS-RPT, a logo or DANE', async () => {
    const recs = await recommendationsFor('null-mx-non-sending');
    expect(recs.map((r) => r.check)).toEqual(['dmarc']);
  });
});
