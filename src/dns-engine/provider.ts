/**
 * The engine as a provider: /api/dnssec's answers name it (`source`, `source_id`), and
 * /api/providers lists it with the root hints it starts at, as it lists every upstream.
 */
import type { ProviderInfo } from '../providers/types.js';

export const ENGINE_PROVIDER = {
  id: 'dns-engine',
  name: 'netdiag iterative resolver (from the root)',
} as const;

export function engineProviderInfo(rootHints: readonly string[]): ProviderInfo {
  return {
    ...ENGINE_PROVIDER,
    capabilities: ['dnssec'],
    docs_url: 'https://www.rfc-editor.org/rfc/rfc4035',
    access: 'none',
    configured: true,
    endpoint: `root hints: ${rootHints.length} address${rootHints.length === 1 ? '' : 'es'} (DNS_ROOT_HINTS)`,
  };
}
