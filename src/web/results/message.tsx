/**
 * One message judged (POST /api/message): the verdict first (the API's sentence under its status),
 * then four cards side by side, DKIM, ARC, SPF and DMARC, each result in its tone with one line
 * of why (client/message.ts methodCards, which the CLI and /mcp say too); then the DKIM
 * signatures, the ARC chain per instance, SPF with the envelope it was checked for, DMARC, the
 * hops as a timeline (newest at the top, the largest delays emphasised), the message's own
 * Authentication-Results (trusted or not, disagreements marked), the findings and, folded, the
 * DNS lookups.
 */
import {
  AUTH_RESULT_TONE,
  authResultsOverview,
  DMARC_RESULT_TONE,
  hopTlsText,
  hopViews,
  MESSAGE_FINDING_TONE,
  MESSAGE_STATUS,
  methodCards,
} from '../../client/message';
import { SPF_RESULT_TONE, spfMeaning } from '../../client/words';
import type { MessageResult } from '../api/types';
import { formatDateTime, plural } from '../format';
import { Badge, Facts, Mono, Note, Section } from '../ui/common';

function Signatures({ data }: { data: MessageResult }) {
  if (data.dkim.length === 0) return null;
  return (
    <Section title="DKIM signatures">
      <div class="table-break">
        <table class="stack msg-dkim">
          <thead>
            <tr>
              <th scope="col">Domain</th>
              <th scope="col">Selector</th>
              <th scope="col">Algorithm</th>
              <th scope="col">Result</th>
              <th scope="col">Body hash</th>
              <th scope="col">Aligned</th>
              <th scope="col">Key</th>
            </tr>
          </thead>
          <tbody>
            {data.dkim.map((s) => (
              <tr
                key={s.index}
                class={`msg-signature tone-${AUTH_RESULT_TONE[s.result]}`}
                data-result={s.result}
              >
                <td data-label="Domain">
                  <span class="mono break">{s.domain ?? '—'}</span>
                </td>
                <td data-label="Selector">
                  <span class="mono break">{s.selector ?? '—'}</span>
                </td>
                <td data-label="Algorithm">{s.algorithm ?? '—'}</td>
                <td data-label="Result">
                  <Badge tone={AUTH_RESULT_TONE[s.result]}>{s.result}</Badge>
                  {s.reason && <span class="msg-reason"> {s.reason}</span>}
                </td>
                <td data-label="Body hash">{s.body_hash.replace('_', ' ')}</td>
                <td data-label="Aligned">{s.aligned === null ? '—' : s.aligned ? 'yes' : 'no'}</td>
                <td data-label="Key">
                  {s.key?.bits ? `${s.key.type ?? ''} ${s.key.bits} bits`.trim() : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

function Arc({ data }: { data: MessageResult }) {
  const { arc } = data;
  if (arc.instances === 0) return null;
  return (
    <Section title="ARC chain">
      <p>
        <Badge tone={AUTH_RESULT_TONE[arc.result]}>{arc.result}</Badge> {plural(arc.instances, 'instance')}
        {arc.broken_at !== null && `, broken at instance ${arc.broken_at}`}
        {arc.reason && `: ${arc.reason}`}
      </p>
      <ol class="msg-arc">
        {arc.chain.map((i) => (
          <li key={i.instance} data-instance={i.instance}>
            <strong>i={i.instance}</strong> <Mono>{i.seal.domain ?? '—'}</Mono> seal{' '}
            <Badge tone={AUTH_RESULT_TONE[i.seal.result]}>{i.seal.result}</Badge>
            {i.seal.cv && <span class="muted"> (cv={i.seal.cv})</span>} · message signature{' '}
            <Badge tone={AUTH_RESULT_TONE[i.message_signature.result]}>{i.message_signature.result}</Badge>
            {i.authentication_results && <p class="mono break muted msg-aar">{i.authentication_results}</p>}
          </li>
        ))}
      </ol>
    </Section>
  );
}

function Spf({ data }: { data: MessageResult }) {
  const env = data.envelope;
  return (
    <Section title="SPF">
      {data.spf && (
        <p class="msg-spf">
          <Badge tone={SPF_RESULT_TONE[data.spf.result]}>{data.spf.result}</Badge> {spfMeaning(data.spf)}
        </p>
      )}
      <Facts
        rows={[
          ['Connecting IP', env.ip ? <Mono>{env.ip}</Mono> : null],
          ['HELO', env.helo ? <span class="mono break">{env.helo}</span> : null],
          [
            'MAIL FROM',
            env.mail_from !== null ? <span class="mono break">&lt;{env.mail_from}&gt;</span> : null,
          ],
          [
            'Taken from',
            env.source === 'given'
              ? 'the request'
              : env.source === 'received'
                ? `Received header ${env.received_index}`
                : 'nowhere',
          ],
          ['Why', <span class="msg-envelope-why">{env.why}</span>],
        ]}
      />
    </Section>
  );
}

function Dmarc({ data }: { data: MessageResult }) {
  const d = data.dmarc;
  return (
    <Section title="DMARC">
      <p>
        <Badge tone={DMARC_RESULT_TONE[d.result]}>{d.result}</Badge> {d.summary}
      </p>
      <Facts
        rows={[
          ['Record', d.record ? <span class="mono break">{d.record}</span> : null],
          ['Policy', d.policy],
          ['SPF alignment', `${d.alignment.spf}: ${d.spf_aligned ? 'aligned' : 'not aligned'}`],
          ['DKIM alignment', `${d.alignment.dkim}: ${d.dkim_aligned ? 'aligned' : 'not aligned'}`],
          ['Disposition', d.disposition],
        ]}
      />
    </Section>
  );
}

function Hops({ data }: { data: MessageResult }) {
  if (data.received.length === 0) return null;
  return (
    <Section title="Path (newest first)">
      <ol class="msg-hops">
        {hopViews(data.received).map(({ hop, delay, slow }) => (
          <li
            key={hop.index}
            class={`msg-hop${slow ? ' msg-slow' : ''}`}
            data-index={hop.index}
            data-receiving={String(hop.index === data.envelope.received_index)}
          >
            <p class="msg-hop-path">
              <span class="mono break">
                {hop.from ?? '?'}
                {hop.from_address && ` [${hop.from_address}]`}
              </span>{' '}
              → <span class="mono break">{hop.by ?? '?'}</span>
            </p>
            <p class="msg-hop-facts muted">
              {[hop.with, hopTlsText(hop), hop.time ? formatDateTime(hop.time) : null]
                .filter(Boolean)
                .join(' · ')}
              {hop.from_reverse && ` · reverse ${hop.from_reverse}`}
            </p>
            {delay !== null && (
              <p class="msg-delay">{slow ? <strong>+{delay}</strong> : `+${delay}`} after the hop below</p>
            )}
          </li>
        ))}
      </ol>
    </Section>
  );
}

function AuthResults({ data }: { data: MessageResult }) {
  const headers = data.authentication_results;
  if (headers.length === 0) return null;
  return (
    <Section title="Authentication-Results in the message">
      <p>{authResultsOverview(headers)}</p>
      <ul class="msg-ar">
        {headers.map((h) => (
          <li
            key={h.index}
            class={`msg-ar-header${h.disagreements.length ? ' msg-disagrees' : ''}`}
            data-trusted={String(h.trusted)}
          >
            <Badge tone={h.trusted ? 'ok' : 'warn'}>{h.trusted ? 'trusted' : 'not trusted'}</Badge>{' '}
            <Mono>{h.authserv_id}</Mono>:{' '}
            {h.results.map((r) => `${r.method}=${r.result}`).join(' ') || 'no results'}
            <p class="muted">{h.why}</p>
            {h.disagreements.map((d) => (
              <p key={d} class="msg-disagreement">
                <Badge tone="bad">disagrees</Badge> {d}
              </p>
            ))}
          </li>
        ))}
      </ul>
    </Section>
  );
}

export function MessageView({ data }: { data: MessageResult }) {
  const status = MESSAGE_STATUS[data.verdict.status];
  return (
    <>
      <div class={`tls-verdict msg-verdict tone-${status.tone}`} data-status={data.verdict.status}>
        <p class="tls-result">
          <Badge tone={status.tone}>{status.label}</Badge>
        </p>
        <p>{data.verdict.summary}</p>
        {data.from.address && (
          <p class="muted">
            From <Mono>{data.from.address}</Mono>
            {data.headers_only && ' · headers only: body hashes not checked'}
          </p>
        )}
      </div>
      <ul class="msg-cards">
        {methodCards(data).map((c) => (
          <li key={c.method} class={`msg-card tone-${c.tone}`} data-method={c.method}>
            <span class="msg-method">{c.method}</span>
            <span class="msg-result">{c.result}</span>
            <span class="msg-why">{c.why}</span>
          </li>
        ))}
      </ul>
      <Signatures data={data} />
      <Arc data={data} />
      <Spf data={data} />
      <Dmarc data={data} />
      <Hops data={data} />
      <AuthResults data={data} />
      {data.findings.length > 0 && (
        <Section title="Findings">
          <ul class="findings msg-findings">
            {data.findings.map((f, i) => (
              <li key={`${f.code}-${i}`} data-code={f.code}>
                <Badge tone={MESSAGE_FINDING_TONE[f.severity]}>{f.severity}</Badge> {f.message}
              </li>
            ))}
          </ul>
        </Section>
      )}
      {data.notes.length > 0 && (
        <ul class="scan-notes">
          {data.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
      <details class="msg-lookups">
        <summary class="msg-lookups-summary">DNS lookups ({data.dns_lookups.length})</summary>
        <ul>
          {data.dns_lookups.map((l, i) => (
            <li key={`${l.name}-${l.type}-${i}`} class="msg-lookup">
              <span class="mono break">{l.name}</span> {l.type}: {l.result}{' '}
              <span class="muted">({l.purpose})</span>
            </li>
          ))}
        </ul>
      </details>
      <Note>Analyzed {formatDateTime(data.analyzed_at)}. The message was not kept.</Note>
    </>
  );
}
