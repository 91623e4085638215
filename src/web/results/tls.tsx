/** The live certificate as a card: days remaining first, then the facts, the chain as sent, and findings. */
import type { TlsEvidence, TlsResult } from '../api/types';
import { formatDate, formatDateTime } from '../format';
import { Badge, Facts, Mono, Section, type Tone } from '../ui/common';

type Finding = TlsEvidence['findings'][number];

const SEVERITY_TONE: Record<Finding['severity'], Tone> = {
  critical: 'bad',
  high: 'bad',
  medium: 'warn',
  low: 'info',
};

export function TlsFindings({ findings }: { findings: readonly Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul class="findings">
      {findings.map((f) => (
        <li key={f.code}>
          <Badge tone={SEVERITY_TONE[f.severity]}>{f.severity}</Badge> {f.message}
        </li>
      ))}
    </ul>
  );
}

/** "CN=example.com, O=Example" → "example.com": the name people recognise, the full DN kept in a title. */
function commonName(dn: string): string {
  const cn = /(?:^|,\s*)CN=([^,]+)/.exec(dn);
  return cn?.[1] ?? dn;
}

function daysTone(days: number): Tone {
  if (days < 14) return 'bad';
  if (days < 30) return 'warn';
  return 'ok';
}

export function TlsEvidenceView({ tls }: { tls: TlsEvidence }) {
  const { leaf, connection: conn, chain } = tls;
  const key = [leaf.key.type, leaf.key.bits ? `${leaf.key.bits} bits` : leaf.key.curve]
    .filter(Boolean)
    .join(' ');
  return (
    <>
      <div class="cert-head">
        <div class={`days tone-${daysTone(leaf.days_remaining)}`}>
          <strong>{Math.abs(leaf.days_remaining)}</strong>
          <span>{leaf.days_remaining < 0 ? 'days since expiry' : 'days remaining'}</span>
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
              <Badge tone="bad">{conn.authorization_error ?? 'not trusted'}</Badge>
            )}
            <Badge tone={conn.hostname_matches ? 'ok' : 'bad'}>
              {conn.hostname_matches ? 'name matches' : 'name mismatch'}
            </Badge>
            {leaf.expired && <Badge tone="bad">expired</Badge>}
          </p>
        </div>
      </div>
      <TlsFindings findings={tls.findings} />
      <Facts
        rows={[
          ['Valid', `${formatDate(leaf.not_before)} → ${formatDate(leaf.not_after)}`],
          ['Names', leaf.san.length ? <span class="mono break">{leaf.san.join(', ')}</span> : null],
          ['Key', key],
          ['Signature', leaf.signature_algorithm],
          ['Protocol', `${conn.protocol} · ${conn.cipher}`],
          ['ALPN', conn.alpn],
          [
            'Key exchange',
            conn.ephemeral_key
              ? `${conn.ephemeral_key.type} ${conn.ephemeral_key.curve ?? ''}${conn.ephemeral_key.bits ? ` ${conn.ephemeral_key.bits} bits` : ''}`
              : 'not ephemeral',
          ],
          ['Forward secrecy', conn.forward_secrecy ? 'yes' : 'no'],
          ['OCSP stapled', conn.ocsp_stapled ? 'yes' : 'no'],
          ['Embedded SCTs', String(leaf.sct_count)],
          ['Address', <Mono>{conn.address}</Mono>],
          ['SHA-256', <Mono>{leaf.fingerprint_sha256}</Mono>],
        ]}
      />
      <Section title={chain.source === 'handshake' ? 'Chain as sent by the server' : 'Chain (reconstructed)'}>
        <ol class="chain">
          {chain.certificates.map((c) => (
            <li key={c.index}>
              <Badge tone="muted">{c.role}</Badge>{' '}
              <span class="mono" title={c.subject}>
                {commonName(c.subject)}
              </span>
              <span class="muted">
                {' '}
                · until {formatDate(c.not_after)} · {c.key.type}
                {c.key.bits ? ` ${c.key.bits}` : c.key.curve ? ` ${c.key.curve}` : ''}
              </span>{' '}
              {c.expired && <Badge tone="bad">expired</Badge>}
            </li>
          ))}
        </ol>
        {chain.root && (
          <p class="muted">
            Root: {commonName(chain.root.subject)} (
            {chain.root.source === 'sent' ? 'sent by the server' : 'from the trust store'})
          </p>
        )}
      </Section>
      <p class="note">Checked {formatDateTime(tls.checked_at)}.</p>
    </>
  );
}

export function TlsView({ data }: { data: TlsResult }) {
  return <TlsEvidenceView tls={data.tls} />;
}
