/**
 * Every feature of the service, registered in this order by buildApp. Each is
 * a Fastify plugin taking the shared context; it builds its adapters from
 * ctx.config and registers them with ctx.registry, so adding an endpoint
 * family is one line here.
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
