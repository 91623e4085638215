/** One renderer per tool, by CLI command (features/tools/catalog.ts). */
import { certificates } from './certificates.js';
import type { Renderer } from './common.js';
import { dns, inPreferenceOrder } from './dns.js';
import { email } from './email.js';
import { globalDns } from './global-dns.js';
import { inspect } from './inspect.js';
import { ipGeo, ipPrivacy, myIp } from './ip.js';
import { mailTls } from './mail-tls.js';
import { rdap } from './rdap.js';
import { spf } from './spf.js';
import { subdomains } from './subdomains.js';
import { tls } from './tls.js';

export const RENDERERS: Readonly<Record<string, Renderer>> = {
  dns,
  email,
  spf,
  'mail-tls': mailTls,
  rdap,
  tls,
  inspect,
  certificates,
  subdomains,
  'global-dns': globalDns,
  'ip-geo': ipGeo,
  'ip-privacy': ipPrivacy,
  'my-ip': myIp,
};

/**
 * The body as people read it, before the summary and the renderer see it: an order the API
 * leaves to the upstream made meaningful (MX by preference). --json prints the body untouched.
 */
export const FOR_PEOPLE: Readonly<Record<string, (body: unknown) => unknown>> = {
  dns: inPreferenceOrder,
};
