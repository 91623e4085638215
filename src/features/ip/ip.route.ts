/**
 * IP facts: GET /api/my-ip, /api/ip-geo and /api/ip-privacy. The database, the relay
 * lists and RIPEstat, and their background work, belong to providers/plugins.ts (ipSources).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { answer } from '../../plugins/response-cache.js';
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

const PRIVACY_CACHE = { hit: false, maxAge: PRIVACY_TTL, expiresAt: 0 };

export default async function ipRoutes(base: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { database, relays, geo } = base.ipSources;
  const geoDeps = { chain: ctx.chain, providers: geo, database, relays, clock: ctx.clock };
  const myIpDeps = { database, relays, resolver: ctx.dns, clock: ctx.clock };

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
    // Never marked cacheable, so it leaves with `no-store` (plugins/http-headers.ts).
    async (request) => describeConnection(myIpDeps, connectionFacts(request, ctx.config.trustProxy)),
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
    async (request, reply) => answer(reply, await lookupIpGeo(geoDeps, request.query.ip)),
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
    // Answered from the lists in microseconds: never stored in the service cache, so always a MISS.
    async (request, reply) =>
      answer(reply, { body: lookupIpPrivacy(relays, request.query.ip), cache: PRIVACY_CACHE }),
  );
}
