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
} from '../../client/words.js';
import type { TlsEvidence, TlsPart, TlsResponse } from '../../features/tls/tls.schema.js';
import type { Style } from '../style.js';
import { facts, section } from '../table.js';
import { badge, formatDate, formatDateTime, headline, type Renderer } from './common.js';

/**
 * The certificate as the site's TLS card draws it (src/web/results/tls.tsx), its verdict first;
 * mail servers and inspect reuse it, mail servers without the verdict (senders judge differently).
 */
export function tlsEvidence(style: Style, tls: TlsEvidence, indent = '', verdict = true): string[] {
  const { leaf, connection: conn, chain } = tls;
  const days = `${Math.abs(leaf.days_remaining)} ${certificateDaysLabel(leaf.days_remaining)}`;
  const nameSaid = conn.authorization_error === 'ERR_TLS_CERT_ALTNAME_INVALID';
  const chips = [
    conn.authorized
      ? badge(style, 'ok', 'trusted')
      : badge(style, 'bad', conn.authorization_reason ?? 'not trusted'),
    nameSaid
      ? ''
      : badge(
          style,
          conn.hostname_matches ? 'ok' : 'bad',
          conn.hostname_matches ? 'name matches' : 'name mismatch',
        ),
    leaf.expired ? badge(style, 'bad', 'expired') : '',
  ].filter(Boolean);
  const { tone, label } = TLS_VERDICT[tls.verdict.status];
  const lines = [
    ...(verdict ? [`${headline(style, tone, label)}  ${tls.verdict.summary}`, ''] : []),
    `${style.bold(commonName(leaf.subject))} ${style.dim(`issued by ${commonName(leaf.issuer)}`)}`,
    `${style.bold(badge(style, certificateDaysTone(leaf.days_remaining, tls.verdict.status), days))}  ${chips.join('  ')}`,
    ...tls.findings.map((f) => `${badge(style, TLS_FINDING_TONE[f.severity], f.severity)} ${f.message}`),
    '',
    ...facts(style, [
      ['Valid', `${formatDate(leaf.not_before)} → ${formatDate(leaf.not_after)}`],
      ['Names', leaf.san.join(', ')],
      ['Key', keyText(leaf.key)],
      ['Signature', leaf.signature_algorithm],
      ['Protocol', `${conn.protocol} · ${conn.cipher}`],
      ['ALPN', conn.alpn],
      ['Key exchange', keyExchangeText(conn.ephemeral_key)],
      ['Forward secrecy', conn.forward_secrecy ? 'yes' : 'no'],
      ['OCSP stapled', conn.ocsp_stapled ? 'yes' : 'no'],
      ['Embedded SCTs', String(leaf.sct_count)],
      ['Address', conn.address],
      ['SHA-256', leaf.fingerprint_sha256],
    ]),
    ...section(style, chainTitle(chain), [
      ...chain.certificates.map(
        (c) =>
          `${c.index}. ${style.dim(c.role)} ${commonName(c.subject)} ` +
          style.dim(`· until ${formatDate(c.not_after)} · ${chainKeyText(c.key)}`) +
          (c.expired ? ` ${badge(style, 'bad', 'expired')}` : ''),
      ),
      ...(chain.root ? [style.dim(chainRootText(chain.root))] : []),
    ]),
    '',
    style.dim(`Checked ${formatDateTime(tls.checked_at)}.`),
  ];
  return lines.map((line) => (line === '' ? line : indent + line));
}

/** The evidence, or why the target gave none (and at which stage): /api/tls's answer and inspect's part. */
export function tlsPart(style: Style, part: TlsPart, indent = ''): string[] {
  if (part.status === 'ok') return tlsEvidence(style, part, indent);
  return [
    `${indent}${headline(style, 'bad', 'no handshake')}  ${part.error}${part.stage ? style.dim(` (at ${part.stage})`) : ''}`,
  ];
}

export const tls: Renderer = (body, style) => tlsPart(style, (body as TlsResponse).tls);
