/**
 * A fake crt.sh on loopback that answers the JSON identity search as crt.sh
 * does (certwatch_db fnc/web_apis.fnc behind crtsh/crtsh-web):
 *
 * - The search value is `q` trimmed, a leading `%.` (or a `%…%` pair)
 *   stripped, so `q=%.example.com` and `q=example.com` are one search and get
 *   one answer. Any other `%` is refused the way crt.sh refuses it: its
 *   database error page quoting "Unsupported use of '%'" (SQLSTATE P0002).
 * - A search answers its recorded rows (`answers`, keyed by the lower-case
 *   value, as crt.sh matches case-insensitively; a value with none answers
 *   `[]`, as crt.sh does when nothing matches). The rows are crt.sh's JSON
 *   shape, `result_count` included; the fake does not rebuild them, so
 *   whether an answer reached crt.sh's 10 000-name limit is the recording's.
 * - `exclude=expired` keeps the rows whose `not_after` is not before the
 *   fake's clock. crt.sh filters before its limit, so at the limit it would
 *   fill the answer up again from the unexpired matches; the fake only drops.
 * - `failures` (per value, used in turn before the answer) stand for the 503s
 *   crt.sh answers instead: CRTSH_STATEMENT_TIMEOUT, crtshDatabaseError(...),
 *   CRTSH_DEADLINE, and the plain 502/503 of the servers in front.
 *
 *   const crtsh = await startCrtsh({ answers: { 'example.com': rows }, clock: () => NOW });
 *   crtsh.failures['example.com'] = [CRTSH_STATEMENT_TIMEOUT];  // the first search; then the rows
 *   crtsh.searches('example.com');   // the requests for it, however spelled
 *   crtsh.reset();                   // requests, fault and failures cleared; answers kept
 */
import {
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  fixtureText,
  startFakeUpstream,
} from './https-upstream.js';

/** crt.sh's database error page, rendered from its template: a statement timeout after 29 s. */
const ERROR_PAGE = fixtureText('ct/crtsh-503-statement-timeout.html');

/**
 * The page crt.sh's front end sends for any error of its database call
 * (crtsh-web request/webapis.go, request/templates/error.qtpl): HTTP 503,
 * the pgx error text HTML-escaped in a TEXTAREA.
 */
export function crtshDatabaseError(message: string, seconds = 1): FakeReply {
  const escaped = message
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
  const body = ERROR_PAGE.replace(
    /<B>\d+<\/B> seconds?/,
    `<B>${seconds}</B> second${seconds === 1 ? '' : 's'}`,
  )
    // A function replacement: the message may hold `$` patterns.
    .replace(
      /(<TEXTAREA[^>]*>)[\s\S]*?(<\/TEXTAREA>)/,
      (_m, open: string, close: string) => open + escaped + close,
    );
  return { status: 503, headers: { 'content-type': 'text/html; charset=UTF-8' }, body };
}

/** The database cancelled the search at its statement timeout (the captured page, unchanged). */
export const CRTSH_STATEMENT_TIMEOUT: FakeReply = {
  status: 503,
  headers: { 'content-type': 'text/html; charset=UTF-8' },
  body: ERROR_PAGE,
};

/** The request outlived the front end's own 30 s deadline (crtsh-web server/server.go). */
export const CRTSH_DEADLINE: FakeReply = {
  status: 503,
  headers: { 'content-type': 'text/plain' },
  body: 'ERROR',
};

/** A read replica cancelled the search to apply the primary's changes (PostgreSQL hot standby). */
export const CRTSH_RECOVERY_CONFLICT = crtshDatabaseError(
  'FATAL: terminating connection due to conflict with recovery (SQLSTATE 40001)',
);

/** nginx in front of crt.sh, overloaded or throttling (its limit_req answers 503). */
export const CRTSH_OVERLOADED: FakeReply = {
  status: 503,
  headers: { 'content-type': 'text/html' },
  body: '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>',
};

/**
 * The value crt.sh searches for, as web_apis.fnc derives it from `q`, or
 * undefined where it refuses the `%` (the only refusal the fake models).
 */
export function crtshSearchValue(q: string): string | undefined {
  let value = q.trim();
  if (value.length > 1) {
    if (value.startsWith('%') && value.endsWith('%')) value = value.slice(1, -1);
    else if (value.startsWith('%.')) value = value.slice(2);
  }
  // A trailing `%` turns into a prefix search in crt.sh; nothing here sends one.
  if (value.includes('%')) return undefined;
  return value.toLowerCase();
}

export interface CrtshOptions {
  /** The rows each search value answers; a value without any answers []. */
  answers?: Record<string, unknown[]>;
  /** For `exclude=expired`. Default Date.now. */
  clock?: () => number;
  /** e.g. '/crtsh'. Default '/crtsh', which also proves the adapter keeps a base URL's path. */
  prefix?: string;
}

export interface FakeCrtsh extends FakeUpstream {
  /** Rows by search value; settable. */
  answers: Record<string, unknown[]>;
  /** Replies by search value, one per request in turn, before the answer is served; reset() clears them. */
  failures: Record<string, FakeReply[]>;
  /** The requests that searched for `value`, however `q` spelled it. */
  searches(value: string): FakeRequest[];
}

export async function startCrtsh(opts: CrtshOptions = {}): Promise<FakeCrtsh> {
  const clock = opts.clock ?? Date.now;
  const upstream = await startFakeUpstream({
    prefix: opts.prefix ?? '/crtsh',
    handler: (req) => answer(req),
  });
  const answer = (req: FakeRequest): FakeReply => {
    if (req.path !== '/' || req.query.get('output') !== 'json') {
      return { status: 404, body: 'the fake crt.sh serves /?q=…&output=json only' };
    }
    const value = crtshSearchValue(req.query.get('q') ?? '');
    if (value === undefined) return crtshDatabaseError("ERROR: Unsupported use of '%' (SQLSTATE P0002)");
    const failure = crtsh.failures[value]?.shift();
    if (failure) return failure;
    const rows = crtsh.answers[value] ?? [];
    if (req.query.get('exclude') !== 'expired') return { json: rows };
    return { json: rows.filter((row) => !expiredBy(row, clock())) };
  };
  const resetUpstream = upstream.reset.bind(upstream);
  const crtsh: FakeCrtsh = Object.assign(upstream, {
    answers: { ...opts.answers },
    failures: {} as Record<string, FakeReply[]>,
    searches: (value: string) =>
      upstream.requests.filter((r) => crtshSearchValue(r.query.get('q') ?? '') === value.toLowerCase()),
    reset(): void {
      resetUpstream();
      crtsh.failures = {};
    },
  });
  return crtsh;
}

/** crt.sh's `exclude=expired` test: `not_after` (UTC, written without a zone) before now. */
function expiredBy(row: unknown, now: number): boolean {
  const notAfter = (row as { not_after?: unknown }).not_after;
  return typeof notAfter === 'string' && Date.parse(`${notAfter}Z`) < now;
}
