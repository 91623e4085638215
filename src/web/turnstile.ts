/**
 * Cloudflare Turnstile in the page: the widget script loaded on first need,
 * rendered into the slot the page keeps for it (`#challenge-slot`), and the
 * single-use token it hands back. The session rules around it are in
 * challenge.ts; this is the only part of the flow that touches the DOM.
 */
import { ChallengeFailed, type TokenWidget, type WidgetSettings } from './challenge';

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

export const SLOT_ID = 'challenge-slot';

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

export class TurnstileWidget implements TokenWidget {
  /** The widget on show, until `clear` takes it away. */
  private shown: { turnstile: TurnstileApi; slot: HTMLElement; widgetId: string | undefined } | null = null;

  async token({ siteKey, scriptUrl }: WidgetSettings, onShown: () => void): Promise<string> {
    const turnstile = await loadScript(scriptUrl);
    const slot = document.getElementById(SLOT_ID);
    if (!slot) throw new ChallengeFailed('the page has no place for the verification widget');
    slot.replaceChildren();
    onShown();
    return new Promise<string>((resolve, reject) => {
      const widgetId = turnstile.render(slot, {
        sitekey: siteKey,
        theme: 'auto',
        action: 'lookup',
        callback: resolve,
        'error-callback': (code) =>
          reject(new ChallengeFailed(`the verification widget failed${code ? ` (${code})` : ''}`)),
        'expired-callback': () => reject(new ChallengeFailed('the verification expired before it was used')),
      });
      this.shown = { turnstile, slot, widgetId };
    });
  }

  clear(): void {
    if (!this.shown) return;
    const { turnstile, slot, widgetId } = this.shown;
    if (widgetId !== undefined) turnstile.remove?.(widgetId);
    slot.replaceChildren();
    this.shown = null;
  }
}
