/**
 * BIMI assertion record discovery and the fetch of what the record names.
 * draft-brand-indicators-for-message-identification, "Assertion Record
 * Discovery": the selector at the author domain (step 3), and only when no
 * BIMI record is there, the same selector at the author domain's
 * organizational domain (step 6; the Public Suffix List decides it, as for
 * DMARC: net/organizational-domain.ts). Every candidate selector is asked at
 * once; the logo and the VMC of the chosen record are fetched together.
 */
import { organizationalDomain } from '../../net/organizational-domain.js';
import { type BimiLookup, chooseBimiRecord, isBimiRecord, parseBimiRecord } from './bimi-record.js';
import { SVG_MAX_BYTES } from './bimi-svg.js';
import { VMC_MAX_BYTES } from './bimi-vmc.js';
import type { ResourceFetcher } from './resource-fetcher.js';
import type { FetchOutcome, MailDns } from './types.js';

export interface BimiDiscovery {
  /** Every name asked, in order of preference: each selector at the domain, then at the organizational domain. */
  lookups: BimiLookup[];
  svg?: FetchOutcome;
  vmc?: FetchOutcome;
}

export async function discoverBimi(
  domain: string,
  selectors: readonly string[],
  dns: Pick<MailDns, 'txt'>,
  fetcher: ResourceFetcher,
): Promise<BimiDiscovery> {
  const org = organizationalDomain(domain);
  const ask = async (selector: string, at: string): Promise<BimiLookup> => {
    const name = `${selector}._bimi.${at}`;
    return { selector, domain: at, name, outcome: await dns.txt(name) };
  };
  const perSelector = await Promise.all(
    selectors.map(async (selector) => {
      const here = await ask(selector, domain);
      // Only an answer without a BIMI record falls back: after a failed lookup the domain's own
      // record may exist, and the organizational one would stand in for it wrongly.
      const fallback =
        org !== null &&
        org !== domain &&
        here.outcome.kind === 'answer' &&
        !here.outcome.records.some(isBimiRecord);
      return fallback ? [here, await ask(selector, org)] : [here];
    }),
  );
  const lookups = perSelector.flat();
  const chosen = chooseBimiRecord(lookups);
  if (chosen?.records.length !== 1) return { lookups };
  const parsed = parseBimiRecord(chosen.records[0]!);
  if (!parsed.valid) return { lookups };
  const [svg, vmc] = await Promise.all([
    parsed.location ? fetcher({ url: parsed.location, maxBytes: SVG_MAX_BYTES + 1 }) : undefined,
    parsed.authority ? fetcher({ url: parsed.authority, maxBytes: VMC_MAX_BYTES }) : undefined,
  ]);
  return { lookups, svg, vmc };
}
