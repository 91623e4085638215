/**
 * The lookup session (docs/architecture.md §5) as the page lives it:
 *
 *   GET /api/challenge/status → protection off: nothing to do.
 *   protection on, no session → load the widget script from `script_url`, render it
 *   with `site_key`, POST its single-use token to /api/challenge/verify once, and
 *   keep the 15-minute session (HttpOnly cookie) until it expires or a lookup
 *   answers 403 `challenge_required`, which starts the same flow again.
 *
 * One flow at a time: concurrent lookups wait for the same promise. The widget
 * is handed in (turnstile.ts renders Cloudflare's into the page; tests use a
 * fake), and what the user sees is published as a small view state the page
 * subscribes to. No DOM here, so tests run it in Node.
 */
import { type Call, send as fetchSend, type Outcome, post, type Sender } from './api/client';
import type { ChallengeStatus, VerifyResult } from './api/types';

export type ChallengePhase = 'idle' | 'loading' | 'widget' | 'verifying' | 'failed';

export interface ChallengeView {
  phase: ChallengePhase;
  message?: string;
}

export class ChallengeFailed extends Error {
  override readonly name = 'ChallengeFailed';
  constructor(
    message: string,
    readonly outcome?: Outcome<unknown>,
  ) {
    super(message);
  }
}

export interface WidgetSettings {
  siteKey: string;
  scriptUrl: string;
}

/** The widget that proves a person is there (turnstile.ts in the page, a fake in tests). */
export interface TokenWidget {
  /** Shows the widget (calling `onShown` once it is on the page) and resolves with its single-use token. */
  token(settings: WidgetSettings, onShown: () => void): Promise<string>;
  /** Takes the widget off the page once its token was used. */
  clear(): void;
}

/** What a lookup needs of the session. */
export interface LookupSession {
  ensure(): Promise<void>;
  renew(): Promise<void>;
}

/** Re-verify a little before the cookie expires rather than race its expiry. */
const EXPIRY_MARGIN_MS = 10_000;

export interface ChallengeOptions {
  widget: TokenWidget;
  send?: Sender;
  now?: () => number;
}

export class Challenge implements LookupSession {
  private status: ChallengeStatus | null = null;
  private statusLoad: Promise<ChallengeStatus | null> | null = null;
  private expiresAt = 0;
  private flow: Promise<void> | null = null;
  private listeners = new Set<(view: ChallengeView) => void>();
  private sessionWaiters: (() => void)[] = [];
  private readonly widget: TokenWidget;
  private readonly send: Sender;
  private readonly now: () => number;
  view: ChallengeView = { phase: 'idle' };

  constructor(options: ChallengeOptions) {
    this.widget = options.widget;
    this.send = options.send ?? fetchSend;
    this.now = options.now ?? Date.now;
  }

  subscribe(listener: (view: ChallengeView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private publish(view: ChallengeView): void {
    this.view = view;
    for (const listener of this.listeners) listener(view);
  }

  /** Protection state, fetched once (again after a 403, when the server evidently thinks otherwise). */
  loadStatus(force = false): Promise<ChallengeStatus | null> {
    if (force || !this.statusLoad) {
      this.statusLoad = this.send<ChallengeStatus>({ method: 'GET', path: '/api/challenge/status' }).then(
        (res) => {
          // Unknown (say, a 429): lookups go ahead and a 403 brings us back here.
          if (!res.ok) return this.status;
          this.status = res.data;
          const expires = res.data.session.expires_at;
          if (res.data.session.valid && expires) this.expiresAt = Date.parse(expires);
          return this.status;
        },
      );
    }
    return this.statusLoad;
  }

  get active(): boolean {
    return this.status?.protection.active === true;
  }

  hasSession(now = this.now()): boolean {
    return this.expiresAt - EXPIRY_MARGIN_MS > now;
  }

  /** Resolves when lookups may run: protection off, a live session, or a freshly verified one. */
  async ensure(): Promise<void> {
    const status = await this.loadStatus();
    if (!status?.protection.active || this.hasSession()) return;
    this.flow ??= this.solve(status).finally(() => {
      this.flow = null;
    });
    return this.flow;
  }

  /** After a 403 challenge_required: the cookie is gone or expired, whatever we believed. */
  async renew(): Promise<void> {
    this.expiresAt = 0;
    const status = await this.loadStatus(true);
    if (!status?.protection.active) {
      // The server says protection is off yet answered 403: do not loop.
      throw new ChallengeFailed('the service asked for verification but reports protection as inactive');
    }
    this.flow ??= this.solve(status).finally(() => {
      this.flow = null;
    });
    return this.flow;
  }

  /** For passive requests that a server still gated: resolves once any session exists. */
  whenSession(): Promise<void> {
    if (this.hasSession()) return Promise.resolve();
    return new Promise((resolve) => this.sessionWaiters.push(resolve));
  }

  private async solve(status: ChallengeStatus): Promise<void> {
    const { site_key: siteKey, script_url: scriptUrl } = status.protection;
    if (!siteKey || !scriptUrl) {
      this.publish({ phase: 'failed', message: 'protection is on but the service sent no widget settings' });
      throw new ChallengeFailed('protection is on but the service sent no widget settings');
    }
    try {
      this.publish({ phase: 'loading' });
      const token = await this.widget.token({ siteKey, scriptUrl }, () => this.publish({ phase: 'widget' }));
      this.publish({ phase: 'verifying' });
      const call: Call = post('/api/challenge/verify', { token });
      const res = await this.send<VerifyResult>(call);
      this.widget.clear();
      if (!res.ok) throw new ChallengeFailed(res.error.error, res);
      if (res.data.verified && res.data.expires_at) this.expiresAt = Date.parse(res.data.expires_at);
      else if (!res.data.protection_active) this.expiresAt = Number.POSITIVE_INFINITY;
      this.publish({ phase: 'idle' });
      for (const wake of this.sessionWaiters.splice(0)) wake();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.publish({ phase: 'failed', message });
      throw err instanceof ChallengeFailed ? err : new ChallengeFailed(message);
    }
  }
}

/** A failed verification as the answer its lookup shows. */
function challengeOutcome(err: unknown): Outcome<unknown> {
  if (err instanceof ChallengeFailed && err.outcome && !err.outcome.ok) return err.outcome;
  const message = err instanceof Error ? err.message : String(err);
  return {
    ok: false,
    status: 403,
    error: { error: `verification did not complete: ${message}`, code: 'challenge_failed' },
    retryAfter: null,
    ms: 0,
  };
}

/**
 * One lookup call under the session rules: verify first when needed, and after
 * a 403 `challenge_required` verify afresh and send once more. A second 403 is
 * the answer: the page shows it rather than loop.
 */
export async function sendWithSession(
  call: Call,
  signal: AbortSignal,
  session: LookupSession,
  send: Sender = fetchSend,
): Promise<Outcome<unknown>> {
  try {
    await session.ensure();
  } catch (err) {
    return challengeOutcome(err);
  }
  let res = await send<unknown>(call, signal);
  if (!res.ok && res.status === 403 && res.error.code === 'challenge_required') {
    try {
      await session.renew();
    } catch (err) {
      return challengeOutcome(err);
    }
    res = await send<unknown>(call, signal);
  }
  return res;
}
