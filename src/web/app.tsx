/**
 * The page: one input, a row of tools, "my IP" on load, the challenge panel
 * when protection is on, and one result card per API call. The URL holds the
 * query (shareable; back/forward replay it from an in-page cache).
 */
import { Component } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { callKey, type Outcome, send } from './api/client';
import type { DnsType, MyIpResult } from './api/types';
import { Challenge, ChallengeFailed, type ChallengeView, SLOT_ID } from './challenge';
import type { ToolId } from './endpoints';
import { MyIpView } from './results/ip';
import { DNS_TYPES, GLOBAL_DNS_TYPES, type PageState, readState, stateSearch } from './state';
import { parseTarget, type Target } from './target';
import { type Part, TOOLS, type Tool, toolFor } from './tools';
import { ResultCard } from './ui/result-card';

const challenge = new Challenge();

/** Successful answers seen in this page, so back/forward shows them again without a request. */
const resultCache = new Map<string, { outcome: Outcome<unknown>; at: number }>();
const REUSE_MS = 5 * 60_000;

interface PartRun {
  part: Part;
  outcome?: Outcome<unknown>;
}

interface Run {
  id: number;
  target: Target;
  tool: Tool;
  started: number;
  parts: PartRun[];
}

type Navigation = 'push' | 'replace' | 'history' | 'stay';

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

/** One call with the session rules: verify first when needed, and once more after a 403 challenge_required. */
async function runCall(part: Part, signal: AbortSignal): Promise<Outcome<unknown>> {
  try {
    await challenge.ensure();
  } catch (err) {
    return challengeOutcome(err);
  }
  let res = await send<unknown>(part.call, signal);
  if (!res.ok && res.status === 403 && res.error.code === 'challenge_required') {
    try {
      await challenge.renew();
    } catch (err) {
      return challengeOutcome(err);
    }
    res = await send<unknown>(part.call, signal);
  }
  return res;
}

/** The widget's container: never re-rendered, because the widget owns what is inside it. */
class WidgetSlot extends Component {
  override shouldComponentUpdate(): boolean {
    return false;
  }
  override render() {
    return <div id={SLOT_ID} class="widget-slot" />;
  }
}

function ChallengePanel({ view }: { view: ChallengeView }) {
  const text: Record<ChallengeView['phase'], string> = {
    idle: '',
    loading: 'Loading the verification widget…',
    widget: 'Lookups need a quick check that you are a person. It lasts 15 minutes.',
    verifying: 'Verifying…',
    failed: 'Verification did not complete.',
  };
  return (
    <section class="card challenge" hidden={view.phase === 'idle'} aria-labelledby="challenge-title">
      <h2 id="challenge-title">Quick check</h2>
      <p aria-live="polite">{text[view.phase]}</p>
      <WidgetSlot />
      {view.phase === 'failed' && view.message && <p class="error-text">{view.message}</p>}
    </section>
  );
}

function Intro({ onExample }: { onExample: (state: PageState) => void }) {
  const examples: [string, ToolId, string][] = [
    ['example.com', 'dns', 'DNS records'],
    ['example.com', 'email', 'E-mail security grade'],
    ['https://example.com/page', 'tls', 'TLS certificate of a URL’s host'],
    ['1.1.1.1', 'ip', 'Where an address is, and whether it is a relay'],
  ];
  return (
    <section class="intro">
      <p>
        Type a domain, hostname, URL or IP address and pick a tool. Every answer says which provider it came
        from, and every result links to the API call that made it.
      </p>
      <ul>
        {examples.map(([q, tool, what]) => {
          const state: PageState = { q, tool, type: 'A', selector: '' };
          return (
            <li key={`${q}-${tool}`}>
              <a
                href={`/${stateSearch(state)}`}
                onClick={(e) => {
                  e.preventDefault();
                  onExample(state);
                }}
              >
                {what}: <span class="mono">{q}</span>
              </a>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function announcement(run: Run | null): string {
  if (!run) return '';
  if (run.parts.some((p) => p.outcome === undefined)) return `Looking up ${run.target.host}…`;
  const failed = run.parts.filter((p) => p.outcome && !p.outcome.ok).length;
  return failed
    ? `${run.tool.label} lookup for ${run.target.host}: ${failed} failed`
    : `${run.tool.label} results for ${run.target.host}`;
}

export function App() {
  const [state, setState] = useState<PageState>(() => readState(location.search));
  const [input, setInput] = useState(state.q);
  const [run, setRun] = useState<Run | null>(null);
  const [myIp, setMyIp] = useState<Outcome<MyIpResult> | null>(null);
  const [challengeView, setChallengeView] = useState<ChallengeView>(challenge.view);
  const abort = useRef<AbortController | null>(null);
  const runIds = useRef(0);

  const start = useCallback((next: PageState, nav: Navigation) => {
    const target = parseTarget(next.q);
    abort.current?.abort();
    if (!target) {
      setState(next);
      setRun(null);
      document.title = 'netdiag — network diagnostics';
      return;
    }
    const tool = toolFor(target.kind, next.tool);
    const normalized: PageState = { ...next, q: next.q.trim(), tool: tool.id };
    setState(normalized);
    const url = `/${stateSearch(normalized)}`;
    if (nav === 'push' && url !== location.pathname + location.search) history.pushState(null, '', url);
    if (nav === 'replace') history.replaceState(null, '', url);
    document.title = `${target.host} · ${tool.label} · netdiag`;

    const controller = new AbortController();
    abort.current = controller;
    const id = ++runIds.current;
    const parts = tool.parts(target, normalized).map((part) => ({ part }));
    setRun({ id, target, tool, started: performance.now(), parts });
    parts.forEach(({ part }, i) => {
      const key = callKey(part.call);
      const seen = resultCache.get(key);
      const reuse = nav === 'history' && seen !== undefined && Date.now() - seen.at < REUSE_MS;
      const pending = reuse ? Promise.resolve(seen.outcome) : runCall(part, controller.signal);
      pending.then(
        (outcome) => {
          if (outcome.ok) resultCache.set(key, { outcome, at: Date.now() });
          setRun((r) =>
            r && r.id === id ? { ...r, parts: r.parts.map((p, j) => (j === i ? { ...p, outcome } : p)) } : r,
          );
        },
        () => {
          // Aborted: a newer lookup replaced this one.
        },
      );
    });
  }, []);

  useEffect(() => {
    const unsubscribe = challenge.subscribe(setChallengeView);
    const initial = readState(location.search);
    if (initial.q) start(initial, 'replace');
    const loadMyIp = () =>
      send<MyIpResult>({ method: 'GET', path: '/api/my-ip' }).then((res) => {
        // Passive by contract; if a server gates it anyway, show it once a session exists.
        if (!res.ok && res.status === 403) challenge.whenSession().then(loadMyIp);
        else setMyIp(res);
      });
    loadMyIp();
    // Learn early whether protection is on, so the first lookup does not wait for it.
    challenge.loadStatus();
    const onPop = () => {
      const s = readState(location.search);
      setInput(s.q);
      start(s, 'history');
    };
    addEventListener('popstate', onPop);
    return () => {
      unsubscribe();
      removeEventListener('popstate', onPop);
    };
  }, [start]);

  const target = parseTarget(input);
  const current: ToolId = state.tool ?? (target?.kind === 'ip' ? 'ip' : 'dns');

  const submit = (e: Event) => {
    e.preventDefault();
    start({ ...state, q: input }, 'push');
  };
  const pickTool = (id: ToolId) => {
    if (target) start({ ...state, q: input, tool: id }, 'push');
    else setState({ ...state, tool: id });
  };
  const pickType = (type: DnsType) => {
    const next = { ...state, type };
    // DNS is cheap: rerun at once. Global DNS is an expensive measurement: wait for "Look up".
    if (current === 'dns' && target && run) start({ ...next, q: input }, 'push');
    else setState(next);
  };
  const types = current === 'global-dns' ? GLOBAL_DNS_TYPES : DNS_TYPES;

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
                'An IP address: geolocation & relay check, RDAP, reverse DNS (PTR) and inspect apply.'
              ) : (
                'A URL is reduced to its host; an IP address offers the IP tools.'
              )}
            </p>
            <fieldset class="tools">
              <legend class="visually-hidden">Tool</legend>
              {TOOLS.map((t) => {
                const applicable = !target || t.kinds.includes(target.kind);
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
                        : `Not for ${target?.kind === 'ip' ? 'IP addresses' : 'domain names'}`
                    }
                    onClick={() => pickTool(t.id)}
                  >
                    {t.label}
                  </button>
                );
              })}
            </fieldset>
            {(current === 'dns' || current === 'global-dns') && target?.kind !== 'ip' && (
              <div class="options">
                <label>
                  Record type{' '}
                  <select value={state.type} onChange={(e) => pickType(e.currentTarget.value as DnsType)}>
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
          {run ? (
            run.parts.map((p, i) => (
              <ResultCard
                key={`${run.id}-${i}`}
                title={p.part.title}
                call={p.part.call}
                outcome={p.outcome}
                started={run.started}
                slowNote={run.tool.slowNote}
                render={p.part.render}
                onRetry={() => start(state, 'stay')}
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
        {announcement(run)}
      </div>
    </>
  );
}
