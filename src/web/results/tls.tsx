/**
 * The live certificate: the verdict first (trusted by browsers or not, and why, in one sentence),
 * then days remaining, the facts, findings and the chain as sent.
 */

import {
  certificateDaysLabel,
  certificateDaysTone,
  chainKeyText,
  chainRootText,
  chainTitle,
  commonName,
  keyExchangeText,
  keyText,
  TLS_FINDING_TONE,
  TLS_VERDICT,
} from '../../client/words';
import type { TlsEvidence, TlsResult } from '../api/types';
import { formatDate, formatDateTime } from '../format';
import { Badge, Facts, Mono, Section } from '../ui/common';

type Finding = TlsEvidence['findings'][number];

export function TlsFindings({ findings }: { findings: readonly Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul class="findings">
      {findings.map((f) => (
        <li key={f.code}>
          <Badge tone={TLS_FINDING_TONE[f.severity]}>{f.severity}</Badge> {f.message}
        </li>
      ))}
    </ul>
  );
}

/** The verdict banner: its word large, the sentence under it (as the SPF and mail servers tools open). */
export function TlsVerdict({ verdict }: { verdict: TlsEvidence['verdict'] }) {
  const { tone, label } = TLS_VERDICT[verdict.status];
  return (
    <div class={`tls-verdict tone-${tone}`}>
      <p class="tls-result">{label}</p>
      <p>{verdict.summary}</p>
    </div>
  );
}

/**
 * One handshake's evidence. `verdict` is off where a caller says its own (a mail server is
 * judged by what senders do, not browsers).
 */
export function TlsEvidenceView({ tls, verdict = true }: { tls: TlsEvidence; verdict?: boolean }) {
  const { leaf, connection: conn, chain } = tls;
  // The name badge only when the rejection is not the name itself (the reason says it then).
  const nameSaid = conn.authorization_error === 'ERR_TLS_CERT_ALTNAME_INVALID';
  return (
    <>
      {verdict && <TlsVerdict verdict={tls.verdict} />}
      <div class="cert-head">
        <div class={`days tone-${certificateDaysTone(leaf.days_remaining, tls.verdict.status)}`}>
          <strong>{Math.abs(leaf.days_remaining)}</strong>
          <span>{certificateDaysLabel(leaf.days_remaining)}</span>
        </div>
        <div>
          <p class="big mono" title={leaf.subject}>
            {commonName(leaf.subject)}
          </p>
          <p class="muted" title={leaf.issuer}>
            issued by {commonName(leaf.issuer)}
          </p>
          <p class="chips">
            {conn.authorized ? (
              <Badge tone="ok">trusted</Badge>
            ) : (
              <Badge tone="bad" title={conn.authorization_error ?? undefined}>
                {conn.authorization_reason ?? 'not trusted'}
              </Badge>
            )}
            {!nameSaid && (
              <Badge tone={conn.hostname_matches ? 'ok' : 'bad'}>
                {conn.hostname_matches ? 'name matches' : 'name mismatch'}
              </Badge>
            )}
            {leaf.expired && <Badge tone="bad">expired</Badge>}
          </p>
        </div>
      </div>
      <TlsFindings findings={tls.findings} />
      <Facts
        rows={[
          ['Valid', `${formatDate(leaf.not_before)} → ${formatDate(leaf.not_after)}`],
          ['Names', leaf.san.length ? <span class="mono break">{leaf.san.join(', ')}</span> : null],
          ['Key', keyText(leaf.key)],
          ['Signature', leaf.signature_algorithm],
          ['Protocol', `${conn.protocol} · ${conn.cipher}`],
          ['ALPN', conn.alpn],
          ['Key exchange', keyExchangeText(conn.ephemeral_key)],
          ['Forward secrecy', conn.forward_secrecy ? 'yes' : 'no'],
          ['OCSP stapled', conn.ocsp_stapled ? 'yes' : 'no'],
          ['Embedded SCTs', String(leaf.sct_count)],
          ['Address', <Mono>{conn.address}</Mono>],
          ['SHA-256', <Mono>{leaf.fingerprint_sha256}</Mono>],
        ]}
      />
      <Section title={chainTitle(chain)}>
        <ol class="chain">
          {chain.certificates.map((c) => (
            <li key={c.index}>
              <Badge tone="muted">{c.role}</Badge>{' '}
              <span class="mono" title={c.subject}>
                {commonName(c.subject)}
              </span>
              <span class="muted">
                {' '}
                · until {formatDate(c.not_after)} · {chainKeyText(c.key)}
              </span>{' '}
              {c.expired && <Badge tone="bad">expired</Badge>}
            </li>
          ))}
        </ol>
        {chain.root && <p class="muted">{chainRootText(chain.root)}</p>}
      </Section>
      <p class="note">Checked {formatDateTime(tls.checked_at)}.</p>
    </>
  );
}

export function TlsView({ data }: { data: TlsResult }) {
  const { tls } = data;
  if (tls.status === 'ok') return <TlsEvidenceView tls={tls} />;
  // The target's own failure is the answer (issue 31), and it is the verdict.
  return (
    <div class="tls-verdict tone-bad">
      <p class="tls-result">no handshake</p>
      <p>
        {tls.error}
        {tls.stage && <span class="muted"> (at {tls.stage})</span>}
      </p>
    </div>
  );
}
