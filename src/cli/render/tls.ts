import type { TlsEvidence, TlsResponse } from '../../features/tls/tls.schema.js';
import type { Style, Tone } from '../style.js';
import { facts, section } from '../table.js';
import { badge, formatDate, formatDateTime, type Renderer } from './common.js';

const SEVERITY_TONE: Record<TlsEvidence['findings'][number]['severity'], Tone> = {
  critical: 'bad',
  high: 'bad',
  medium: 'warn',
  low: 'info',
};

/** "CN=example.com, O=Example" → "example.com": the name people recognise. */
function commonName(dn: string): string {
  return /(?:^|,\s*)CN=([^,]+)/.exec(dn)?.[1] ?? dn;
}

function daysTone(days: number): Tone {
  if (days < 14) return 'bad';
  if (days < 30) return 'warn';
  return 'ok';
}

/** The certificate as the site's TLS card draws it (src/web/results/tls.tsx); mail servers and inspect reuse it. */
export function tlsEvidence(style: Style, tls: TlsEvidence, indent = ''): string[] {
  const { leaf, connection: conn, chain } = tls;
  const key = [leaf.key.type, leaf.key.bits ? `${leaf.key.bits} bits` : leaf.key.curve]
    .filter(Boolean)
    .join(' ');
  const days = `${Math.abs(leaf.days_remaining)} ${leaf.days_remaining < 0 ? 'days since expiry' : 'days remaining'}`;
  const chips = [
    conn.authorized
      ? badge(style, 'ok', 'trusted')
      : badge(style, 'bad', conn.authorization_error ?? 'not trusted'),
    badge(
      style,
      conn.hostname_matches ? 'ok' : 'bad',
      conn.hostname_matches ? 'name matches' : 'name mismatch',
    ),
    leaf.expired ? badge(style, 'bad', 'expired') : '',
  ].filter(Boolean);
  const lines = [
    `${style.bold(commonName(leaf.subject))} ${style.dim(`issued by ${commonName(leaf.issuer)}`)}`,
    `${style.bold(badge(style, daysTone(leaf.days_remaining), days))}  ${chips.join('  ')}`,
    ...tls.findings.map((f) => `${badge(style, SEVERITY_TONE[f.severity], f.severity)} ${f.message}`),
    '',
    ...facts(style, [
      ['Valid', `${formatDate(leaf.not_before)} → ${formatDate(leaf.not_after)}`],
      ['Names', leaf.san.join(', ')],
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
      ['Address', conn.address],
      ['SHA-256', leaf.fingerprint_sha256],
    ]),
    ...section(
      style,
      chain.source === 'handshake' ? 'Chain as sent by the server' : 'Chain (reconstructed)',
      [
        ...chain.certificates.map(
          (c) =>
            `${c.index}. ${style.dim(c.role)} ${commonName(c.subject)} ` +
            style.dim(
              `· until ${formatDate(c.not_after)} · ${c.key.type}${c.key.bits ? ` ${c.key.bits}` : c.key.curve ? ` ${c.key.curve}` : ''}`,
            ) +
            (c.expired ? ` ${badge(style, 'bad', 'expired')}` : ''),
        ),
        ...(chain.root
          ? [
              style.dim(
                `Root: ${commonName(chain.root.subject)} (${chain.root.source === 'sent' ? 'sent by the server' : 'from the trust store'})`,
              ),
            ]
          : []),
      ],
    ),
    '',
    style.dim(`Checked ${formatDateTime(tls.checked_at)}.`),
  ];
  return lines.map((line) => (line === '' ? line : indent + line));
}

export const tls: Renderer = (body, style) => tlsEvidence(style, (body as TlsResponse).tls);
