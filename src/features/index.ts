/**
 * Every endpoint family, registered in this order by buildApp, after the provider families
 * (providers/plugins.ts), which build the adapters, register them and close them. Each is a
 * Fastify plugin taking the shared context that only routes: it takes its adapters from the
 * instance (`app.rdapSources`, `app.ctSources`, ...) or the context, so adding an endpoint
 * family is one line here (and one in providers/plugins.ts if it brings a provider family).
 *
 * Each line names the provider families its routes read and loads its module when it is
 * registered: the server registers every family, a one-shot `netdiag` command only the one its
 * tool is answered by (BuildOptions.features), so `netdiag dns` loads neither the GeoIP code
 * nor the other families' schemas and services.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { ProviderFamily } from '../providers/plugins.js';

export type Feature = (app: FastifyInstance, opts: { ctx: AppContext }) => Promise<void>;

export interface FeatureEntry {
  readonly name: string;
  /** The provider families its routes read (each decorates the instance: app.ipSources, ...). */
  readonly providers: readonly ProviderFamily[];
  readonly load: () => Promise<{ default: Feature }>;
}

export const features = [
  { name: 'rdap', providers: ['rdap'], load: () => import('./rdap/rdap.route.js') },
  { name: 'health', providers: ['ip'], load: () => import('./health/health.route.js') },
  // Lists every family's chains: only in a whole app.
  {
    name: 'providers',
    providers: ['rdap', 'challenge', 'global-dns', 'ct', 'ip', 'routing'],
    load: () => import('./providers/providers.route.js'),
  },
  { name: 'challenge', providers: ['challenge'], load: () => import('./challenge/challenge.route.js') },
  { name: 'dns', providers: [], load: () => import('./dns/dns.route.js') },
  { name: 'dnssec', providers: [], load: () => import('./dnssec/dnssec.route.js') },
  { name: 'email', providers: [], load: () => import('./email/email.route.js') },
  { name: 'spf', providers: [], load: () => import('./spf/spf.route.js') },
  { name: 'mail-tls', providers: [], load: () => import('./mail-tls/mail-tls.route.js') },
  { name: 'message', providers: [], load: () => import('./message/message.route.js') },
  { name: 'blocklists', providers: [], load: () => import('./blocklists/blocklists.route.js') },
  { name: 'global-dns', providers: ['global-dns'], load: () => import('./global-dns/global-dns.route.js') },
  { name: 'ct', providers: ['ct'], load: () => import('./ct/ct.route.js') },
  { name: 'ip', providers: ['ip'], load: () => import('./ip/ip.route.js') },
  { name: 'inspect', providers: ['routing'], load: () => import('./inspect/inspect.route.js') },
  { name: 'tls', providers: [], load: () => import('./tls/tls.route.js') },
  { name: 'tls-scan', providers: [], load: () => import('./tls-scan/tls-scan.route.js') },
  // After every lookup route: its tool list is read from them.
  { name: 'mcp', providers: [], load: () => import('./mcp/mcp.route.js') },
  { name: 'site', providers: [], load: () => import('./site/site.route.js') },
] as const satisfies readonly FeatureEntry[];

export type FeatureName = (typeof features)[number]['name'];
