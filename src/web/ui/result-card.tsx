/**
 * One API call's result: its rendering for people, or its error explained,
 * with a raw-JSON toggle, copy-as-curl and attribution on every card.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { type Call, callUrl, curlCommand, type Outcome } from '../api/client';
import { clockTime, formatMs, formatSeconds } from '../format';
import { Attempts, Attribution, Loading } from './common';
import { CopyButton } from './copy-button';

export interface CardProps {
  title: string;
  call: Call;
  outcome: Outcome<unknown> | undefined;
  started: number;
  slowNote?: string | undefined;
  render: (data: unknown) => ComponentChildren;
  onRetry: () => void;
}

function CopyCurl({ call }: { call: Call }) {
  const command = curlCommand(call, location.origin);
  return <CopyButton text={command} label="Copy as curl" what="curl command" title={command} />;
}

function RetryCountdown({ seconds, onRetry }: { seconds: number; onRetry: () => void }) {
  const [until] = useState(() => Date.now() + seconds * 1000);
  const [left, setLeft] = useState(seconds);
  useEffect(() => {
    const timer = setInterval(() => setLeft(Math.max(0, Math.ceil((until - Date.now()) / 1000))), 250);
    return () => clearInterval(timer);
  }, [until]);
  return (
    <>
      <p class="retry-at">
        {left > 0 ? (
          <>
            You can try again in{' '}
            <strong class="countdown">{left < 120 ? `${left} s` : formatSeconds(left)}</strong> (at{' '}
            {clockTime(until)}).
          </>
        ) : (
          <>You can try again now.</>
        )}
      </p>
      <button type="button" onClick={onRetry} disabled={left > 0}>
        Try again
      </button>
    </>
  );
}

/** What an error means for the person looking at it, by status (docs/architecture.md §6). */
export function ErrorView({
  outcome,
  onRetry,
}: {
  outcome: Extract<Outcome<unknown>, { ok: false }>;
  onRetry: () => void;
}) {
  const { status, error, retryAfter } = outcome;
  const retry = (
    <button type="button" onClick={onRetry}>
      Try again
    </button>
  );
  let title: string;
  let body: ComponentChildren;
  if (status === 0) {
    title = 'Could not reach netdiag';
    body = (
      <>
        <p>{error.error}. Check your connection.</p>
        {retry}
      </>
    );
  } else if (status === 400) {
    title = 'Check the input';
    body = (
      <>
        <p class="error-text">{error.error}</p>
        <p class="muted">Correct the value in the box above and look it up again.</p>
      </>
    );
  } else if (status === 403) {
    const verification = error.code === 'challenge_required' || error.code === 'challenge_failed';
    title = verification ? 'Verification needed' : 'Verification rejected';
    body = (
      <>
        <p class="error-text">{error.error}</p>
        <p class="muted">Lookups need a short human check once every 15 minutes.</p>
        {retry}
      </>
    );
  } else if (status === 404) {
    title = 'Not found';
    body = <p class="error-text">{error.error}</p>;
  } else if (status === 429) {
    title = 'Too many requests';
    body = (
      <>
        <p class="error-text">{error.error}</p>
        {retryAfter !== null ? (
          <RetryCountdown seconds={retryAfter} onRetry={onRetry} />
        ) : (
          <p>Wait a minute before trying again.</p>
        )}
        <p class="muted">
          Requests are limited per address and minute, with a smaller budget for live measurements (the
          message above names them); an answer already cached costs only a request.
        </p>
      </>
    );
  } else if (status === 502) {
    const tried = error.providers_tried ?? [];
    title = 'The upstream providers failed';
    body = (
      <>
        <p class="error-text">{error.error}</p>
        {tried.length > 0 && (
          <>
            <p>Providers asked, in order:</p>
            <Attempts attempts={tried} />
          </>
        )}
        <p class="muted">Failures are never cached, so trying again asks the providers afresh.</p>
        {retry}
      </>
    );
  } else if (status === 503) {
    title = 'Temporarily unavailable';
    body = (
      <>
        <p class="error-text">{error.error}</p>
        {retryAfter !== null ? <RetryCountdown seconds={retryAfter} onRetry={onRetry} /> : retry}
      </>
    );
  } else {
    title = `Unexpected error (HTTP ${status})`;
    body = (
      <>
        <p class="error-text">{error.error}</p>
        {retry}
      </>
    );
  }
  return (
    <div class="error" role="alert">
      <h3>
        {title} <span class="muted status-code">HTTP {status || '—'}</span>
      </h3>
      {body}
    </div>
  );
}

function RawJson({ id, value }: { id: string; value: unknown }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled (WCAG 2.1.1)
    <pre id={id} class="raw" tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function ResultCard({ title, call, outcome, started, slowNote, render, onRetry }: CardProps) {
  const [raw, setRaw] = useState(false);
  const rawId = useId();
  const headingId = useId();
  return (
    <section class="card result" aria-labelledby={headingId} aria-busy={outcome === undefined}>
      <header class="card-head">
        <div>
          <h2 id={headingId}>{title}</h2>
          <p class="meta mono">
            {call.method} {callUrl(call)}
            {outcome && ` · ${formatMs(outcome.ms)}`}
            {outcome?.ok && outcome.cache && ` · cache ${outcome.cache}`}
          </p>
        </div>
        <div class="actions">
          <CopyCurl call={call} />
          {outcome && (
            <button
              type="button"
              class="small"
              aria-expanded={raw}
              aria-controls={rawId}
              onClick={() => setRaw(!raw)}
            >
              Raw JSON
            </button>
          )}
        </div>
      </header>
      {outcome === undefined ? (
        <Loading since={started} note={slowNote} />
      ) : outcome.ok ? (
        <div class="body">{render(outcome.data)}</div>
      ) : (
        <ErrorView outcome={outcome} onRetry={onRetry} />
      )}
      {outcome && raw && <RawJson id={rawId} value={outcome.ok ? outcome.data : outcome.error} />}
      {outcome?.ok && <Attribution data={outcome.data} />}
    </section>
  );
}
