import { SPF_OUTCOME, SPF_RESULT_TONE, spfMeaning } from '../../client/words.js';
import type { SpfResponse } from '../../features/spf/spf.schema.js';
import type { Style } from '../style.js';
import { facts, section } from '../table.js';
import { badge, formatDateTime, headline, plural, type Renderer } from './common.js';

type Entry = SpfResponse['trace'][number];

function limit(style: Style, used: number, max: number): string {
  const over =
    used > max
      ? ` ${badge(style, 'bad', 'over the limit')}`
      : used === max
        ? ` ${badge(style, 'warn', 'at the limit')}`
        : '';
  return `${style.bold(String(used))} of ${max}${over}`;
}

/** One trace step, indented by its depth (an include's evaluation sits inside its term). */
function traceLine(style: Style, e: Entry): string {
  const indent = '  '.repeat(e.depth + 1);
  if (e.step === 'record') {
    return `${indent}${style.dim('record')} ${e.domain} ${e.record ?? style.dim(`— ${e.detail}`)}`;
  }
  if (e.step === 'omitted') return `${indent}${style.dim(`… ${e.detail}`)}`;
  if (e.step === 'result') {
    const result = e.result ? badge(style, SPF_RESULT_TONE[e.result], e.result) : '';
    return `${indent}${style.dim('result')} ${result} for ${e.domain} ${style.dim(`— ${e.detail}`)}`;
  }
  const outcome = e.outcome
    ? ` ${badge(style, SPF_OUTCOME[e.outcome].tone, SPF_OUTCOME[e.outcome].label)}`
    : '';
  const marks = `${e.lookup ? style.dim(' (DNS lookup)') : ''}${e.void ? ` ${badge(style, 'warn', 'void')}` : ''}`;
  const detail = e.outcome !== 'not_reached' ? style.dim(` — ${e.detail}`) : '';
  return `${indent}${e.term}${outcome}${marks}${detail}`;
}

export const spf: Renderer = (body, style) => {
  const data = body as SpfResponse;
  const { matched } = data;
  const via = matched
    ? data.trace.find(
        (e) => e.step === 'record' && e.depth === matched.depth && e.domain === matched.record_domain,
      )?.via
    : undefined;
  const lines = [`${headline(style, SPF_RESULT_TONE[data.result], data.result)}  ${spfMeaning(data)}`];
  if (data.explanation !== undefined) lines.push(`${data.domain} explains: “${data.explanation}”`);
  if (data.explanation_note !== undefined) lines.push(style.dim(data.explanation_note));
  if (data.problem !== undefined) lines.push(style.tone('bad', `Problem: ${data.problem}`));
  lines.push(
    '',
    ...facts(style, [
      ['Client IP', data.ip],
      [
        'Identity',
        data.identity === 'mailfrom'
          ? `MAIL FROM ${data.sender}`
          : `HELO ${data.helo ?? data.domain} ${style.dim('(empty MAIL FROM)')}`,
      ],
      ['HELO', data.identity === 'mailfrom' ? data.helo : null],
      ['Policy of', data.domain],
      [
        'Matched',
        matched
          ? `${matched.mechanism} in the record of ${matched.record_domain}` +
            (matched.depth > 0
              ? style.dim(` (reached through ${via ?? 'include or redirect'}, depth ${matched.depth})`)
              : '')
          : null,
      ],
      ['DNS lookups', limit(style, data.lookups, data.lookup_limit)],
      ['Void lookups', limit(style, data.void_lookups, data.void_lookup_limit)],
    ]),
    ...section(
      style,
      'Evaluation trace',
      data.trace.map((e) => traceLine(style, e)),
    ),
    ...section(
      style,
      'Headers',
      facts(style, [
        ['Received-SPF', data.received_spf],
        ['Authentication-Results', data.authentication_results],
      ]),
    ),
    '',
    style.dim(
      `${plural(data.dns_queries, 'DNS question')} asked · checked ${formatDateTime(data.checked_at)}. ` +
        'The address is only compared with the policy, never contacted.',
    ),
  );
  return lines;
};
