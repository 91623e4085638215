/**
 * The page: one input, a row of tools, "my IP" on load, the challenge panel
 * when protection is on, and one result card per API call. The URL holds the
 * query (shareable; back/forward replay it from the answers kept in lookups.ts).
 *
 * The layout only: lookups.ts runs the calls, challenge.ts keeps the session,
 * page-history.ts keeps the address bar; main.tsx creates them and hands them in.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Outcome, send } from './api/client';
import type { MyIpResult } from './api/types';
import type { Challenge } from './challenge';
import type { ToolId } from './endpoints';
import type { Lookup, Lookups } from './lookups';
import type { Navigation, PageHistory } from './page-history';
import { MyIpView } from './results/ip';
import {
  DNS_TYPES,
  DNSSEC_TYPES,
  EMPTY_STATE,
  GLOBAL_DNS_TYPES,
  type PageState,
  type RecordType,
  stateSearch,
} from './state';
import { parseTarget, type Target } from './target';
import {
  EMPTY_MESSAGE,
  messagePart,
  type Part,
  type PastedMessage,
  TOOLS,
  type Tool,
  toolById,
  toolFor,
} from './tools';
import { ChallengePanel } from './ui/challenge-panel';
import { MessageForm } from './ui/message-form';
import { ResultCard } from './ui/result-card';
import { SpfOptions } from './ui/spf-options';
import { usePublished } from './ui/use-published';

/** What the page keeps about a lookup besides its parts. */
export interface LookupInfo {
  /** Null for the message tool, which takes a pasted message instead. */
  target: Target | null;
  tool: Tool;
}

export type PageLookups = Lookups<Part, LookupInfo>;
type PageLookup = Lookup<Part, LookupInfo>;

export interface AppProps {
  challenge: Challenge;
  lookups: PageLookups;
  pageHistory: PageHistory;
}

const TITLE = 'netdiag — network diagnostics';

function Intro({ onExample }: { onExample: (state: PageState) => void }) {
  const examples: [Partial<PageState> & { q: string; tool: ToolId }, string][] = [
    [{ q: 'example.com', tool: 'dns' }, 'DNS records'],
    [{ q: 'example.com', tool: 'dnssec' }, 'The DNSSEC chain of trust, link by link'],
    [{ q: 'example.com', tool: 'email' }, 'Email security grade'],
    [{ q: '192.0.2.1', tool: 'spf', sender: 'alice@example.com' }, 'Would this address pass SPF as a sender'],
    [{ q: 'https://example.com/page', tool: 'tls' }, 'TLS certificate of a URL’s host'],
    [{ q: 'example.com', tool: 'tls-scan' }, 'Every protocol and cipher suite a server accepts'],
    [{ q: 'example.com', tool: 'blocklists' }, 'Are a domain and its mail servers on DNS blocklists'],
    [{ q: '1.1.1.1', tool: 'ip' }, 'Where an address is, and whether it is a relay'],
  ];
  return (
    <section class="intro">
      <p>
        Type a domain, hostname, URL or IP address and pick a tool. Every answer says which provider it came
        from, and every result links to the API call that made it.
      </p>
      <ul>
        {examples.map(([example, what]) => {
          const state: PageState = { ...EMPTY_STATE, ...example };
          return (
            <li key={`${state.q}-${state.tool}`}>
              <a
                href={`/${stateSearch(state)}`}
                onClick={(e) => {
                  e.preventDefault();
                  onExample(state);
                }}
              >
                {what}: <span class="mono">{state.q}</span>
                {state.sender && (
                  <>
                    {' '}
                    as <span class="mono">{state.sender}</span>
                  </>
                )}
              </a>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function announcement(lookup: PageLookup | null): string {
  if (!lookup) return '';
  const { target, tool } = lookup.info;
  const what = target?.host ?? 'the message';
  if (lookup.parts.some((p) => p.outcome === undefined)) return `Looking up ${what}…`;
  const failed = lookup.parts.filter((p) => p.outcome && !p.outcome.ok).length;
  return failed ? `${tool.label} lookup for ${what}: ${failed} failed` : `${tool.label} results for ${what}`;
}

export function App({ challenge, lookups, pageHistory }: AppProps) {
  const [state, setState] = useState<PageState>(() => pageHistory.read());
  const [input, setInput] = useState(state.q);
  const lookup = usePublished(lookups, lookups.current);
  const challengeView = usePublished(challenge, challenge.view);
  const [myIp, setMyIp] = useState<Outcome<MyIpResult> | null>(null);
  // The pasted message lives here only: not in PageState, so never in the URL or the history.
  const [pasted, setPasted] = useState<PastedMessage>(EMPTY_MESSAGE);

  const start = useCallback(
    (next: PageState, nav: Navigation) => {
      const target = parseTarget(next.q);
      if (!target) {
        lookups.clear();
        setState(next);
        document.title = TITLE;
        return;
      }
      const tool = toolFor(target.kind, next.tool);
      const normalized: PageState = { ...next, q: next.q.trim(), tool: tool.id };
      setState(normalized);
      pageHistory.record(normalized, nav);
      document.title = `${target.host} · ${tool.label} · netdiag`;
      lookups.start({ target, tool }, tool.parts(target, normalized), { reuse: nav === 'history' });
    },
    [lookups, pageHistory],
  );

  useEffect(() => {
    const initial = pageHistory.read();
    if (initial.q) start(initial, 'replace');
    const loadMyIp = () =>
      send<MyIpResult>({ method: 'GET', path: '/api/my-ip' }).then((res) => {
        // Passive by contract; if a server gates it anyway, show it once a session exists.
        if (!res.ok && res.status === 403) challenge.whenSession().then(loadMyIp);
        else setMyIp(res);
      });
    // The one request a page load makes (issue 31): whether protection is on is learnt by the
    // first lookup (challenge.ensure), so a visit that looks nothing up spends no more.
    loadMyIp();
    return pageHistory.onMove((s) => {
      setInput(s.q);
      start(s, 'history');
    });
  }, [challenge, pageHistory, start]);

  const target = parseTarget(input);
  const current: ToolId = state.tool ?? (target?.kind === 'ip' ? 'ip' : 'dns');

  const checkMessage = (nav: Navigation) => {
    const tool = toolById('message');
    // The address bar says which tool, nothing of what was pasted.
    const next: PageState = { ...state, tool: tool.id };
    setState(next);
    pageHistory.record(next, nav);
    document.title = `${tool.label} · netdiag`;
    lookups.start({ target: null, tool }, [messagePart(pasted)], { reuse: false, remember: false });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    if (current === 'message') checkMessage('push');
    else start({ ...state, q: input }, 'push');
  };
  const pickTool = (id: ToolId) => {
    if (toolById(id).paste) {
      setState({ ...state, tool: id });
      return;
    }
    const ready = toolById(id).ready?.(state) ?? true;
    if (target && ready) start({ ...state, q: input, tool: id }, 'push');
    else {
      setState({ ...state, tool: id });
      // The tool needs more than the box holds (the SPF check's sender): ask for it.
      if (target && !ready) setAsking(true);
    }
  };
  const pickType = (type: RecordType) => {
    const next = { ...state, type };
    // DNS and DNSSEC answer in a moment: rerun at once. Global DNS is a measurement of seconds
    // from ten countries: wait for "Look up".
    if ((current === 'dns' || current === 'dnssec') && target && lookup) start({ ...next, q: input }, 'push');
    else setState(next);
  };
  // A scan is seconds of handshakes: a new service waits for "Look up", as Global DNS's type does.
  const pickService = (service: PageState['service']) => setState({ ...state, service });
  const types: readonly RecordType[] =
    current === 'global-dns' ? GLOBAL_DNS_TYPES : current === 'dnssec' ? DNSSEC_TYPES : DNS_TYPES;
  const typed = current === 'dns' || current === 'dnssec' || current === 'global-dns';
  const [asking, setAsking] = useState(false);
  const senderInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!asking) return;
    senderInput.current?.focus();
    setAsking(false);
  }, [asking]);

  return (
    <>
      <a class="skip-link" href="#results">
        Skip to results
      </a>
      <header class="site-head">
        <div class="wrap">
          <a class="brand" href="/">
            <span aria-hidden="true" class="brand-mark" />
            netdiag
          </a>
          <span class="tagline">Network diagnostics that say where every answer came from</span>
        </div>
      </header>
      <main class="wrap">
        <search>
          <form class="card search" onSubmit={submit}>
            {current === 'message' ? (
              <MessageForm value={pasted} onChange={setPasted} />
            ) : (
              <>
                <label for="q" class="label">
                  Domain, hostname, URL or IP address
                </label>
                <div class="searchbar">
                  <input
                    id="q"
                    name="q"
                    type="text"
                    required
                    inputMode="url"
                    autoComplete="off"
                    autoCapitalize="off"
                    spellcheck={false}
                    placeholder="example.com"
                    value={input}
                    onInput={(e) => setInput(e.currentTarget.value)}
                    aria-describedby="q-hint"
                  />
                  <button type="submit" class="primary">
                    Look up
                  </button>
                </div>
                <p id="q-hint" class="hint">
                  {target?.derivedFrom ? (
                    <>
                      Looking up <strong class="mono">{target.host}</strong>{' '}
                      {
                        {
                          url: '(the host of the URL)',
                          email: '(the domain of the address)',
                          'host-and-path': '(the host, without the path)',
                          'host-and-port': '(the host, without the port)',
                        }[target.derivedFrom]
                      }
                    </>
                  ) : target?.kind === 'ip' ? (
                    'An IP address: geolocation & relay check, RDAP, reverse DNS (PTR), inspect and the SPF check apply.'
                  ) : (
                    'A URL is reduced to its host; an IP address offers the IP tools.'
                  )}
                </p>
              </>
            )}
            <fieldset class="tools">
              <legend class="visually-hidden">Tool</legend>
              {TOOLS.map((t) => {
                const applicable = t.paste || !target || t.kinds.includes(target.kind);
                return (
                  <button
                    key={t.id}
                    type="button"
                    class="tool"
                    aria-pressed={t.id === current}
                    disabled={!applicable}
                    title={
                      applicable
                        ? undefined
                        : (t.disabledNote ??
                          `Not for ${target?.kind === 'ip' ? 'IP addresses' : 'domain names'}`)
                    }
                    onClick={() => pickTool(t.id)}
                  >
                    {t.label}
                  </button>
                );
              })}
            </fieldset>
            {typed && target?.kind !== 'ip' && (
              <div class="options">
                <label>
                  Record type{' '}
                  <select
                    value={types.includes(state.type) ? state.type : 'A'}
                    onChange={(e) => pickType(e.currentTarget.value as RecordType)}
                  >
                    {types.map((t) => (
                      <option key={t} value={t}>
                        {t}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
            )}
            {current === 'email' && (
              <div class="options">
                <label>
                  DKIM selector <span class="muted">(optional)</span>{' '}
                  <input
                    type="text"
                    class="selector"
                    value={state.selector}
                    placeholder="e.g. s1"
                    autoComplete="off"
                    spellcheck={false}
                    onInput={(e) => setState({ ...state, selector: e.currentTarget.value })}
                  />
                </label>
              </div>
            )}
            {current === 'tls-scan' && (
              <fieldset class="options scan-service">
                <legend class="visually-hidden">Service</legend>
                {(['https', 'smtp'] as const).map((service) => (
                  <label key={service}>
                    <input
                      type="radio"
                      name="service"
                      value={service}
                      checked={state.service === service}
                      onChange={() => pickService(service)}
                    />{' '}
                    {service === 'https'
                      ? 'Web server (HTTPS, port 443)'
                      : 'Mail server (SMTP STARTTLS, port 25)'}
                  </label>
                ))}
              </fieldset>
            )}
            {current === 'spf' && <SpfOptions state={state} onChange={setState} senderInput={senderInput} />}
          </form>
        </search>

        {myIp?.ok && (
          <MyIpView
            data={myIp.data}
            onLookup={(ip) => {
              setInput(ip);
              start({ ...state, q: ip, tool: 'ip' }, 'push');
            }}
          />
        )}

        <ChallengePanel view={challengeView} />

        <div id="results" class="results" tabIndex={-1}>
          {lookup ? (
            lookup.parts.map((p, i) => (
              <ResultCard
                key={`${lookup.id}-${i}`}
                title={p.part.title}
                call={p.part.call}
                outcome={p.outcome}
                started={lookup.started}
                slowNote={lookup.info.tool.slowNote}
                render={p.part.render}
                onRetry={() => (lookup.info.tool.paste ? checkMessage('stay') : start(state, 'stay'))}
              />
            ))
          ) : (
            <Intro
              onExample={(s) => {
                setInput(s.q);
                start(s, 'push');
              }}
            />
          )}
        </div>
      </main>
      <footer class="site-foot wrap">
        <span>
          The API behind this page: <a href="/docs">docs</a> · <a href="/openapi.json">OpenAPI</a> ·{' '}
          <a href="/api/providers">providers</a>
        </span>
        <span class="muted">Location data describes a network region, never a device or home.</span>
      </footer>
      <div class="visually-hidden" role="status">
        {announcement(lookup)}
      </div>
    </>
  );
}
