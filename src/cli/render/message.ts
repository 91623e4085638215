/**
 * The site's message view (src/web/results/message.tsx) on a terminal: the verdict (the API's
 * sentence under its status), the four methods with one line of why each (client/message.ts
 * methodCards, as the page's cards and /mcp say them), the DKIM signatures as a table, the ARC
 * chain per instance, SPF with the envelope and the header it came from, DMARC, the hops newest
 * first with their delays (the largest marked), the message's own Authentication-Results, the
 * findings and the DNS lookups.
 */
import {
  AUTH_RESULT_TONE,
  authResultsOverview,
  hopTlsText,
  hopViews,
  MESSAGE_FINDING_TONE,
  MESSAGE_STATUS,
  type MessageAnalysis,
  methodCards,
} from '../../client/message.js';
import { SPF_RESULT_TONE, spfMeaning } from '../../client/words.js';
import type { Style } from '../style.js';
import { facts, section, table } from '../table.js';
import { badge, formatDateTime, headline, plural, type Renderer } from './common.js';

function dkim(style: Style, a: MessageAnalysis): string[] {
  if (a.dkim.length === 0) return [];
  return [
    ...table(
      style,
      ['#', 'DOMAIN', 'SELECTOR', 'ALGORITHM', 'RESULT', 'BODY HASH', 'ALIGNED', 'KEY'],
      a.dkim.map((s) => [
        String(s.index),
        s.domain ?? '—',
        s.selector ?? '—',
        s.algorithm ?? '—',
        badge(style, AUTH_RESULT_TONE[s.result], s.result),
        s.body_hash.replace('_', ' '),
        s.aligned === null ? '—' : s.aligned ? 'yes' : 'no',
        s.key?.bits ? `${s.key.type ?? ''} ${s.key.bits} bits`.trim() : '—',
      ]),
    ),
    ...a.dkim
      .filter((s) => s.reason)
      .map((s) => `  ${s.index}: ${style.tone(AUTH_RESULT_TONE[s.result], s.reason ?? '')}`),
  ];
}

function arc(style: Style, a: MessageAnalysis): string[] {
  const { arc: chain } = a;
  if (chain.instances === 0) return [];
  return [
    `${badge(style, AUTH_RESULT_TONE[chain.result], chain.result)}  ${plural(chain.instances, 'instance')}${chain.broken_at !== null ? `, broken at ${chain.broken_at}` : ''}${chain.reason ? `: ${chain.reason}` : ''}`,
    ...table(
      style,
      ['I=', 'SEAL', 'CV', 'MESSAGE SIGNATURE', 'SEALER'],
      chain.chain.map((i) => [
        String(i.instance),
        badge(style, AUTH_RESULT_TONE[i.seal.result], i.seal.result),
        i.seal.cv ?? '—',
        badge(style, AUTH_RESULT_TONE[i.message_signature.result], i.message_signature.result),
        `${i.seal.domain ?? '—'}${i.seal.selector ? ` (s=${i.seal.selector})` : ''}`,
      ]),
      '  ',
    ),
  ];
}

function spf(style: Style, a: MessageAnalysis): string[] {
  const env = a.envelope;
  return [
    ...(a.spf
      ? [`${badge(style, SPF_RESULT_TONE[a.spf.result], a.spf.result.toUpperCase())}  ${spfMeaning(a.spf)}`]
      : []),
    ...facts(style, [
      ['Address', env.ip],
      ['HELO', env.helo],
      ['MAIL FROM', env.mail_from === null ? null : `<${env.mail_from}>`],
      [
        'Taken from',
        env.source === 'given'
          ? 'the request'
          : env.source === 'received'
            ? `Received header ${env.received_index}`
            : 'nowhere',
      ],
      ['Why', env.why],
    ]),
  ];
}

function dmarc(style: Style, a: MessageAnalysis): string[] {
  const d = a.dmarc;
  return [
    `${badge(style, d.result === 'pass' ? 'ok' : d.result === 'fail' ? 'bad' : 'muted', d.result.toUpperCase())}  ${d.summary}`,
    ...facts(style, [
      ['Record', d.record ? `${d.record}${d.record_domain ? `  (${d.record_domain})` : ''}` : null],
      ['Policy', d.policy],
      [
        'Alignment',
        `SPF ${d.alignment.spf}: ${d.spf_aligned ? 'aligned' : 'not aligned'}; DKIM ${d.alignment.dkim}: ${d.dkim_aligned ? 'aligned' : 'not aligned'}`,
      ],
      ['Disposition', d.disposition],
    ]),
  ];
}

function hops(style: Style, a: MessageAnalysis): string[] {
  if (a.received.length === 0) return [];
  return table(
    style,
    ['#', 'FROM', 'BY', 'WITH', 'TLS', 'TIME', 'DELAY'],
    hopViews(a.received).map(({ hop, delay, slow }) => [
      String(hop.index),
      [hop.from, hop.from_address ? `[${hop.from_address}]` : null].filter(Boolean).join(' ') || '—',
      hop.by ?? '—',
      hop.with ?? '—',
      hopTlsText(hop) ?? '—',
      hop.time ? formatDateTime(hop.time) : '—',
      delay === null ? '—' : slow ? style.bold(style.tone('warn', delay)) : delay,
    ]),
  );
}

function authResults(style: Style, a: MessageAnalysis): string[] {
  if (a.authentication_results.length === 0) return [];
  return [
    authResultsOverview(a.authentication_results),
    ...a.authentication_results.flatMap((h) => [
      `${badge(style, h.trusted ? 'ok' : 'warn', h.trusted ? 'trusted' : 'not trusted')}  ${h.authserv_id}: ${h.results.map((r) => `${r.method}=${r.result}`).join(' ') || 'no results'}`,
      `  ${style.dim(h.why)}`,
      ...h.disagreements.map((d) => `  ${badge(style, 'bad', 'disagrees')} ${d}`),
    ]),
  ];
}

export function messageLines(style: Style, a: MessageAnalysis): string[] {
  const status = MESSAGE_STATUS[a.verdict.status];
  return [
    `${headline(style, status.tone, status.label)}  ${a.verdict.summary}`,
    ...facts(style, [
      ['From', a.from.address],
      ['Headers only', a.headers_only ? 'yes: body hashes not checked' : null],
    ]),
    '',
    ...methodCards(a).map(
      (c) => `${c.method.padEnd(6)} ${badge(style, c.tone, c.result.padEnd(11))} ${c.why}`,
    ),
    ...section(style, 'DKIM signatures', dkim(style, a)),
    ...section(style, 'ARC chain', arc(style, a)),
    ...section(style, 'SPF', spf(style, a)),
    ...section(style, 'DMARC', dmarc(style, a)),
    ...section(style, 'Path (newest first)', hops(style, a)),
    ...section(style, 'Authentication-Results in the message', authResults(style, a)),
    ...section(
      style,
      'Findings',
      a.findings.map((f) => `${badge(style, MESSAGE_FINDING_TONE[f.severity], f.severity)} ${f.message}`),
    ),
    ...section(style, 'Notes', a.notes),
    ...section(
      style,
      `DNS lookups (${a.dns_lookups.length})`,
      table(
        style,
        ['NAME', 'TYPE', 'RESULT', 'FOR'],
        a.dns_lookups.map((l) => [l.name, l.type, l.result, l.purpose]),
      ).slice(a.dns_lookups.length ? 0 : 1),
    ),
    '',
    style.dim(`Analyzed ${formatDateTime(a.analyzed_at)}.`),
  ];
}

export const message: Renderer = (body, style) => messageLines(style, body as MessageAnalysis);
