/**
 * Every provider family as a Fastify plugin (docs/architecture.md §1): each
 * builds its adapters from ctx.config, registers them with the provider
 * registry in chain order, decorates the instance with them, and owns their
 * lifecycle (background loads on ready/listen, files and timers closed on
 * close). Routes only read the decorations: they never build a provider or
 * register a hook. Registered by buildApp before the features, with
 * fastify-plugin so every feature sees the decorations.
 *
 * The DNS providers are not here: the DNS client is a shared mechanism every
 * feature stands on, built with the context (context.ts).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { providerCatalog } from './catalog.js';
import type { TurnstileVerifier } from './challenge/turnstile.js';
import type { CtProvider } from './ct/index.js';
import type { GlobalDnsProvider } from './global-dns/types.js';
import type { GeoProvider } from './ip/geo.js';
import type { GeoIpDatabase } from './ip/geoip-mmdb.js';
import type { RelayLists } from './ip/relay-lists.js';
import type { RdapSources } from './rdap/index.js';
import type { RoutingProviders } from './routing/index.js';

export interface CtSources {
  /** Chain order: crt.sh, then Cert Spotter (when its key is set). */
  providers: readonly CtProvider[];
  /** One attempt's budget: a crt.sh search may be retried once (exclude=expired). */
  attemptTimeoutMs: number;
}

export interface IpSources {
  /** The offline city (or country) database and the ASN table. */
  database: GeoIpDatabase;
  /** iCloud Private Relay egress ranges and Tor exits, refreshed in the background. */
  relays: RelayLists;
  /** The ip-geo chain: the database, then RIPEstat. */
  geo: readonly GeoProvider[];
}

declare module 'fastify' {
  interface FastifyInstance {
    ctSources: CtSources;
    rdapSources: RdapSources;
    globalDnsProviders: readonly GlobalDnsProvider[];
    routingProviders: RoutingProviders;
    ipSources: IpSources;
    turnstile: TurnstileVerifier;
  }
}

interface Opts {
  ctx: AppContext;
}

// Each family's code is imported when the family is registered: an app built for one tool
// (BuildOptions.features) loads only the families that tool reads.

async function ctProviders(app: FastifyInstance, { ctx }: Opts) {
  const { createCtProviders, ctAttemptTimeoutMs } = await import('./ct/index.js');
  const providers = createCtProviders(ctx.config, ctx.http, ctx.crtsh);
  ctx.registry.registerChain('ct', providers);
  app.decorate('ctSources', { providers, attemptTimeoutMs: ctAttemptTimeoutMs(ctx.crtsh) });
}

async function rdapProviders(app: FastifyInstance, { ctx }: Opts) {
  const [{ createRdapSources }, { safeHopSender }] = await Promise.all([
    import('./rdap/index.js'),
    import('./rdap/outbound.js'),
  ]);
  const sources = createRdapSources({
    config: ctx.config,
    http: ctx.http,
    clock: ctx.clock,
    budgets: ctx.rateLimitStore,
    // Registries, redirect targets and registrar links are named by upstream data, not by the operator.
    outbound: safeHopSender(ctx.outbound),
    onBootstrapStale: (kind, err) =>
      app.log.warn(
        { kind, err: `${err.kind}: ${err.message}` },
        'RDAP bootstrap refresh failed; using the stale copy',
      ),
  });
  ctx.registry.registerChain('rdap', sources.providers);
  app.decorate('rdapSources', sources);
}

async function globalDnsProviders(app: FastifyInstance, { ctx }: Opts) {
  const { createGlobalDnsProviders } = await import('./global-dns/index.js');
  const providers = createGlobalDnsProviders(ctx.config, ctx.http, {
    // Once per window, where it arises; the refused requests themselves are a state of the world.
    onQuotaSpent: ({ reason }) => app.log.warn({ provider: 'globalping', reason }, 'Globalping quota spent'),
  });
  ctx.registry.registerChain('global-dns', providers);
  app.decorate('globalDnsProviders', providers);
}

async function routingProviders(app: FastifyInstance, { ctx }: Opts) {
  const { createRoutingProviders } = await import('./routing/index.js');
  const routing = createRoutingProviders(ctx.config, ctx.http, ctx.dns);
  ctx.registry.registerChain('routing', routing.origin);
  app.decorate('routingProviders', routing);
}

async function challengeProvider(app: FastifyInstance, { ctx }: Opts) {
  const { TurnstileVerifier } = await import('./challenge/turnstile.js');
  const verifier = new TurnstileVerifier(ctx.config, ctx.http);
  ctx.registry.registerChain('challenge', [verifier]);
  app.decorate('turnstile', verifier);
}

/**
 * The relay lists load their local copy when the app is ready and then download in the
 * background (never blocking start-up), or, built with `relayLists: 'on-demand'` (a one-shot
 * CLI command), only once something reads them; the geolocation database loads on first use, or
 * right after the server starts listening so the first visitor does not wait for it.
 * Closing cancels timers, aborts a download in flight and closes the database files.
 */
async function ipProviders(app: FastifyInstance, { ctx }: Opts) {
  const [{ GeoIpDatabase, pathList }, { createRelayLists }, { RipestatGeo }] = await Promise.all([
    import('./ip/geoip-mmdb.js'),
    import('./ip/relay-lists.js'),
    import('./ip/ripestat.js'),
  ]);
  const log = app.log.child({ feature: 'ip' });
  const catalog = providerCatalog(ctx.config);
  const relays = createRelayLists({
    config: ctx.config,
    catalog,
    http: ctx.http,
    registry: ctx.registry,
    clock: ctx.clock,
    log,
    start: ctx.relayLists,
  });
  const database = new GeoIpDatabase({
    info: catalog.geoip,
    mmdbPaths: pathList(ctx.config.geoipDb),
    asnPaths: pathList(ctx.config.geoipAsnDb),
    cacheDir: ctx.config.listCacheDir,
    clock: ctx.clock,
    log,
  });
  const geo = [database, new RipestatGeo(catalog.ripestat, ctx.http, ctx.config.ripestatUrl)] as const;
  ctx.registry.registerChain('ip-geo', geo);
  app.decorate('ipSources', { database, relays, geo });
  if (relays.startsWhen === 'on-ready') app.addHook('onReady', async () => relays.start());
  app.addHook('onListen', async () => database.warm());
  app.addHook('onClose', async () => {
    await Promise.all([relays.close(), database.close()]);
  });
}

export type ProviderFamily = 'rdap' | 'challenge' | 'global-dns' | 'ct' | 'ip' | 'routing';

/** In the order /api/providers lists the families (registration order). */
export const providerPlugins = [
  { family: 'rdap', plugin: fp(rdapProviders, { name: 'providers-rdap' }) },
  { family: 'challenge', plugin: fp(challengeProvider, { name: 'providers-challenge' }) },
  { family: 'global-dns', plugin: fp(globalDnsProviders, { name: 'providers-global-dns' }) },
  { family: 'ct', plugin: fp(ctProviders, { name: 'providers-ct' }) },
  { family: 'ip', plugin: fp(ipProviders, { name: 'providers-ip' }) },
  { family: 'routing', plugin: fp(routingProviders, { name: 'providers-routing' }) },
] as const satisfies readonly { family: ProviderFamily; plugin: unknown }[];
