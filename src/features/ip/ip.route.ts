/**
 * IP facts: GET /api/my-ip, /api/ip-geo and /api/ip-privacy.
 *
 * Owns the feature's background work: the relay lists load their local copy
 * when the app is ready and then download in the background (never blocking
 * start-up); the geolocation database loads on first use, or right after the
 * server starts listening so the first visitor does not wait for it. onClose
 * cancels timers, aborts a download in flight and closes the database files.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { providerCatalog } from '../../providers/catalog.js';
import { GeoIpDatabase, pathList } from '../../providers/ip/geoip-mmdb.js';
import { createRelayLists } from '../../providers/ip/relay-lists.js';
import { RipestatGeo } from '../../providers/ip/ripestat.js';
import { errorResponses } from '../shared.schema.js';
import { connectionFacts } from './client-connection.js';
import {
  IpGeoResponseSchema,
  IpPrivacyResponseSchema,
  IpQuerySchema,
  MyIpResponseSchema,
} from './ip.schema.js';
import {
  describeConnection,
  LISTS_LOADING_RETRY_AFTER,
  lookupIpGeo,
  lookupIpPrivacy,
  PRIVACY_TTL,
} from './ip.service.js';

export default async function ipRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const log = base.log.child({ feature: 'ip' });
  const catalog = providerCatalog(ctx.config);

  const relays = createRelayLists({
    config: ctx.config,
    catalog,
    http: ctx.http,
    registry: ctx.registry,
    clock: ctx.clock,
    log,
  });
  const database = new GeoIpDatabase({
    info: catalog.geoip,
    mmdbPaths: pathList(ctx.config.geoipDb),
    asnPaths: pathList(ctx.config.geoipAsnDb),
    cacheDir: ctx.config.listCacheDir,
    clock: ctx.clock,
    log,
  });
  const ripestat = new RipestatGeo(catalog.ripestat, ctx.http, ctx.config.ripestatUrl);
  const geoProviders = [database, ripestat] as const;
  ctx.registry.registerChain('ip-geo', geoProviders);

  base.addHook('onReady', async () => relays.start());
  base.addHook('onListen', async () => database.warm());
  base.addHook('onClose', async () => {
    await Promise.all([relays.close(), database.close()]);
  });

  app.get(
    '/api/my-ip',
    {
      schema: {
        tags: ['ip'],
        summary:
          'The address that reached the service, with offline geolocation, AS and relay classification',
        description:
          'The public address that reached the service (it may be a VPN or relay egress): the socket peer, or, ' +
          'only when TRUST_PROXY trusts that peer, the client named by X-Forwarded-For (or RFC 7239 Forwarded). ' +
          'Edge metadata (Cloudflare cf-*, CloudFront cloudfront-viewer-* headers) is passed through only from ' +
          'a trusted proxy. Never cached (Cache-Control: no-store), never challenge-gated; every part that ' +
          'cannot be determined is null rather than an error. Location data describes a network region, ' +
          'never a device or home address; it comes from DB-IP ("IP Geolocation by DB-IP").',
        response: { 200: MyIpResponseSchema, ...errorResponses(429) },
      },
      // Passive: a visitor's own connection facts never need a lookup session (docs/architecture.md §5).
      config: { passive: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return describeConnection(
        { database, relays, resolver: ctx.dns },
        connectionFacts(request, ctx.config.trustProxy),
      );
    },
  );

  app.get(
    '/api/ip-geo',
    {
      schema: {
        tags: ['ip'],
        summary: 'Approximate public-network metadata for an IP: country, region, city, AS, network',
        description:
          'Approximate public-network metadata only: it describes the network an address belongs to, never ' +
          'a device or a home address. Primary: the offline DB-IP IP to City Lite database ("IP Geolocation ' +
          'by DB-IP", CC BY 4.0; show `attribution` with the data); fallback after a failure or a database miss: ' +
          'RIPEstat maxmind-geo-lite. AS number and organization from the ip-location-db ASN ranges. Private ' +
          'and special-use addresses have no such metadata: 400 naming the block. Cached 24 h.',
        querystring: IpQuerySchema,
        response: { 200: IpGeoResponseSchema, ...errorResponses(400, 429, 502) },
      },
    },
    async (request, reply) => {
      const { body, cache } = await lookupIpGeo(
        { chain: ctx.chain, providers: geoProviders, database, relays },
        request.query.ip,
      );
      reply.cacheable(cache);
      return body;
    },
  );

  app.get(
    '/api/ip-privacy',
    {
      schema: {
        tags: ['ip'],
        summary: 'Is this public IP a published relay egress (iCloud Private Relay, Tor exit)?',
        description:
          "Matches the address against iCloud Private Relay's published egress ranges (RFC 8805 geofeed) and " +
          "the Tor Project's bulk exit list, refreshed in the background every 24 h. A match identifies a relay " +
          'exit and does not reveal the original address; no match does not rule out a VPN or other proxy. ' +
          `Until the lists have loaded once, an address no loaded list matches gets 503 with Retry-After ` +
          `(${LISTS_LOADING_RETRY_AFTER} s), never a false "not a relay". Private and special-use addresses: 400. ` +
          `Cached ${PRIVACY_TTL / 3600} h.`,
        querystring: IpQuerySchema,
        response: { 200: IpPrivacyResponseSchema, ...errorResponses(400, 429, 503) },
      },
    },
    async (request, reply) => {
      const body = lookupIpPrivacy(relays, request.query.ip);
      // Answered from memory in microseconds: never stored in the service cache, so always a MISS.
      reply.cacheable({ hit: false, maxAge: PRIVACY_TTL });
      return body;
    },
  );
}
