/**
 * The site's TLS scan view (src/web/results/tls-scan.tsx) on a terminal: the grade and the
 * verdict sentence (client/verdicts.ts tlsScanVerdict, as the page and /mcp say it), the
 * protocols in their NCSC-NL colours, each protocol's suites as an aligned table in the server's
 * order with whose order picks them, the groups, a certificate per key type, the staple, the
 * features, the findings and ratings, and what the scan cost.
 */
import { scanProtocols, tlsScanVerdict } from '../../client/verdicts.js';
import {
  commonName,
  NCSC_CLASS,
  SCAN_FINDING_TONE,
  scanFeatureRows,
  TLS_FINDING_TONE,
  TLS_VERDICT,
} from '../../client/words.js';
import type { TlsScanResponse } from '../../features/tls-scan/tls-scan.schema.js';
import type { Style } from '../style.js';
import { facts, section, table } from '../table.js';
import { badge, formatDateTime, formatMs, headline, plural, type Renderer } from './common.js';

type Scan = Extract<TlsScanResponse['scan'], { status: 'ok' }>;

function ncsc(style: Style, cls: keyof typeof NCSC_CLASS): string {
  return badge(style, NCSC_CLASS[cls].tone, NCSC_CLASS[cls].label);
}

function suites(style: Style, scan: Scan): string[] {
  return scanProtocols(scan)
    .filter((p) => p.suites.length > 0)
    .flatMap((p) => [
      `${style.bold(p.text)}  ${style.dim(p.preference ?? '')}`,
      ...table(
        style,
        ['#', 'Cipher suite', 'Key exchange', 'Encryption', 'Strength'],
        p.suites.map((s, i) => [
          String(i + 1),
          s.name,
          `${s.key_exchange} · ${s.authentication}`,
          `${s.encryption} ${s.bits} bits${s.export ? ' export' : ''}`,
          ncsc(style, s.ncsc),
        ]),
        '  ',
      ),
    ]);
}

function certificates(style: Style, scan: Scan): string[] {
  const lines = scan.certificates.flatMap((c) => {
    const { tone, label } = TLS_VERDICT[c.verdict.status];
    return [
      `${style.bold(`${c.key_type}${c.key_bits ? ` ${c.key_bits} bits` : ''}`)}  ${commonName(c.leaf.subject)}  ${badge(style, tone, label)}  ${style.dim(`${c.leaf.days_remaining} days left`)}`,
      `  ${c.verdict.summary}`,
      ...c.findings.map((f) => `  ${badge(style, TLS_FINDING_TONE[f.severity], f.severity)} ${f.message}`),
      ...facts(
        style,
        [
          ['Issuer', commonName(c.leaf.issuer)],
          ['Valid', `${formatDateTime(c.leaf.not_before)} → ${formatDateTime(c.leaf.not_after)}`],
          ['Names', c.leaf.san.join(', ')],
          ['SHA-256', c.fingerprint_sha256],
        ],
        '  ',
      ),
    ];
  });
  const n = scan.without_sni;
  if (n)
    lines.push(
      `Without SNI: ${n.fingerprint_sha256 === null ? `no certificate (${n.error ?? 'no handshake'})` : n.same_as_sni ? 'the same certificate' : `another certificate, ${commonName(n.subject ?? '')}`}`,
    );
  return lines;
}

function ocsp(style: Style, scan: Scan): string[] {
  const o = scan.ocsp_stapling;
  if (!o.stapled) return [badge(style, 'muted', 'not stapled')];
  const tone = o.status === 'good' ? 'ok' : o.status === 'unknown' ? 'warn' : 'bad';
  return facts(style, [
    ['Staple', badge(style, tone, o.status ?? 'stapled')],
    ['Why', o.reason],
    ['Revoked', o.revoked_at ? formatDateTime(o.revoked_at) : null],
    [
      'Valid',
      o.this_update
        ? `${formatDateTime(o.this_update)} → ${o.next_update ? formatDateTime(o.next_update) : 'no next update'}`
        : null,
    ],
  ]);
}

function ratings(style: Style, scan: Scan): string[] {
  const { mozilla, ncsc: n } = scan.ratings;
  return [
    ...(mozilla.gaps.length
      ? [
          `Mozilla (${mozilla.version}): ${mozilla.meets ? `meets ${mozilla.meets}` : 'meets none'}`,
          ...mozilla.gaps.map((g) => `  not ${g.level}: ${g.reasons.join('; ')}`),
        ]
      : []),
    ...(n.reasons.length
      ? [`NCSC-NL (${n.version}): ${ncsc(style, n.overall)}`, ...n.reasons.map((r) => `  ${r}`)]
      : []),
  ];
}

export function tlsScanLines(style: Style, scan: TlsScanResponse['scan']): string[] {
  const verdict = tlsScanVerdict(scan);
  if (scan.status === 'error') return [`${headline(style, 'bad', 'no scan')}  ${verdict.text}`];
  const protocols = scanProtocols(scan).map(
    (p) =>
      `${badge(style, p.tone, p.text)} ${p.offered ? `offered${p.ncsc ? ` ${ncsc(style, p.ncsc)}` : ''}` : style.dim('not offered')}`,
  );
  return [
    `${headline(style, verdict.tone, scan.grade)}  ${verdict.text}`,
    ...section(style, 'Protocols', [protocols.join('  ')]),
    ...section(style, 'Cipher suites', suites(style, scan)),
    ...section(style, 'Key exchange', [
      scan.groups.length
        ? scan.groups
            .map(
              (g) =>
                `${badge(style, NCSC_CLASS[g.ncsc].tone, g.name)}${g.kind === 'hybrid_pq' ? ' (post-quantum hybrid)' : ''}`,
            )
            .join('  ')
        : 'Groups: none seen',
      ...(scan.dhe
        ? [
            `DHE: ${badge(style, NCSC_CLASS[scan.dhe.ncsc].tone, `${scan.dhe.bits} bits${scan.dhe.group ? ` (${scan.dhe.group})` : ", the server's own prime"}`)}`,
          ]
        : []),
    ]),
    ...section(
      style,
      scan.certificates.length === 1 ? 'Certificate' : 'Certificates',
      certificates(style, scan),
    ),
    ...section(style, 'OCSP stapling', ocsp(style, scan)),
    ...section(
      style,
      'Features',
      facts(
        style,
        scanFeatureRows(scan.features).map((r) => [r.name, badge(style, r.tone, r.text)] as const),
      ),
    ),
    ...section(
      style,
      'Findings',
      scan.findings.map(
        (f) =>
          `${badge(style, SCAN_FINDING_TONE[f.severity], f.severity)} ${f.message}${f.references.length ? style.dim(` (${f.references.join(', ')})`) : ''}`,
      ),
    ),
    ...section(style, 'Ratings', ratings(style, scan)),
    ...section(style, 'Notes', scan.notes),
    '',
    style.dim(
      `${plural(scan.handshakes, 'handshake')} of at most ${scan.handshake_budget}, ${formatMs(scan.elapsed_ms)} to ${scan.address} port ${scan.port}${scan.complete ? '' : ' (ended early)'}. Scanned ${formatDateTime(scan.scanned_at)}.`,
    ),
  ];
}

export const tlsScan: Renderer = (body, style) => tlsScanLines(style, (body as TlsScanResponse).scan);
