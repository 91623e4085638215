/**
 * Fake RDAP services for the integration tests.
 *
 * `startFakeRdapOrg` answers as rdap.org does (rdap-org/rdap.org,
 * lib/server.php @ 7317a88): `GET /{type}/{object}`, path lower-cased, with a
 * 302 to the registry that holds it, or its own 404 with an empty body for an
 * object it knows no RDAP service for, 400 for a path it cannot read. In front
 * of it sits Cloudflare's rate limiting as about.rdap.org describes it
 * (rdap-org/about.rdap.org, index.html @ 2647111, "Rate Limits": at most 10
 * requests in 10 seconds per client, past that a 429): the 11th request in
 * any 10-second span is answered 429, and so is every request until the block
 * (the rule's "duration", here one period) has passed, whatever the rate
 * meanwhile (developers.cloudflare.com/waf/rate-limiting-rules, "Duration (or
 * mitigation timeout)"). Each 429 carries Retry-After, the seconds left of the
 * block (a rate limiting rule's dynamic Retry-After; Cloudflare's changelog,
 * 2026-03-12, "Retry-After HTTP header for retryable 1xxx errors"), and
 * error 1015's plain text. The count is a strict sliding one, the strictest
 * reading of "10 requests in 10 seconds". Every test client is 127.0.0.1, so
 * there is one counter; `clock` is the one the app under test reads, so no
 * test waits real seconds.
 */

import { sharedFixture } from '../shared-data.js';
import type { TargetReply } from './http-targets.js';
import { type FakeReply, type FakeRequest, type FakeUpstream, startFakeUpstream } from './https-upstream.js';

/** about.rdap.org, "Rate Limits". */
export const RDAP_ORG_LIMIT = { requests: 10, seconds: 10 } as const;

export interface FakeRdapOrg extends FakeUpstream {
  /** What Cloudflare's counter reads (ms); settable, Date.now unless a test sets it. */
  clock: () => number;
  /** Requests answered 429 by the rate limit rather than passed to rdap.org. */
  limited: FakeRequest[];
}

export interface FakeRdapOrgOptions {
  /** `"domain/google.com"` → the registry URL rdap.org redirects to; anything else is its 404. */
  redirects: Record<string, string>;
}

/** The object types rdap.org redirects for (lib/server.php, generateResponse). */
const TYPES = new Set(['domain', 'ip', 'autnum', 'entity', 'nameserver']);

export async function startFakeRdapOrg(opts: FakeRdapOrgOptions): Promise<FakeRdapOrg> {
  const periodMs = RDAP_ORG_LIMIT.seconds * 1000;
  /** When each request Cloudflare passed on arrived, oldest first. */
  let passed: number[] = [];
  let blockedUntil = Number.NEGATIVE_INFINITY;

  const tooMany = (now: number): FakeReply => ({
    status: 429,
    // Cloudflare's rate-limit error (1015), as it answers a client that is not a browser.
    headers: {
      'retry-after': String(Math.ceil((blockedUntil - now) / 1000)),
      'content-type': 'text/plain; charset=UTF-8',
    },
    body: 'error code: 1015',
  });

  const handler = (req: FakeRequest): FakeReply => {
    const now = fake.clock();
    if (now < blockedUntil) {
      fake.limited.push(req);
      return tooMany(now);
    }
    passed = passed.filter((at) => at > now - periodMs);
    if (passed.length >= RDAP_ORG_LIMIT.requests) {
      blockedUntil = now + periodMs;
      fake.limited.push(req);
      return tooMany(now);
    }
    passed.push(now);
    return rdapOrgAnswer(req.path, opts.redirects);
  };

  const upstream = await startFakeUpstream({ handler });
  const fake: FakeRdapOrg = Object.assign(upstream, {
    clock: Date.now,
    limited: [] as FakeRequest[],
    reset(): void {
      upstream.requests.length = 0;
      upstream.fault = 'none';
      fake.clock = Date.now;
      fake.limited = [];
      passed = [];
      blockedUntil = Number.NEGATIVE_INFINITY;
    },
  });
  return fake;
}

/** rdap.org itself: it lower-cases the path and redirects, or answers an empty 404 or 400. */
function rdapOrgAnswer(path: string, redirects: Record<string, string>): FakeReply {
  const headers = { 'access-control-allow-origin': '*', server: 'github.com/rdap-org/rdap.org' };
  const segments = path.toLowerCase().split('/').filter(Boolean);
  const [type, object] = segments;
  if (segments.length !== 2 || type === undefined || !TYPES.has(type)) {
    return { status: 400, headers, body: '' };
  }
  const location = redirects[`${type}/${object}`];
  return location === undefined
    ? { status: 404, headers, body: '' }
    : { status: 302, headers: { ...headers, location }, body: '' };
}

/** An RDAP answer from a registry target. */
export const rdapReply = (object: unknown, status = 200): TargetReply => ({
  status,
  headers: { 'content-type': 'application/rdap+json' },
  body: JSON.stringify(object),
});

/**
 * A capture from ../shared/fixtures/ with some hosts renamed (Verisign escapes slashes; parse
 * first, then rewrite the text). It throws without ../shared: its suites skip (hasShared).
 */
export function rewrittenFixture(path: string, hosts: Record<string, string> = {}): unknown {
  let text = JSON.stringify(sharedFixture(path));
  for (const [from, to] of Object.entries(hosts)) text = text.replaceAll(from, to);
  return JSON.parse(text);
}

/**
 * IANA's RDAP bootstrap service (RFC 9224) at `{url}` = `https://127.0.0.1:PORT/rdap`:
 * its real dns.json, ipv4.json and ipv6.json (../shared/fixtures/rdap/bootstrap/) with the
 * registries under test renamed, file by file (`{ dns: { 'https://rdap.verisign.com/…':
 * 'https://rdap.verisign.test/…' } }`). Every registry left as it is stays unresolvable.
 */
export function startFakeIanaBootstrap(
  renames: Partial<Record<'dns' | 'ipv4' | 'ipv6', Record<string, string>>>,
): Promise<FakeUpstream> {
  const routes = Object.fromEntries(
    (['dns', 'ipv4', 'ipv6'] as const).map((kind) => [
      `/${kind}.json`,
      { json: rewrittenFixture(`rdap/bootstrap/${kind}.json`, renames[kind]) },
    ]),
  );
  return startFakeUpstream({ prefix: '/rdap', routes });
}
