/**
 * Every endpoint family, registered in this order by buildApp, after the
 * provider families (providers/plugins.ts), which build the adapters, register
 * them and close them. Each is a Fastify plugin taking the shared context that
 * only routes: it takes its adapters from the instance (`app.rdapSources`,
 * `app.ctSources`, ...) or the context, so adding an endpoint family is one
 * line here (and one in providers/plugins.ts if it brings a provider family).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import challengeRoutes from './challenge/challenge.route.js';
import ctRoutes from './ct/ct.route.js';
import dnsRoutes from './dns/dns.route.js';
import emailRoutes from './email/email.route.js';
import globalDnsRoutes from './global-dns/global-dns.route.js';
import healthRoutes from './health/health.route.js';
import inspectRoutes from './inspect/inspect.route.js';
import ipRoutes from './ip/ip.route.js';
import mailTlsRoutes from './mail-tls/mail-tls.route.js';
import mcpRoutes from './mcp/mcp.route.js';
import providersRoutes from './providers/providers.route.js';
import rdapRoutes from './rdap/rdap.route.js';
import siteRoutes from './site/site.route.js';
import spfRoutes from './spf/spf.route.js';
import tlsRoutes from './tls/tls.route.js';

export type Feature = (app: FastifyInstance, opts: { ctx: AppContext }) => Promise<void>;

export const features: Feature[] = [
  rdapRoutes,
  healthRoutes,
  providersRoutes,
  challengeRoutes,
  dnsRoutes,
  emailRoutes,
  spfRoutes,
  mailTlsRoutes,
  globalDnsRoutes,
  ctRoutes,
  ipRoutes,
  inspectRoutes,
  tlsRoutes,
  // After every lookup route: its tool list is read from them.
  mcpRoutes,
  siteRoutes,
];
