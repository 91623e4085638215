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
import { TurnstileVerifier } from './challenge/turnstile.js';
import { type CtProvider, createCtProviders, ctAttemptTimeoutMs } from './ct/index.js';
import { createGlobalDnsProviders } from './global-dns/index.js';
import type { GlobalDnsProvider } from './global-dns/types.js';
import type { GeoProvider } from './ip/geo.js';
import { GeoIpDatabase, pathList } from './ip/geoip-mmdb.js';
import { createRelayLists, type RelayLists } from './ip/relay-lists.js';
import { RipestatGeo } from './ip/ripestat.js';
import { createRdapSources, type RdapSources } from './rdap/index.js';
import { safeHopSender } from './rdap/outbound.js';
import { createRoutingProviders, type RoutingProviders } from './routing/index.js';

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

async function ctProviders(app: FastifyInstance, { ctx }: Opts) {
  const providers = createCtProviders(ctx.config, ctx.http, ctx.crtsh);
  ctx.registry.registerChain('ct', providers);
  app.decorate('ctSources', { providers, attemptTimeoutMs: ctAttemptTimeoutMs(ctx.crtsh) });
}

async function rdapProviders(app: FastifyInstance, { ctx }: Opts) {
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
  const providers = createGlobalDnsProviders(ctx.config, ctx.http, {
    // Once per window, where it arises; the refused requests themselves are a state of the world.
    onQuotaSpent: ({ reason }) => app.log.warn({ provider: 'globalping', reason }, 'Globalping quota spent'),
  });
  ctx.registry.registerChain('global-dns', providers);
  app.decorate('globalDnsProviders', providers);
}

async function routingProviders(app: FastifyInstance, { ctx }: Opts) {
  const routing = createRoutingProviders(ctx.config, ctx.http, ctx.dns);
  ctx.registry.registerChain('routing', routing.origin);
  app.decorate('routingProviders', routing);
}

async function challengeProvider(app: FastifyInstance, { ctx }: Opts) {
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

/** In the order /api/providers lists the families (registration order). */
export const providerPlugins = [
  fp(rdapProviders, { name: 'providers-rdap' }),
  fp(challengeProvider, { name: 'providers-challenge' }),
  fp(globalDnsProviders, { name: 'providers-global-dns' }),
  fp(ctProviders, { name: 'providers-ct' }),
  fp(ipProviders, { name: 'providers-ip' }),
  fp(routingProviders, { name: 'providers-routing' }),
];
