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
 * lives in a slot the page renders (`#challenge-slot`); what the user sees is
 * published as a small view state the page subscribes to.
 */
import { type Call, type Outcome, post, send } from './api/client';
import type { ChallengeStatus, VerifyResult } from './api/types';

interface TurnstileRenderOptions {
  sitekey: string;
  callback: (token: string) => void;
  'error-callback'?: (code?: string) => void;
  'expired-callback'?: () => void;
  theme?: 'auto' | 'light' | 'dark';
  action?: string;
}

/** The part of Cloudflare's widget API the page uses (and the test fake implements). */
interface TurnstileApi {
  render(container: HTMLElement, options: TurnstileRenderOptions): string | undefined;
  remove?(widgetId: string): void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

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

export const SLOT_ID = 'challenge-slot';
/** Re-verify a little before the cookie expires rather than race its expiry. */
const EXPIRY_MARGIN_MS = 10_000;

function loadScript(src: string): Promise<TurnstileApi> {
  return new Promise((resolve, reject) => {
    if (window.turnstile) return resolve(window.turnstile);
    const script = document.createElement('script');
    const url = new URL(src, location.href);
    // Cloudflare's documented switch for rendering from code instead of scanning the page.
    if (!url.searchParams.has('render')) url.searchParams.set('render', 'explicit');
    script.src = url.href;
    script.async = true;
    script.onload = () =>
      window.turnstile
        ? resolve(window.turnstile)
        : reject(new ChallengeFailed('the verification widget loaded but did not start'));
    script.onerror = () =>
      reject(
        new ChallengeFailed(
          'the verification widget could not be loaded (blocked by the network or an extension?)',
        ),
      );
    document.head.append(script);
  });
}

export class Challenge {
  private status: ChallengeStatus | null = null;
  private statusLoad: Promise<ChallengeStatus | null> | null = null;
  private expiresAt = 0;
  private flow: Promise<void> | null = null;
  private listeners = new Set<(view: ChallengeView) => void>();
  private sessionWaiters: (() => void)[] = [];
  view: ChallengeView = { phase: 'idle' };

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
      this.statusLoad = send<ChallengeStatus>({ method: 'GET', path: '/api/challenge/status' }).then(
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

  hasSession(now = Date.now()): boolean {
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
      const turnstile = await loadScript(scriptUrl);
      const slot = document.getElementById(SLOT_ID);
      if (!slot) throw new ChallengeFailed('the page has no place for the verification widget');
      slot.replaceChildren();
      this.publish({ phase: 'widget' });
      let widgetId: string | undefined;
      const token = await new Promise<string>((resolve, reject) => {
        widgetId = turnstile.render(slot, {
          sitekey: siteKey,
          theme: 'auto',
          action: 'lookup',
          callback: resolve,
          'error-callback': (code) =>
            reject(new ChallengeFailed(`the verification widget failed${code ? ` (${code})` : ''}`)),
          'expired-callback': () =>
            reject(new ChallengeFailed('the verification expired before it was used')),
        });
      });
      this.publish({ phase: 'verifying' });
      const call: Call = post('/api/challenge/verify', { token });
      const res = await send<VerifyResult>(call);
      if (widgetId !== undefined) turnstile.remove?.(widgetId);
      slot.replaceChildren();
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
