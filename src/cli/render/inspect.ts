import type { Static } from 'typebox';
import {
  HEADER_VERDICT_TONE,
  headerGradeTone,
  httpStatusTone,
  SECURITY_HEADER_NAMES,
} from '../../client/words.js';
import type { InspectResponseSchema } from '../../features/inspect/inspect.schema.js';
import type { Style } from '../style.js';
import { facts, section } from '../table.js';
import { badge, formatMs, type Renderer } from './common.js';
import { tlsPart } from './tls.js';

type Inspect = Static<typeof InspectResponseSchema>;
type Chain = Inspect['http']['chains']['http'];
type Headers = Inspect['security_headers'];
function chain(style: Style, chain: Chain): string[] {
  return [
    `From ${style.dim(chain.start_url)}`,
    ...(chain.status === 'error'
      ? [style.tone('bad', `  ${chain.error}${chain.stage ? style.dim(` (at ${chain.stage})`) : ''}`)]
      : []),
    ...chain.hops.map(
      (hop) =>
        `  ${badge(style, httpStatusTone(hop.status), String(hop.status))} ${hop.url} ` +
        style.dim(`· HTTP/${hop.http_version} · ${formatMs(hop.timings.total)}`),
    ),
    ...(chain.redirect_limit_reached ? [style.tone('warn', '  Stopped: too many redirects.')] : []),
  ];
}

function securityHeaders(style: Style, headers: Headers): string[] {
  if (headers.status === 'error') return [style.tone('bad', headers.error ?? 'failed')];
  const lines: string[] = [];
  if (headers.grade) {
    lines.push(
      `Grade ${style.bold(badge(style, headerGradeTone(headers.grade), headers.grade))}` +
        (headers.score !== undefined ? style.dim(` · ${headers.score}/100`) : ''),
    );
  }
  for (const n of headers.grade_notes ?? []) lines.push(style.dim(n));
  for (const key of Object.keys(SECURITY_HEADER_NAMES) as (keyof typeof SECURITY_HEADER_NAMES)[]) {
    const h = headers[key];
    if (!h) continue;
    lines.push(
      `${badge(style, HEADER_VERDICT_TONE[h.verdict], h.verdict.padEnd(7))} ${style.bold(SECURITY_HEADER_NAMES[key])}`,
    );
    if (h.value) lines.push(style.dim(`        ${h.value}`));
    for (const n of h.notes) lines.push(`        ${n}`);
  }
  return lines;
}

export const inspect: Renderer = (body, style) => {
  const data = body as Inspect;
  const { http, security_headers: headers, network } = data;
  const httpLines = [
    ...(http.status === 'error' ? [style.tone('bad', http.error ?? 'failed')] : []),
    ...(http.final
      ? [
          `Final answer ${badge(style, httpStatusTone(http.final.status), String(http.final.status))} from ${http.final.url}`,
        ]
      : []),
    [
      http.redirects_to_https === null
        ? ''
        : badge(
            style,
            http.redirects_to_https ? 'ok' : 'warn',
            http.redirects_to_https ? 'redirects to HTTPS' : 'no redirect to HTTPS',
          ),
      badge(style, http.http2.negotiated ? 'ok' : 'muted', http.http2.negotiated ? 'HTTP/2' : 'no HTTP/2'),
      http.http3.advertised ? badge(style, 'info', 'HTTP/3 advertised') : '',
    ]
      .filter(Boolean)
      .join('  '),
    ...(http.timings
      ? [
          style.dim(
            `DNS ${formatMs(http.timings.dns)} · connect ${formatMs(http.timings.connect)} · TLS ${formatMs(http.timings.tls)} · ` +
              `first byte ${formatMs(http.timings.ttfb)} · total ${formatMs(http.timings.total)}`,
          ),
        ]
      : []),
    ...chain(style, http.chains.https),
    ...chain(style, http.chains.http),
  ];
  const tlsLines = data.tls === undefined ? [] : tlsPart(style, data.tls);
  const networkLines = [
    ...(network.status === 'error' ? [style.tone('bad', network.error ?? 'failed')] : []),
    ...network.addresses.flatMap((a, i) => [
      ...(i > 0 ? [''] : []),
      ...facts(style, [
        ['Address', a.address],
        [
          'Reverse DNS',
          a.reverse_dns.names.join(', ') || (a.reverse_dns.status === 'error' ? a.reverse_dns.error : '—'),
        ],
        ['Origin AS', a.asn !== null ? `AS${a.asn} ${a.holder ?? ''}`.trim() : (a.error ?? null)],
        ['Prefix', a.prefix],
        ['Data from', a.source],
      ]),
    ]),
    ...(network.truncated ? [style.dim('Only the first addresses are described.')] : []),
  ];
  return [
    style.dim(
      `${data.target_type === 'ip' ? 'Address' : 'Host'} ${data.target}` +
        (data.addresses.length > 0 ? ` resolves to ${data.addresses.join(', ')}` : ''),
    ),
    ...section(style, 'HTTP', httpLines),
    ...section(style, 'Security headers', securityHeaders(style, headers)),
    ...section(style, 'TLS', tlsLines),
    ...section(style, 'Network', networkLines),
  ];
};
