/** One renderer per tool, by CLI command (features/tools/catalog.ts). */
import { blocklists } from './blocklists.js';
import { certificates } from './certificates.js';
import type { Renderer } from './common.js';
import { dns } from './dns.js';
import { dnssec } from './dnssec.js';
import { email } from './email.js';
import { globalDns } from './global-dns.js';
import { inspect } from './inspect.js';
import { ipGeo, ipPrivacy, myIp } from './ip.js';
import { mailTls } from './mail-tls.js';
import { message } from './message.js';
import { rdap } from './rdap.js';
import { spf } from './spf.js';
import { subdomains } from './subdomains.js';
import { tls } from './tls.js';
import { tlsScan } from './tls-scan.js';

export const RENDERERS: Readonly<Record<string, Renderer>> = {
  dns,
  dnssec,
  email,
  spf,
  'mail-tls': mailTls,
  rdap,
  tls,
  'tls-scan': tlsScan,
  message,
  blocklists,
  inspect,
  certificates,
  subdomains,
  'global-dns': globalDns,
  'ip-geo': ipGeo,
  'ip-privacy': ipPrivacy,
  'my-ip': myIp,
};
