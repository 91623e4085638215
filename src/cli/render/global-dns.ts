import { GLOBAL_DNS_STATUS } from '../../client/words.js';
import type { GlobalDnsResponse } from '../../features/global-dns/global-dns.schema.js';
import { section, table } from '../table.js';
import { badge, formatDateTime, formatMs, plural, type Renderer } from './common.js';

export const globalDns: Renderer = (body, style) => {
  const data = body as GlobalDnsResponse;
  const { summary } = data;
  const verdict =
    summary.answered === 0
      ? style.tone('bad', 'No country got an answer.')
      : summary.consistent
        ? style.tone('ok', `Consistent: all ${summary.answered} answering countries see the same answer.`)
        : style.tone(
            'warn',
            `Inconsistent: ${summary.distinct_answer_sets} different answers across ${summary.answered} countries ` +
              '(propagation in progress, geo-DNS or split horizon).',
          );
  const lines = [
    style.bold(verdict),
    style.dim(
      `${data.type} for ${data.target} · measured in ${summary.measured} of ${data.countries_requested.length} countries · ` +
        `${formatDateTime(data.measured_at)}${data.reused ? ' · reused a measurement from the last minute' : ''}` +
        `${data.complete ? '' : ' · incomplete (some probes did not finish in time)'}`,
    ),
  ];
  if (summary.unmeasured.length > 0) lines.push(`No probe available in: ${summary.unmeasured.join(', ')}.`);
  lines.push(
    ...section(
      style,
      'Answer sets',
      summary.answer_sets.map(
        (set, i) =>
          `${i + 1}. ${set.values.length ? set.values.join(', ') : `(${set.rcode}, no records)`}  ` +
          style.dim(`${plural(set.countries.length, 'country', 'countries')}: ${set.countries.join(' ')}`),
      ),
    ),
    '',
    ...table(
      style,
      ['COUNTRY', 'CITY', 'NETWORK', 'STATUS', 'TIME', 'ANSWERS'],
      data.results.map((r) => [
        r.country,
        r.city ?? '—',
        `${r.network ?? '—'}${r.asn !== null ? style.dim(` AS${r.asn}`) : ''}`,
        `${badge(style, GLOBAL_DNS_STATUS[r.status].tone, GLOBAL_DNS_STATUS[r.status].label)}${r.rcode && r.rcode !== 'NOERROR' ? style.dim(` ${r.rcode}`) : ''}`,
        r.time_ms === null ? '—' : formatMs(r.time_ms),
        r.answers.map((a) => a.value).join(', ') || '—',
      ]),
    ),
  );
  return lines;
};
