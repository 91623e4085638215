/**
 * /openapi.json, generated from the same TypeBox schemas the routes validate
 * and serialize with. Contract: OpenAPI 3.1.0, version 2.1.0, no version
 * segment in paths. Interactive docs at /docs.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { fixedJsonBody } from './compression.js';

export const CONTRACT_VERSION = '2.1.0';

const DESCRIPTION = `Public network diagnostics: DNS, email security, RDAP, live TLS and HTTP inspection,
certificate-transparency history, subdomains, a DNS measurement from ten countries, and IP facts.

Policy: cache first, the primary provider next, a fallback only after an operational failure.
Provider-backed answers carry \`source\`, \`source_id\` and \`providers_tried\`. Failures are never cached.
Every error body is JSON \`{error}\`. Limits: 30 requests / 60 s per address across the API, 6 / 60 s for
expensive live measurements (an answer already cached is not one: it costs a general request only);
exceeding either answers 429 with \`Retry-After\` in seconds.
The service never connects to a private or special-use address on a caller's behalf.

Challenge protection: when the operator configures both Turnstile keys (see \`GET /api/challenge/status\`),
every diagnostic endpoint needs a lookup session, and answers 403 \`{error, code: "challenge_required"}\`
without one. Scripts follow the same rule as browsers (nothing depends on the user agent): solve the
Turnstile widget once to get a single-use token, \`POST /api/challenge/verify {"token": "..."}\`, and send
the \`Set-Cookie\` session cookie back on every call for its 15 minutes. \`/api/challenge/*\`,
\`/api/my-ip\`, \`/api/providers\`, this document, docs and health endpoints never need it. A 429 comes
before a 403, so the rate limits apply whether or not a session is held.`;

async function openapiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'netdiag', version: CONTRACT_VERSION, description: DESCRIPTION },
      tags: [
        {
          name: 'dns',
          description: 'DNS records over DoH with a fallback resolver, and one question from ten countries',
        },
        { name: 'email', description: 'Mail authentication and transport security, scored 0–100' },
        { name: 'rdap', description: 'Registration data for domains and IP networks (RDAP)' },
        { name: 'tls', description: 'The certificate and TLS facts a host serves now' },
        { name: 'inspect', description: 'HTTP, TLS and network evidence for a public host' },
        { name: 'ct', description: 'Certificate-transparency history and the subdomains it names' },
        { name: 'ip', description: 'The caller’s address, IP geolocation and relay-egress classification' },
        { name: 'service', description: 'Service status and provider inventory' },
        { name: 'challenge', description: 'Challenge protection: status and the lookup session' },
        { name: 'operations', description: 'Health, readiness and metrics for operators' },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: false, validatorUrl: null },
    // Swagger UI runs only its own files (no inline script) and talks to this origin; it may
    // not be framed (clickjacking its "Try it out"). Inline styles: its React views set them.
    staticCSP: [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  });

  // The document is complete once the app is ready and never changes after.
  const document = fixedJsonBody(() => app.swagger());
  app.get(
    '/openapi.json',
    {
      schema: {
        tags: ['service'],
        summary: 'This OpenAPI 3.1.0 document',
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async (request, reply) => document(request, reply),
  );
}

export default fp(openapiPlugin, { name: 'openapi' });
