/**
 * The DKIM selectors GET /api/email-security tries after the caller's own,
 * in this order. DKIM has no way to list a domain's selectors (RFC 6376
 * §3.1: the signer picks any name), so a checker can only guess; this list is
 * disclosed so a "no key found" result means exactly "none of these".
 *
 * Source: the list in issue 5 (the product decision), in its order. Where a
 * selector is a provider's documented default, the provider and its setup
 * page are named next to it; the generic names are common defaults of DKIM
 * tools and hosting panels and appear in the default lists of open-source
 * checkers. Entries marked "issue 5" have no single documented owner we can
 * cite; they stay because the list is part of the contract.
 */
export const COMMON_DKIM_SELECTORS: readonly string[] = Object.freeze([
  'google', // Google Workspace: default selector "google" (support.google.com/a/answer/174124)
  'selector1', // Microsoft 365: selector1/selector2 CNAMEs (learn.microsoft.com, "Set up DKIM to sign mail")
  'selector2',
  'default', // cPanel / DirectAdmin / OpenDKIM examples: "default"
  's1', // SendGrid (Twilio): automated security CNAMEs s1/s2
  's2',
  'k1', // Mailchimp: k1 (and k2, k3 for later keys)
  'k2',
  'k3',
  'dkim', // generic operator choices seen in published zones
  'mail',
  'smtp',
  'mandrill', // Mailchimp Transactional (Mandrill)
  'everlytickey1', // Everlytic
  'everlytickey2',
  'mxvault', // MXVault
  'sig1', // Apple iCloud+ custom email domains
  'zoho', // Zoho Mail (suggested default selector)
  'protonmail', // Proton Mail custom domains: protonmail, protonmail2, protonmail3
  'protonmail2',
  'protonmail3',
  'fm1', // Fastmail: fm1, fm2, fm3
  'fm2',
  'fm3',
  'x', // issue 5
  'pm', // issue 5
  'cm', // Campaign Monitor
]);

/** How many selector lookups run at once: enough to finish the list in two round trips, few enough to be polite. */
export const DKIM_QUERY_CONCURRENCY = 16;

/** RFC 6376 §3.1: a selector is one or more labels; we accept letters, digits, `_` and `-` in each. */
const SELECTOR = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;
export const MAX_USER_SELECTORS = 5;

/**
 * Parses `?selector=` (up to 5, comma-separated) into lower-cased, distinct
 * selectors, or returns why it is invalid.
 */
export function parseSelectors(input: string | undefined): { selectors: string[] } | { error: string } {
  if (input === undefined) return { selectors: [] };
  const parts = input.split(',').map((s) => s.trim().toLowerCase());
  if (parts.length > MAX_USER_SELECTORS) return { error: `lists more than ${MAX_USER_SELECTORS} selectors` };
  const out: string[] = [];
  for (const part of parts) {
    if (part.length < 1 || part.length > 63) return { error: 'needs 1–63 characters per selector' };
    if (!SELECTOR.test(part)) {
      return { error: `"${part}" may only contain letters, digits, ".", "_" and "-", with no empty label` };
    }
    if (!out.includes(part)) out.push(part);
  }
  return { selectors: out };
}

/** The selectors to query, in order: the caller's first, then the disclosed list without repeats. */
export function selectorsToTest(userSelectors: readonly string[]): string[] {
  return [...userSelectors, ...COMMON_DKIM_SELECTORS.filter((s) => !userSelectors.includes(s))];
}
