/**
 * netdiag's own DNSSEC validation: the verdict in one sentence, then the chain of trust drawn zone
 * by zone from the trust anchor down, each zone a card of three steps joined by its links (the DS
 * at the parent → the DNSKEY it names → the signature over the key set), the link that holds in
 * green, the first broken one in red with its reason, an insecure zone grey; then the answer with
 * its signatures or its denial proof, the findings and what the validation cost. Which link broke
 * and how it is said are the client's (client/verdicts.ts dnssecChain), as the CLI draws them.
 */

import { type ComponentChildren, Fragment } from 'preact';
import {
  type ChainMark,
  type DnssecZoneView,
  dnssecAnswer,
  dnssecChain,
  dnssecVerdict,
  type SignatureView,
} from '../../client/verdicts';
import {
  DENIAL_STATUS,
  DNSSEC_FINDING_TONE,
  DNSSEC_STATUS,
  dnskeyText,
  dsDigestName,
  windowText,
  zoneText,
} from '../../client/words';
import type { DnssecResult } from '../api/types';
import { formatDateTime, plural } from '../format';
import { Badge, Note, Section } from '../ui/common';
import { AnswerTable } from './dns';

type Finding = DnssecResult['findings'][number];

function Findings({ findings }: { findings: readonly Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul class="findings">
      {findings.map((f, i) => (
        <li key={`${f.code}-${i}`}>
          <Badge tone={DNSSEC_FINDING_TONE[f.severity]}>{f.severity}</Badge> {f.message}
        </li>
      ))}
    </ul>
  );
}

/** A reason code may wrap after its underscores (signature_|expired), never inside a word. */
function Code({ text }: { text: string }) {
  const parts = text.split('_');
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && (
            <>
              _<wbr />
            </>
          )}
        </Fragment>
      ))}
    </>
  );
}

/** A link between two steps: an arrow and what holds (or broke) there, in its colour. */
function Link({ mark, kind }: { mark: ChainMark; kind: 'entry' | 'step' }) {
  return (
    <div
      class={`dnssec-link dnssec-link-${kind} tone-${mark.tone}${mark.broken ? ' link-broken' : ''}`}
      data-broken={mark.broken ? 'true' : undefined}
    >
      <span class="dnssec-arrow" aria-hidden="true" />
      <span class="dnssec-link-text">
        {mark.broken && <span class="visually-hidden">Broken link: </span>}
        <Code text={mark.text} />
      </span>
    </div>
  );
}

function Signature({ view, label }: { view: SignatureView; label: string }) {
  const s = view.signature;
  return (
    <li class={`dnssec-item dnssec-sig${view.broken ? ' broken' : ''}`} data-key-tag={s.key_tag}>
      <span>
        {label} <strong>{s.key_tag}</strong> <span class="muted">of {zoneText(s.signer)}</span>
      </span>{' '}
      <span class="dnssec-window mono">{windowText(s)}</span>{' '}
      <Badge tone={view.broken ? 'bad' : view.window.tone} title={`${s.inception} → ${s.expiration}`}>
        {view.window.text}
      </Badge>
    </li>
  );
}

function Step({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="dnssec-step">
      <h5>{title}</h5>
      {children}
    </section>
  );
}

function Zone({ zone: z }: { zone: DnssecZoneView }) {
  const { link } = z;
  const said = z.broken?.reason ?? (link.status === 'secure' ? null : link.reason);
  return (
    <li
      class={`dnssec-zone tone-${z.tone}${z.broken ? ' broken' : ''}`}
      data-zone={link.zone}
      data-status={link.status}
    >
      <Link mark={z.entry} kind="entry" />
      <article class="dnssec-card">
        <header class="dnssec-zone-head">
          <h4 class="mono">{zoneText(link.zone)}</h4>
          <Badge tone={z.tone}>{DNSSEC_STATUS[link.status].label}</Badge>
          {link.anchored && <Badge tone="info">trust anchor</Badge>}
        </header>
        {said && (
          <p class={`dnssec-reason${z.broken ? ' broken' : ''}`}>
            <Badge tone={z.broken ? 'bad' : z.tone}>
              {z.broken ? '✕ ' : ''}
              {said.code}
            </Badge>{' '}
            {said.detail}
          </p>
        )}
        {(link.ds.length > 0 || link.dnskeys.length > 0) && (
          <div class="dnssec-steps">
            <Step title={link.anchored ? 'DS (trust anchor)' : 'DS at the parent'}>
              {link.ds.length === 0 ? (
                <p class="muted">none</p>
              ) : (
                <ul class="dnssec-items">
                  {z.ds.map(({ record: d, mark }, i) => (
                    <li
                      key={`${d.key_tag}-${d.digest_type}-${i}`}
                      class={`dnssec-item dnssec-ds${mark.broken ? ' broken' : ''}`}
                      data-key-tag={d.key_tag}
                    >
                      <span>
                        DS <strong>{d.key_tag}</strong>{' '}
                        <span class="muted">
                          {d.algorithm_name} · {dsDigestName(d.digest_type)}
                        </span>
                      </span>{' '}
                      <Badge tone={mark.tone}>{mark.text}</Badge>
                    </li>
                  ))}
                  {z.dsSignatures.map((v, i) => (
                    <Signature key={`ds-sig-${i}`} view={v} label="signed by" />
                  ))}
                </ul>
              )}
            </Step>
            {z.dsToKeys && <Link mark={z.dsToKeys} kind="step" />}
            <Step title="DNSKEY">
              {link.dnskeys.length === 0 ? (
                <p class={z.broken?.step === 'keys' ? 'bad-text' : 'muted'}>none served</p>
              ) : (
                <ul class="dnssec-items">
                  {z.keys.map((k) => (
                    <li
                      key={`${k.key_tag}-${k.flags}`}
                      class={`dnssec-item dnssec-key${k.matched_by_ds ? ' named' : ''}${k.signs_keyset ? ' signer' : ''}`}
                      data-key-tag={k.key_tag}
                    >
                      <span>
                        <Badge tone={k.role === 'KSK' ? 'info' : 'muted'}>{k.role}</Badge>{' '}
                        <strong>{k.key_tag}</strong> <span class="muted">{dnskeyText(k)}</span>
                      </span>{' '}
                      <span class="chips">
                        {k.matched_by_ds && <Badge tone="ok">named by the DS</Badge>}
                        {k.signs_keyset && <Badge tone="ok">signed the key set</Badge>}
                        {k.revoked && <Badge tone="bad">revoked</Badge>}
                        {!k.supported && <Badge tone="muted">algorithm not supported</Badge>}
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </Step>
            {z.keysToSignatures && <Link mark={z.keysToSignatures} kind="step" />}
            <Step title="Signatures over the key set">
              {z.keysetSignatures.length === 0 ? (
                <p class={z.broken?.step === 'keyset' ? 'bad-text' : 'muted'}>none</p>
              ) : (
                <ul class="dnssec-items">
                  {z.keysetSignatures.map((v, i) => (
                    <Signature key={`key-sig-${i}`} view={v} label="by key" />
                  ))}
                </ul>
              )}
            </Step>
          </div>
        )}
        <Findings findings={link.findings} />
      </article>
    </li>
  );
}

function Answer({ data }: { data: DnssecResult }) {
  const view = dnssecAnswer(data);
  const { answer } = data;
  const denial = answer.denial;
  return (
    <div class={`dnssec-answer tone-${view.tone}${view.broken ? ' broken' : ''}`}>
      <p class="summary-row">
        <Badge tone={answer.rcode === 'NOERROR' ? 'ok' : answer.rcode === 'NXDOMAIN' ? 'warn' : 'bad'}>
          {answer.rcode}
        </Badge>
        <span class="muted">{plural(answer.records.length, 'record')}</span>
      </p>
      {view.broken && (
        <p class="dnssec-reason broken">
          <Badge tone="bad">✕ {view.broken.code}</Badge> {view.broken.detail}
        </p>
      )}
      {answer.records.length > 0 && (
        <AnswerTable records={answer.records} asked={data.type} className="dnssec-records" />
      )}
      {view.signatures.length > 0 && (
        <ul class="dnssec-items dnssec-answer-sigs">
          {view.signatures.map((v, i) => (
            <Signature key={`answer-sig-${i}`} view={v} label={`RRSIG ${v.signature.covers} by key`} />
          ))}
        </ul>
      )}
      {denial && (
        <div class="dnssec-denial">
          <p>
            Denial of existence:{' '}
            <Badge tone={DENIAL_STATUS[denial.status].tone}>{DENIAL_STATUS[denial.status].label}</Badge>
            {denial.kind && <span class="muted"> {denial.kind.replaceAll('_', ' ')}</span>}
          </p>
          {denial.records.length > 0 && (
            <ul class="dnssec-items">
              {denial.records.map((r, i) => (
                <li key={`${r.name}-${i}`} class="dnssec-item mono break">
                  {r.name} {r.type} {r.data}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

export function DnssecView({ data }: { data: DnssecResult }) {
  const verdict = dnssecVerdict(data);
  return (
    <>
      <div class={`dnssec-verdict tone-${verdict.tone}`}>
        <p class="dnssec-result">{DNSSEC_STATUS[data.status].label}</p>
        <p>{verdict.text}</p>
      </div>
      <Section title="Chain of trust">
        <ol class="dnssec-chain">
          {dnssecChain(data).map((z) => (
            <Zone key={z.link.zone} zone={z} />
          ))}
        </ol>
      </Section>
      <Section title={`The answer: ${data.target} ${data.type}`}>
        <Answer data={data} />
      </Section>
      <Findings findings={data.findings} />
      <Note>
        Validated by netdiag itself, from the trust anchor down, asking each zone's servers:{' '}
        <span class="dnssec-queries">{plural(data.queries, 'upstream query', 'upstream queries')}</span>.
        Checked {formatDateTime(data.checked_at)}.
      </Note>
    </>
  );
}
