import { SPF_OUTCOME, spfMeaning } from '../../client/words';
import type { SpfResult, SpfResultName, SpfTraceEntry } from '../api/types';
import { formatDateTime, plural } from '../format';
import { nestByDepth, type TreeNode } from '../trace-tree';
import { Badge, Facts, Mono, Note, Section } from '../ui/common';
import { CopyButton } from '../ui/copy-button';

/** How the record holding the deciding mechanism was reached: its record step says. */
function reachedVia(trace: SpfTraceEntry[], matched: NonNullable<SpfResult['matched']>): string | undefined {
  return trace.find(
    (e) => e.step === 'record' && e.depth === matched.depth && e.domain === matched.record_domain,
  )?.via;
}

/** A result name in its colour, as the trace shows it (the verdict above it uses the same colours). */
function ResultName({ result }: { result: SpfResultName }) {
  return <span class={`badge spf-badge spf-${result}`}>{result}</span>;
}

/** A counter against its RFC 7208 §4.6.4 limit; past it the check ended in permerror. */
function Limit({ used, limit }: { used: number; limit: number }) {
  return (
    <>
      <strong>{used}</strong> of {limit}
      {used > limit ? (
        <>
          {' '}
          <Badge tone="bad">over the limit</Badge>
        </>
      ) : used === limit ? (
        <>
          {' '}
          <Badge tone="warn">at the limit</Badge>
        </>
      ) : null}
    </>
  );
}

function TraceLine({ entry }: { entry: SpfTraceEntry }) {
  if (entry.step === 'record') {
    return (
      <>
        <span class="step-kind">record</span>
        <code class="mono">{entry.domain}</code>
        {entry.record !== undefined ? (
          <code class="spf-record">{entry.record}</code>
        ) : (
          <span class="muted"> — {entry.detail}</span>
        )}
      </>
    );
  }
  if (entry.step === 'omitted') {
    return <span class="muted">… {entry.detail}</span>;
  }
  if (entry.step === 'result') {
    return (
      <>
        <span class="step-kind">result</span>
        {entry.result && <ResultName result={entry.result} />} for <code class="mono">{entry.domain}</code>
        <span class="muted"> — {entry.detail}</span>
      </>
    );
  }
  const outcome = entry.outcome ? SPF_OUTCOME[entry.outcome] : undefined;
  return (
    <>
      <code class="mono term">{entry.term}</code>{' '}
      {outcome && <Badge tone={outcome.tone}>{outcome.label}</Badge>}
      {entry.lookup && (
        <>
          {' '}
          <Badge tone="muted" title="A DNS-querying term: counted against the limit of 10 (RFC 7208 §4.6.4)">
            lookup
          </Badge>
        </>
      )}
      {entry.void && (
        <>
          {' '}
          <Badge
            tone="warn"
            title="The lookup found nothing: counted against the limit of 2 (RFC 7208 §4.6.4)"
          >
            void
          </Badge>
        </>
      )}
      {entry.outcome !== 'not_reached' && <span class="muted"> — {entry.detail}</span>}
    </>
  );
}

/** One level of the trace; an include's or redirect's evaluation is the list inside its term. */
function TraceList({ nodes }: { nodes: TreeNode<SpfTraceEntry>[] }) {
  return (
    <ol class="spf-trace">
      {nodes.map((node, i) => (
        <li
          key={i}
          class={`step-${node.entry.step}${node.entry.outcome === 'not_reached' ? ' not-reached' : ''}`}
        >
          <TraceLine entry={node.entry} />
          {node.children.length > 0 && <TraceList nodes={node.children} />}
        </li>
      ))}
    </ol>
  );
}

function HeaderToCopy({
  name,
  what,
  note,
  value,
}: {
  name: string;
  what: string;
  note: string;
  value: string;
}) {
  return (
    <div class="to-copy">
      <div class="to-copy-head">
        <span>
          <strong>{name}</strong> <span class="muted">{note}</span>
        </span>
        <CopyButton text={value} label="Copy" what={what} named />
      </div>
      <code class="spf-record">{value}</code>
    </div>
  );
}

export function SpfView({ data }: { data: SpfResult }) {
  const { matched } = data;
  return (
    <>
      <div class={`spf-verdict spf-${data.result}`}>
        <p class="spf-result">{data.result}</p>
        <p>{spfMeaning(data)}</p>
        {data.explanation !== undefined && (
          <p class="spf-explanation">
            {data.domain} explains: <q>{data.explanation}</q>
          </p>
        )}
        {data.explanation_note !== undefined && <p class="muted">{data.explanation_note}</p>}
        {data.problem !== undefined && <p class="spf-problem">Problem: {data.problem}</p>}
      </div>
      <Facts
        rows={[
          ['Client IP', <Mono>{data.ip}</Mono>],
          [
            'Identity',
            data.identity === 'mailfrom' ? (
              <>
                MAIL FROM <Mono>{data.sender}</Mono>
              </>
            ) : (
              <>
                HELO <Mono>{data.helo ?? data.domain}</Mono> <span class="muted">(empty MAIL FROM)</span>
              </>
            ),
          ],
          ['HELO', data.identity === 'mailfrom' && data.helo ? <Mono>{data.helo}</Mono> : null],
          ['Policy of', <Mono>{data.domain}</Mono>],
          [
            'Matched',
            matched ? (
              <>
                <Mono>{matched.mechanism}</Mono> in the record of <Mono>{matched.record_domain}</Mono>
                {matched.depth > 0 && (
                  <span class="muted">
                    {' '}
                    (reached through {reachedVia(data.trace, matched) ?? 'include or redirect'}, depth{' '}
                    {matched.depth})
                  </span>
                )}
              </>
            ) : null,
          ],
          ['DNS lookups', <Limit used={data.lookups} limit={data.lookup_limit} />],
          ['Void lookups', <Limit used={data.void_lookups} limit={data.void_lookup_limit} />],
        ]}
      />
      <Section title="Evaluation trace">
        <TraceList nodes={nestByDepth(data.trace)} />
      </Section>
      <Section title="Headers">
        <div class="spf-headers">
          <HeaderToCopy
            name="Received-SPF"
            what="Received-SPF value"
            note="the field's value (RFC 7208 §9.1)"
            value={data.received_spf}
          />
          <HeaderToCopy
            name="Authentication-Results"
            what="Authentication-Results clause"
            note="the spf= clause, after your authserv-id (RFC 8601)"
            value={data.authentication_results}
          />
        </div>
      </Section>
      <Note>
        {plural(data.dns_queries, 'DNS question')} asked · checked {formatDateTime(data.checked_at)}. The
        address is only compared with the policy, never contacted.
      </Note>
    </>
  );
}
