/**
 * Bad input, driven by the contract (issue 12). The app's own /openapi.json
 * says what every endpoint takes and answers; fast-check generates values
 * from each parameter's and body's schema, mixed with hostile strings, and
 * every answer must be documented: never a 500, a status the operation lists,
 * and a body that validates (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses)
 * against the schema documented for that status.
 *
 * Upstreams are fakes on loopback that answer at once (crt.sh, rdap.org,
 * Globalping, RIPEstat with real captures from ../shared, or without it an
 * empty crt.sh answer, the project's own Globalping scenario and 404s, whose
 * 200s then go unchecked; DNS from fixture zones, REFUSED for
 * every other name), so most lookups complete, a 200 is validated as often
 * as an error, and nothing leaves the machine: names in the fixture zones
 * resolve to documentation addresses, which outbound safety refuses before
 * connecting. Rate limits are raised for the suite.
 *
 * Then a table of hostile inputs that must be a 400 naming the parameter;
 * header injection; and secrets (session secret, cookies, tokens, API keys)
 * never reaching a log line, read back through test/helper.ts capturingLogger.
 *
 * A failing property prints fast-check's seed and counterexample; FUZZ_SEED=<n>
 * replays a run.
 */
import { type AddressInfo, connect } from 'node:net';
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../../src/config/index.js';
import { type FakeDnsServer, startFakeDnsServer } from '../fakes/dns-server.js';
import { startGlobalping } from '../fakes/globalping.js';
import { type FakeReply, type FakeUpstream, fixture, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';
import { capturingLogger } from '../helper.js';
import { hasShared, sharedFixture } from '../shared-data.js';

// ajv and ajv-formats are CommonJS with default exports; under NodeNext the callables are `.default`.
const Ajv2020 = Ajv2020Module.default;
const addFormats = formatsModule.default;

const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

// --- hostile strings ----------------------------------------------------------------------------

/** Inputs no endpoint may take as a name or an address; each must be a 400 naming the parameter. */
const HOSTILE_NAMES: Record<string, string> = {
  'control character': 'exam\u0007ple.com',
  NUL: 'example\u0000.com',
  'NUL, percent-encoded in the value': 'example%00.com',
  '10 KB target': `${'a'.repeat(60)}.`.repeat(170),
  'Unicode confusable (Cyrillic а in a Latin name)': 'exаmple.com',
  'mixed-script IDN (Greek ο in a Latin label)': 'gοogle.com',
  'percent-encoded dots': 'example%2Ecom',
  localhost: 'localhost',
  'a localhost name': 'api.localhost',
  'wildcard root "*."': '*.',
  wildcard: '*.example.com',
  'IPv6 zone id': 'fe80::1%eth0',
  'IPv6 zone id, bracketed': '[fe80::1%25eth0]',
  'CRLF in the parameter': 'example.com\r\nX-Injected: yes',
  'LF in the parameter': 'example.com\nSet-Cookie: nd_session=forged',
  'a URL with a path': 'example.com/admin',
  'a query smuggled in the name': 'evil.test?example.com',
  'right-to-left override': 'example\u202e.com',
  'only dots': '...',
};

/** More strings for the generators: oddities that must never crash anything. */
const ODD_STRINGS = [
  ...Object.values(HOSTILE_NAMES),
  '',
  ' ',
  '.',
  '-',
  '_',
  '[]',
  '[::1]',
  '0x7f.1',
  '0177.0.0.1',
  '2130706433',
  '::ffff:127.0.0.1',
  '169.254.169.254',
  'example.com.',
  'EXAMPLE.COM',
  'xn--bcher-kva.com',
  'xn--zz.com',
  'bücher.com',
  '例え.テスト',
  '\uFEFFexample.com',
  '\uD800',
  '🦄.com',
  '../../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR '1'='1",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text of a log4shell probe.
  '${jndi:ldap://127.0.0.1/a}',
  '%s%s%s%n',
  `${'a'.repeat(64)}.com`,
  'x'.repeat(300),
  'http://example.com/',
  'example.com:443',
  '_dmarc.example.com',
  's1,s2,s3,s4,s5,s6',
  'true',
  'null',
  '{}',
];

/**
 * Public addresses, only for parameters that are looked up, never connected to (`ip`): as a
 * `target` one would send /api/tls or /api/inspect to the internet.
 */
const PUBLIC_IPS = ['1.1.1.1', '2606:4700:4700::1111', '193.0.6.139', '8.8.8.8'];

/** Names the fake DNS answers (the rest get REFUSED: an operational failure, a 502). */
const ZONE_NAMES = [
  'example.com',
  'www.example.com',
  'example.test',
  'mail.example.test',
  'shop.example.com',
];

/** Percent-encodes every UTF-8 byte of a value, so any string (lone surrogates included) fits in a URL. */
function pct(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

// --- the contract -------------------------------------------------------------------------------

interface SchemaLike {
  type?: string | string[];
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, SchemaLike>;
  required?: string[];
  anyOf?: SchemaLike[];
  examples?: unknown[];
  example?: unknown;
  default?: unknown;
}

interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string; required?: boolean; schema: SchemaLike; example?: unknown }[];
  body: SchemaLike | undefined;
  responses: Record<string, { content?: Record<string, { schema: SchemaLike }> }>;
}

function operations(doc: { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> }) {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const raw = op as unknown as {
        parameters?: Operation['parameters'];
        requestBody?: { content?: Record<string, { schema: SchemaLike }> };
        responses: Operation['responses'];
      };
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: raw.parameters ?? [],
        body: raw.requestBody?.content?.['application/json']?.schema,
        responses: raw.responses,
      });
    }
  }
  return out;
}

/** Values for one schema: valid ones drawn from it, type confusion, and the odd strings. */
function valuesFor(schema: SchemaLike, param: string): fc.Arbitrary<unknown> {
  const examples = [schema.example, schema.default, ...(schema.examples ?? [])].filter(
    (v) => v !== undefined,
  );
  const odd = fc.constantFrom(...ODD_STRINGS);
  if (schema.enum) {
    const values = schema.enum;
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...values) },
      { weight: 1, arbitrary: fc.constantFrom(...values).map((v) => String(v).toLowerCase()) },
      { weight: 1, arbitrary: odd },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    );
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'boolean') {
    return fc.oneof(fc.boolean(), fc.constantFrom('true', 'false', '1', '0', 'yes', ''), odd);
  }
  if (type === 'integer' || type === 'number') {
    return fc.oneof(
      fc.integer(),
      fc.double(),
      fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 0),
      odd,
    );
  }
  const plausible =
    param === 'ip'
      ? fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.constantFrom(...PUBLIC_IPS))
      : /selector/.test(param)
        ? fc
            .array(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), { minLength: 1, maxLength: 7 })
            .map((a) => a.join(','))
        : /token/.test(param)
          ? fc.string({ minLength: 1, maxLength: 64 })
          : fc.oneof(fc.constantFrom(...ZONE_NAMES), fc.domain());
  return fc.oneof(
    { weight: 4, arbitrary: plausible },
    { weight: 2, arbitrary: odd },
    { weight: 1, arbitrary: examples.length > 0 ? fc.constantFrom(...examples) : plausible },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: (schema.maxLength ?? 64) + 4 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  );
}

/** What goes on the wire: one request per generated case. */
interface Case {
  url: string;
  payload?: string;
  headers: Record<string, string>;
}

function requestOf(op: Operation): fc.Arbitrary<Case> {
  const query = op.parameters.filter((p) => p.in === 'query');
  const params = fc.tuple(
    ...query.map((p) =>
      fc
        .option(valuesFor(p.schema, p.name), { freq: p.required ? 10 : 2, nil: undefined })
        .map((v) => [p.name, v] as const),
    ),
  );
  const extra = fc.option(
    fc.tuple(fc.constantFrom('x', '__proto__', 'target[]', 'type', '%00'), fc.string({ maxLength: 8 })),
    {
      freq: 6,
      nil: undefined,
    },
  );
  const rawTail = fc.option(fc.constantFrom('&%ff%fe', '&%E0%A4%A', '&a=%c0%af', '&&&', '&=x'), {
    freq: 10,
    nil: undefined,
  });
  const body = op.body ? bodyOf(op.body) : fc.constant(undefined);
  return fc.tuple(params, extra, rawTail, body).map(([values, more, tail, payload]) => {
    const pairs: string[] = [];
    for (const [name, value] of values) {
      if (value === undefined) continue;
      pairs.push(`${name}=${pct(typeof value === 'string' ? value : JSON.stringify(value))}`);
    }
    if (more) pairs.push(`${pct(more[0])}=${pct(more[1])}`);
    const qs = pairs.join('&') + (tail ?? '');
    const url = qs === '' ? op.path : `${op.path}?${qs}`;
    const headers: Record<string, string> = {};
    if (payload !== undefined) headers['content-type'] = payload.type;
    return { url, headers, ...(payload !== undefined ? { payload: payload.text } : {}) };
  });
}

/** A JSON body from the schema, with missing, extra and mistyped fields, or a raw text that is not one. */
function bodyOf(schema: SchemaLike): fc.Arbitrary<{ type: string; text: string }> {
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const confused = fc.oneof(
    fc.integer(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.object({ maxDepth: 1 }),
  );
  const object = fc
    .tuple(
      ...props.map(([name, s]) =>
        fc
          .option(
            fc.oneof({ weight: 5, arbitrary: valuesFor(s, name) }, { weight: 1, arbitrary: confused }),
            {
              freq: required.has(name) ? 12 : 2,
              nil: undefined,
            },
          )
          .map((v) => [name, v] as const),
      ),
      fc.option(fc.tuple(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), {
        freq: 5,
        nil: undefined,
      }),
    )
    .map(([...entries]) => {
      const extra = entries.pop() as [string, unknown] | undefined;
      const obj: Record<string, unknown> = {};
      for (const [name, value] of entries as (readonly [string, unknown])[])
        if (value !== undefined) obj[name] = value;
      if (extra) obj[extra[0]] = extra[1];
      return { type: 'application/json', text: JSON.stringify(obj) };
    });
  const raw = fc.constantFrom(
    { type: 'application/json', text: '{"target": "example.com",' },
    { type: 'application/json', text: '[1,2]' },
    { type: 'application/json', text: 'null' },
    { type: 'application/json', text: '"example.com"' },
    { type: 'application/json', text: '' },
    {
      type: 'application/json',
      text: '{"target":"example.com","target":"localhost","type":"A","token":"a"}',
    },
    {
      type: 'application/json',
      text: '{"__proto__":{"admin":true},"target":"example.com","type":"A","token":"a"}',
    },
    { type: 'application/json', text: `${'['.repeat(5000)}${']'.repeat(5000)}` },
    { type: 'application/json', text: JSON.stringify({ target: 'x'.repeat(20_000), type: 'A', token: 'a' }) },
    { type: 'application/json; charset=utf-16', text: '{"token":"a"}' },
    { type: 'text/plain', text: 'target=example.com' },
    { type: 'application/x-www-form-urlencoded', text: 'token=a' },
  );
  return fc.oneof({ weight: 6, arbitrary: object }, { weight: 1, arbitrary: raw });
}

// --- the app under test -------------------------------------------------------------------------

interface Environment {
  app: FastifyInstance;
  dns: FakeDnsServer;
  doc: Parameters<typeof operations>[0];
  ajv: InstanceType<typeof Ajv2020>;
  close(): Promise<void>;
}

/** Fakes, the app and the contract, built at collection time so there is one test per documented operation. */
async function startEnvironment(): Promise<Environment> {
  const ca = (await getTestPki()).caPem;
  const dns = await startFakeDnsServer();
  const rdapDomain = (name: string) => ({
    objectClassName: 'domain',
    handle: 'FUZZ-1',
    ldhName: name,
    status: ['active'],
    events: [{ eventAction: 'registration', eventDate: '2001-02-03T04:05:06Z' }],
  });
  const rdapType = { 'content-type': 'application/rdap+json' };
  /** A real capture's reply (../shared), or `absent` without it: the lookup then fails or finds nothing. */
  const real = (rel: string, absent: FakeReply, headers?: Record<string, string>): FakeReply =>
    hasShared ? { ...(headers ? { headers } : {}), json: sharedFixture(rel) } : absent;
  const notFound: FakeReply = { status: 404, json: { status: 'error' } };
  const fakes = await Promise.all([
    startFakeUpstream({ handler: () => real('ct/crtsh-example.com.json', { json: [] }) }),
    startFakeUpstream({
      handler: (req) =>
        req.path.startsWith('/ip/')
          ? real('rdap/apnic-ip-1.1.1.1.json', { status: 404, headers: rdapType, body: '' }, rdapType)
          : { headers: rdapType, json: rdapDomain(req.path.split('/').pop() ?? 'x') },
    }),
    startGlobalping({
      createReply: { status: 202, json: { id: 'fuzz', probesCount: 1 } },
      pollReplies: [
        real('globalping/get-measurement-dns.json', {
          json: fixture('globalping/scenarios/ten-finished-consistent.json'),
        }),
      ],
    }),
    startFakeUpstream({
      handler: (req) => {
        const call = req.path.split('/')[2] ?? '';
        return ['routing-status', 'prefix-overview', 'maxmind-geo-lite'].includes(call)
          ? real(`ripestat/${call}.json`, notFound)
          : notFound;
      },
    }),
  ]);
  const [crtsh, rdap, globalping, ripestat] = fakes as [
    FakeUpstream,
    FakeUpstream,
    FakeUpstream,
    FakeUpstream,
  ];
  const app = await buildApp(
    testConfig({
      loadShedEventLoopDelayMs: 0,
      dnsResolvers: [dns.udp],
      crtshUrl: crtsh.url,
      rdapAggregatorUrl: rdap.url,
      rdapBootstrapUrl: 'https://127.0.0.1:9',
      globalpingUrl: globalping.url,
      ripestatUrl: ripestat.url,
      providerTimeoutMs: 1500,
      rateLimitGeneral: { points: 1_000_000, seconds: 60 },
      rateLimitExpensive: { points: 1_000_000, seconds: 60 },
      // Past rdap.org's budget every lookup would be the bootstrap path's 502: keep the answers coming.
      rdapAggregatorRateLimit: { points: 1_000_000, seconds: 10 },
    }),
    { ca, logger: pino({ level: 'silent' }) },
  );
  await app.ready();
  const doc = (await app.inject('/openapi.json')).json() as Environment['doc'];
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema(doc as object, 'openapi.json');
  return {
    app,
    dns,
    doc,
    ajv,
    async close() {
      await app.close();
      await Promise.all([dns.close(), ...fakes.map((f) => f.close())]);
    },
  };
}

const env = await startEnvironment();
afterAll(() => env.close());

const validators = new Map<string, ValidateFunction>();
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The documented schema of `status` for `op`, compiled once; undefined when the status is not documented. */
function validatorFor(op: Operation, status: number, contentType: string): ValidateFunction | undefined {
  const content = op.responses[String(status)]?.content ?? {};
  const type = Object.keys(content).find((t) => contentType.startsWith(t)) ?? Object.keys(content)[0];
  if (!type) return undefined;
  const ref = `openapi.json#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', type, 'schema')}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = env.ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

/** Every way an answer can break the contract; empty when it keeps it. */
function contractBreaches(op: Operation, res: LightMyRequestResponse): string[] {
  const breaches: string[] = [];
  if (res.statusCode >= 500 && res.statusCode !== 502 && res.statusCode !== 503)
    breaches.push(`status ${res.statusCode}`);
  const contentType = String(res.headers['content-type'] ?? '');
  const validate = validatorFor(op, res.statusCode, contentType);
  if (!validate) {
    breaches.push(`status ${res.statusCode} is not documented for ${op.method} ${op.path}`);
    return breaches;
  }
  let body: unknown = res.body;
  if (contentType.startsWith('application/json')) {
    try {
      body = JSON.parse(res.body);
    } catch {
      breaches.push('the body is not JSON although labelled so');
      return breaches;
    }
  }
  if (!validate(body)) {
    const errors = (validate.errors ?? []) as ErrorObject[];
    breaches.push(
      `body does not match the documented ${res.statusCode} schema: ${errors
        .slice(0, 3)
        .map((e) => `${e.instancePath || '/'} ${e.message}`)
        .join('; ')}`,
    );
  }
  return breaches;
}

describe('every operation in /openapi.json, fuzzed from its own schema', () => {
  const ops = operations(env.doc);

  it('lists the endpoints that exist today', () => {
    const names = ops.map((o) => `${o.method} ${o.path}`);
    for (const expected of [
      'GET /api/dns',
      'GET /api/rdap',
      'POST /api/global-dns',
      'POST /api/challenge/verify',
    ]) {
      expect(names).toContain(expected);
    }
  });

  for (const op of ops) {
    it(`${op.method} ${op.path}: no 500, every status documented, every body valid`, async () => {
      await fc.assert(
        fc.asyncProperty(requestOf(op), async (c) => {
          const res = await env.app.inject({
            method: op.method as 'GET' | 'POST',
            url: c.url,
            headers: c.headers,
            ...(c.payload !== undefined ? { payload: c.payload } : {}),
          });
          const breaches = contractBreaches(op, res);
          if (breaches.length > 0) {
            const sent = `${op.method} ${c.url}${c.payload ? ` ${c.payload.slice(0, 200)}` : ''}`;
            throw new Error(
              `${sent} → ${res.statusCode}: ${breaches.join(' | ')}\n${res.body.slice(0, 300)}`,
            );
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }, 60_000);
  }
});

describe('hostile inputs: 400 naming the parameter, never a lookup', () => {
  /** Each endpoint that takes a name or an address, with the parameter it names in its error. */
  const ENDPOINTS: { name: string; param: string; request: (value: string) => InjectOptions }[] = [
    { name: 'GET /api/dns', param: 'target', request: (v) => ({ url: `/api/dns?target=${pct(v)}` }) },
    {
      name: 'GET /api/dns type=PTR',
      param: 'target',
      request: (v) => ({ url: `/api/dns?type=PTR&target=${pct(v)}` }),
    },
    {
      name: 'GET /api/rdap type=domain',
      param: 'target',
      request: (v) => ({ url: `/api/rdap?type=domain&target=${pct(v)}` }),
    },
    {
      name: 'GET /api/rdap type=ip',
      param: 'target',
      request: (v) => ({ url: `/api/rdap?type=ip&target=${pct(v)}` }),
    },
    {
      name: 'GET /api/email-security',
      param: 'domain',
      request: (v) => ({ url: `/api/email-security?domain=${pct(v)}` }),
    },
    {
      name: 'GET /api/certificates',
      param: 'domain',
      request: (v) => ({ url: `/api/certificates?domain=${pct(v)}` }),
    },
    {
      name: 'GET /api/subdomains',
      param: 'domain',
      request: (v) => ({ url: `/api/subdomains?domain=${pct(v)}` }),
    },
    { name: 'GET /api/inspect', param: 'target', request: (v) => ({ url: `/api/inspect?target=${pct(v)}` }) },
    {
      name: 'GET /api/inspect ip=',
      param: 'ip',
      request: (v) => ({ url: `/api/inspect?target=example.com&ip=${pct(v)}` }),
    },
    { name: 'GET /api/tls', param: 'target', request: (v) => ({ url: `/api/tls?target=${pct(v)}` }) },
    { name: 'GET /api/ip-geo', param: 'ip', request: (v) => ({ url: `/api/ip-geo?ip=${pct(v)}` }) },
    { name: 'GET /api/ip-privacy', param: 'ip', request: (v) => ({ url: `/api/ip-privacy?ip=${pct(v)}` }) },
    {
      name: 'POST /api/global-dns',
      param: 'target',
      request: (v) => ({ method: 'POST', url: '/api/global-dns', payload: { target: v, type: 'A' } }),
    },
  ];

  const rows = ENDPOINTS.flatMap((e) =>
    Object.entries(HOSTILE_NAMES).map(([what, value]) => ({ ...e, what, value })),
  );

  it.each(rows)('$name: $what → 400', async ({ param, request, value }) => {
    const lookupsBefore = env.dns.counts.udp;
    const res = await env.app.inject(request(value));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as { error: string; code: string };
    expect(body.code).toBe('bad_request');
    // A clear message names the parameter (or, for a refused body, the body).
    expect(body.error).toMatch(new RegExp(`\\b(${param}|body)\\b`));
    // Refused before anything was asked of DNS.
    expect(env.dns.counts.udp).toBe(lookupsBefore);
  });

  const BODIES: [string, string][] = [
    ['a duplicate key', '{"target":"example.com","target":"localhost","type":"A","token":"t"}'],
    [
      'a duplicate key, escaped differently',
      '{"type":"A","target":"example.com","\\u0074arget":"evil.test","token":"t"}',
    ],
    ['a __proto__ key', '{"__proto__":{"isAdmin":true},"target":"example.com","type":"A","token":"t"}'],
    [
      'an escaped __proto__ key',
      '{"\\u005f_proto__":{"isAdmin":true},"target":"example.com","type":"A","token":"t"}',
    ],
    [
      'constructor.prototype',
      '{"constructor":{"prototype":{"isAdmin":true}},"target":"example.com","type":"A","token":"t"}',
    ],
    ['a nested duplicate', '{"target":"example.com","type":"A","token":"t","x":{"a":1,"a":2}}'],
  ];
  it.each(
    BODIES.flatMap(([what, text]) =>
      ['/api/global-dns', '/api/challenge/verify'].map((url) => ({ what, text, url })),
    ),
  )('POST $url with $what → 400 naming the key', async ({ text, url }) => {
    const res = await env.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: text,
    });
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json() as { error: string; code: string };
    expect(body.code).toBe('bad_request');
    expect(body.error).toMatch(/^body refused: the key "[^"]+"/);
  });
});

describe('no header injection', () => {
  const INJECTIONS = [
    'example.com\r\nX-Injected: yes',
    'example.com\r\n\r\n<html>',
    'example.com\nSet-Cookie: nd_session=forged',
    'example.com\rLocation: https://evil.test/',
    '\u010d\u010aX-Injected: yes',
  ];
  const URLS = [
    '/api/dns?target=',
    '/api/rdap?type=domain&target=',
    '/api/email-security?domain=',
    '/api/certificates?domain=',
    '/api/inspect?target=',
    '/api/tls?target=',
    '/api/ip-geo?ip=',
    '/no/such/route?x=',
  ];

  it('CR or LF in any parameter never reaches a response header (inject)', async () => {
    for (const url of URLS) {
      for (const value of INJECTIONS) {
        const res = await env.app.inject({
          url: `${url}${pct(value)}`,
          headers: { 'x-request-id': 'probe-1' },
        });
        expect(res.statusCode).toBeLessThan(500);
        expect(Object.keys(res.headers)).not.toContain('x-injected');
        expect(String(res.headers['set-cookie'] ?? '')).not.toContain('forged');
        expect(res.headers.location).toBeUndefined();
        for (const [name, v] of Object.entries(res.headers)) expect(String(v), name).not.toMatch(/[\r\n]/);
      }
    }
  });

  it('on a real socket: the response head carries only the service’s own headers', async () => {
    const server = await buildApp(testConfig({ loadShedEventLoopDelayMs: 0, dnsResolvers: [env.dns.udp] }), {
      logger: pino({ level: 'silent' }),
    });
    try {
      await server.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.server.address() as AddressInfo;
      for (const value of INJECTIONS) {
        const head = await rawRequest(
          port,
          `GET /api/dns?target=${pct(value)} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            // A request id that tries the same: only [A-Za-z0-9._-] is echoed, anything else is replaced.
            `X-Request-Id: ${encodeURIComponent(value)}\r\nConnection: close\r\n\r\n`,
        );
        expect(head).toMatch(/^HTTP\/1\.1 400 /);
        const names = head
          .split('\r\n')
          .slice(1)
          .map((line) => line.split(':')[0]?.toLowerCase());
        expect(names).not.toContain('x-injected');
        expect(names).not.toContain('location');
        expect(names).not.toContain('set-cookie');
        expect(head).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
      }
    } finally {
      await server.close();
    }
  });
});

/** Sends `request` as is and resolves with the response head. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data.split('\r\n\r\n')[0] ?? ''));
    socket.end(request);
  });
}

describe('logs never contain secrets', () => {
  const SECRETS = {
    session: 'SESSION-secret-never-logged-0123456789abcdef',
    turnstile: 'TURNSTILE-secret-never-logged-0x4AAAAA',
    certspotter: 'CERTSPOTTER-key-never-logged-cs_live',
    globalping: 'GLOBALPING-token-never-logged-gp',
    token: 'TOKEN-never-logged-widget-response',
    authorization: 'AUTHORIZATION-never-logged-bearer',
  };

  it.skipIf(!hasShared)('at trace level, through success, failure and crash paths', async () => {
    const { logger, lines } = capturingLogger('trace');
    const siteverify = await startFakeUpstream({
      routes: {
        'POST /siteverify': (req) => {
          const form = new URLSearchParams(req.body.toString('utf8'));
          if (form.get('secret') !== SECRETS.turnstile)
            return { json: { success: false, 'error-codes': ['invalid-input-secret'] } };
          return form.get('response') === SECRETS.token
            ? { json: sharedFixture('turnstile/siteverify-success.json') }
            : { json: { success: false, 'error-codes': ['invalid-input-response'] } };
        },
      },
    });
    // Cert Spotter refuses the key and Globalping fails: their error paths are logged and reported.
    const certspotter = await startFakeUpstream({
      handler: () => ({ status: 401, json: { code: 'unauthorized' } }),
    });
    const globalping = await startFakeUpstream({});
    globalping.fault = '503';
    let cookieValue = '';
    const crtsh = await startFakeUpstream({});
    crtsh.fault = '503';
    const app = await buildApp(
      testConfig({
        loadShedEventLoopDelayMs: 0,
        logLevel: 'trace',
        dnsResolvers: [env.dns.udp],
        sessionSecret: SECRETS.session,
        sessionSecretConfigured: true,
        turnstileSiteKey: '1x00000000000000000000AA',
        turnstileSecretKey: SECRETS.turnstile,
        turnstileVerifyUrl: `${siteverify.url}/siteverify`,
        crtshUrl: crtsh.url,
        certspotterUrl: certspotter.url,
        certspotterApiKey: SECRETS.certspotter,
        globalpingUrl: globalping.url,
        globalpingToken: SECRETS.globalping,
        providerTimeoutMs: 1500,
      }),
      { ca: (await getTestPki()).caPem, logger },
    );
    app.get('/api/crash', async () => {
      throw new Error('a bug');
    });
    try {
      await app.ready();
      const verified = await app.inject({
        method: 'POST',
        url: '/api/challenge/verify',
        headers: { authorization: `Bearer ${SECRETS.authorization}` },
        payload: { token: SECRETS.token },
      });
      expect(verified.statusCode).toBe(200);
      const cookie = String(verified.headers['set-cookie']).split(';')[0] ?? '';
      cookieValue = cookie.split('=')[1] ?? '';
      expect(cookieValue.length).toBeGreaterThan(20);
      const headers = { cookie, authorization: `Bearer ${SECRETS.authorization}` };
      // A replay, a rejected token, lookups that succeed and fail, a crash.
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/api/challenge/verify',
            payload: { token: SECRETS.token },
          })
        ).statusCode,
      ).toBe(403);
      await app.inject({
        method: 'POST',
        url: '/api/challenge/verify',
        payload: { token: `${SECRETS.token}-2` },
      });
      expect((await app.inject({ url: '/api/dns?target=example.com', headers })).statusCode).toBe(200);
      expect((await app.inject({ url: '/api/certificates?domain=example.com', headers })).statusCode).toBe(
        502,
      );
      expect(
        (
          await app.inject({
            method: 'POST',
            url: '/api/global-dns',
            headers,
            payload: { target: 'example.com', type: 'A' },
          })
        ).statusCode,
      ).toBe(502);
      expect((await app.inject({ url: '/api/crash', headers })).statusCode).toBe(500);
      expect((await app.inject({ url: '/api/challenge/status', headers })).statusCode).toBe(200);
    } finally {
      await app.close();
      await Promise.all([siteverify.close(), certspotter.close(), globalping.close(), crtsh.close()]);
    }
    const logged = lines();
    expect(logged.length).toBeGreaterThan(5);
    // The crash is logged (with its request id), just without anything secret.
    expect(logged.some((l) => l.level === 50)).toBe(true);
    const text = JSON.stringify(logged);
    for (const [what, secret] of Object.entries(SECRETS)) expect(text, what).not.toContain(secret);
    // The session cookie's value, and its signature alone.
    expect(text).not.toContain(cookieValue);
    expect(text).not.toContain(cookieValue.split('.').pop());
  });
});
