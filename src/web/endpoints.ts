/**
 * Which API operations the site calls, per tool. Dependency-free and DOM-free
 * so a server-side test can compare it with /openapi.json: every diagnostic
 * endpoint in the contract has a tool on the site, and the site calls nothing
 * outside the public API.
 */
export const TOOL_IDS = [
  'dns',
  'dnssec',
  'email',
  'spf',
  'mail-tls',
  'rdap',
  'tls',
  'tls-scan',
  'message',
  'blocklists',
  'inspect',
  'certificates',
  'subdomains',
  'global-dns',
  'ip',
] as const;

export type ToolId = (typeof TOOL_IDS)[number];

export const TOOL_ENDPOINTS: Readonly<Record<ToolId, readonly string[]>> = {
  dns: ['GET /api/dns'],
  dnssec: ['GET /api/dnssec'],
  email: ['GET /api/email-security'],
  spf: ['GET /api/spf'],
  'mail-tls': ['GET /api/mail-tls'],
  rdap: ['GET /api/rdap'],
  tls: ['GET /api/tls'],
  'tls-scan': ['GET /api/tls-scan'],
  message: ['POST /api/message'],
  blocklists: ['GET /api/blocklists'],
  inspect: ['GET /api/inspect'],
  certificates: ['GET /api/certificates'],
  subdomains: ['GET /api/subdomains'],
  'global-dns': ['POST /api/global-dns'],
  ip: ['GET /api/ip-geo', 'GET /api/ip-privacy'],
};

/** Called by the page itself (my address on load, the challenge) or linked from it (the inventory). */
export const PAGE_ENDPOINTS: readonly string[] = [
  'GET /api/my-ip',
  'GET /api/challenge/status',
  'POST /api/challenge/verify',
  'GET /api/providers',
];
