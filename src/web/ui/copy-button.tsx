/**
 * The site's one way to copy a text: to the clipboard when the browser allows
 * it (saying so for a moment, and to screen readers), or else into a selected
 * field to copy by hand. Copy-as-curl and the SPF headers use it.
 */
import { useEffect, useState } from 'preact/hooks';

export interface CopyButtonProps {
  text: string;
  /** The button's visible text. */
  label: string;
  /** What is copied, in words: for the button's accessible name, the announcement and the fallback field. */
  what: string;
  /** Name the button by `what` as well, when the visible label alone would be ambiguous on the page. */
  named?: boolean;
  title?: string;
}

export function CopyButton({ text, label, what, named, title }: CopyButtonProps) {
  const [state, setState] = useState<'idle' | 'copied' | 'manual'>('idle');
  useEffect(() => {
    if (state !== 'copied') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      // No clipboard (insecure context, permission denied): show the text to copy by hand.
      setState('manual');
    }
  };
  const shown = state === 'copied' ? 'Copied' : label;
  return (
    <>
      <button
        type="button"
        class="small"
        onClick={copy}
        title={title}
        aria-label={named ? `${shown} ${what}` : undefined}
      >
        {shown}
      </button>
      <span class="visually-hidden" aria-live="polite">
        {state === 'copied' ? `${what} copied` : ''}
      </span>
      {state === 'manual' && (
        <input class="manual-copy mono" readOnly value={text} aria-label={what} ref={(el) => el?.select()} />
      )}
    </>
  );
}
