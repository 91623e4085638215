/** Small building blocks every result uses. */
import { type ComponentChildren, Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { PROVIDER_ATTEMPT, type Tone } from '../../client/words';
import type { ProviderAttempt } from '../api/types';
import { countryName, formatMs } from '../format';

/** The CLI's colours too: one union (src/client/words.ts). */
export type { Tone };

export function Badge({
  tone,
  children,
  title,
}: {
  tone: Tone;
  children: ComponentChildren;
  title?: string;
}) {
  return (
    <span class={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** A label/value list; rows whose value is null or undefined are left out rather than shown empty. */
export function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  const shown = rows.filter(([, value]) => value !== null && value !== undefined && value !== '');
  return (
    <dl class="facts">
      {shown.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Note({ children }: { children: ComponentChildren }) {
  return <p class="note">{children}</p>;
}

/** A flag (decorative) and the country's code, or its English name with `name`. */
/**
 * A country by its name (the browser's own English names), or its code where a list is dense, the
 * name then a tooltip. No flag emoji: Linux shows them as empty boxes and Windows as letter pairs.
 */
export function Country({ code, name }: { code: string | null | undefined; name?: boolean }) {
  if (!code) return <>—</>;
  return (
    <span class="country" title={countryName(code)}>
      {name ? countryName(code) : code.toUpperCase()}
    </span>
  );
}

/**
 * A DNS name that may wrap only after a dot, at a label boundary: a table gives its column the
 * room it needs instead of breaking "mail.exam|ple.com" (or "xn--bcher-|kva", at its hyphen)
 * mid-label while the next column has room. On a phone's stacked rows a label may still break.
 */
export function DnsName({ name }: { name: string }) {
  const labels = name.split('.');
  return (
    <>
      {labels.map((label, i) => (
        <Fragment key={i}>
          <span class="dns-label">
            {label}
            {i < labels.length - 1 && '.'}
          </span>
          {i < labels.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}

export function Mono({ children }: { children: ComponentChildren }) {
  return <code class="mono">{children}</code>;
}

/** Spinner and a ticking elapsed time, so a slow measurement visibly progresses. */
export function Loading({ since, note }: { since: number; note?: string | undefined }) {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(timer);
  }, []);
  return (
    <div class="loading">
      <span class="spinner" aria-hidden="true" />
      <div>
        <p>
          Looking up… <span class="elapsed">{formatMs(Math.max(0, now - since))}</span>
        </p>
        {note && <p class="muted">{note}</p>}
      </div>
    </div>
  );
}

export function Attempts({ attempts }: { attempts: readonly ProviderAttempt[] }) {
  return (
    <ol class="attempts">
      {attempts.map((a, i) => (
        <li key={`${a.id}-${i}`}>
          <Badge tone={PROVIDER_ATTEMPT[a.status].tone}>{PROVIDER_ATTEMPT[a.status].label}</Badge>{' '}
          <strong>{a.name}</strong>
          {a.error && <span class="muted"> — {a.error}</span>}
        </li>
      ))}
    </ol>
  );
}

interface Licence {
  text: string;
  url: string;
  license?: string;
  license_url?: string;
}

function isAttempts(value: unknown): value is ProviderAttempt[] {
  return (
    Array.isArray(value) &&
    value.every((v) => typeof v === 'object' && v !== null && typeof (v as ProviderAttempt).name === 'string')
  );
}

function isLicences(value: unknown): value is Licence[] {
  return (
    Array.isArray(value) &&
    value.every((v) => typeof v === 'object' && v !== null && typeof (v as Licence).text === 'string')
  );
}

/**
 * Where an answer came from: `source`, the providers tried in order, and any
 * data licence notice. Read from whatever result carries them (every
 * provider-backed answer does, by contract).
 */
export function Attribution({ data }: { data: unknown }) {
  if (typeof data !== 'object' || data === null) return null;
  const record = data as Record<string, unknown>;
  const source = typeof record.source === 'string' ? record.source : null;
  const tried = isAttempts(record.providers_tried) ? record.providers_tried : [];
  const licences = isLicences(record.attribution) ? record.attribution : [];
  if (!source && tried.length === 0 && licences.length === 0) return null;
  const fellBack = tried.some((a) => a.status === 'failed');
  return (
    <footer class="attribution">
      {source && (
        <span>
          Source: <strong>{source}</strong>
        </span>
      )}
      {tried.length > 0 && (
        <span>
          {' '}
          · Tried:{' '}
          {tried.map((a, i) => (
            <span
              key={`${a.id}-${i}`}
              class={a.status === 'failed' ? 'failed' : ''}
              title={a.error ?? PROVIDER_ATTEMPT[a.status].label}
            >
              {i > 0 && ' → '}
              {a.name} {PROVIDER_ATTEMPT[a.status].mark}
            </span>
          ))}
          {fellBack && <span class="muted"> (fallback used after a failure)</span>}
        </span>
      )}
      {licences.map((l) => (
        <span key={l.url}>
          {' '}
          ·{' '}
          <a href={l.url} rel="noreferrer noopener" target="_blank">
            {l.text}
          </a>
          {l.license && (
            <span class="muted">
              {' '}
              (
              {l.license_url ? (
                <a href={l.license_url} rel="noreferrer noopener license" target="_blank">
                  {l.license}
                </a>
              ) : (
                l.license
              )}
              )
            </span>
          )}
        </span>
      ))}
    </footer>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="sub">
      <h3>{title}</h3>
      {children}
    </section>
  );
}
