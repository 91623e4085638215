import { Fragment } from 'preact';
import { GLOBAL_DNS_STATUS } from '../../client/words';
import type { GlobalDnsResult } from '../api/types';
import { formatDateTime, formatMs, plural } from '../format';
import { Badge, Country, Note } from '../ui/common';

export function GlobalDnsView({ data }: { data: GlobalDnsResult }) {
  const { summary } = data;
  const verdict =
    summary.answered === 0
      ? { tone: 'bad' as const, text: 'No country got an answer.' }
      : summary.consistent
        ? {
            tone: 'ok' as const,
            text: `Consistent: all ${summary.answered} answering countries see the same answer.`,
          }
        : {
            tone: 'warn' as const,
            text: `Inconsistent: ${summary.distinct_answer_sets} different answers across ${summary.answered} countries (propagation in progress, geo-DNS or split horizon).`,
          };
  return (
    <>
      <p class={`verdict tone-${verdict.tone}`}>{verdict.text}</p>
      <p class="muted">
        {data.type} for <span class="mono">{data.target}</span> · measured in {summary.measured} of{' '}
        {data.countries_requested.length} countries · {formatDateTime(data.measured_at)}
        {data.reused && ' · reused a measurement from the last minute'}
        {!data.complete && ' · incomplete (some probes did not finish in time)'}
      </p>
      {summary.unmeasured.length > 0 && <Note>No probe available in: {summary.unmeasured.join(', ')}.</Note>}
      {summary.answer_sets.length > 0 && (
        <ol class="answer-sets">
          {summary.answer_sets.map((set, i) => (
            <li key={i}>
              <div class="mono break">
                {set.values.length ? set.values.join(', ') : `(${set.rcode}, no records)`}
              </div>
              <div class="countries">
                {plural(set.countries.length, 'country', 'countries')}:{' '}
                {set.countries.map((c, i) => (
                  <Fragment key={c}>
                    {i > 0 && ', '}
                    <Country code={c} name />
                  </Fragment>
                ))}
              </div>
            </li>
          ))}
        </ol>
      )}
      <div class="table-break">
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Country</th>
              <th scope="col">City</th>
              <th scope="col">Network</th>
              <th scope="col">Status</th>
              <th scope="col">Answers</th>
              <th scope="col" class="num">
                Time
              </th>
            </tr>
          </thead>
          <tbody>
            {data.results.map((r, i) => (
              <tr key={`${r.country}-${i}`}>
                <td data-label="Country">
                  <Country code={r.country} name />
                </td>
                <td data-label="City">{r.city ?? '—'}</td>
                <td data-label="Network">
                  {r.network ?? '—'}
                  {r.asn !== null && <span class="muted"> AS{r.asn}</span>}
                </td>
                <td data-label="Status">
                  <Badge tone={GLOBAL_DNS_STATUS[r.status].tone}>{GLOBAL_DNS_STATUS[r.status].label}</Badge>
                  {r.rcode && r.rcode !== 'NOERROR' && <span class="muted"> {r.rcode}</span>}
                </td>
                <td data-label="Answers" class="mono break">
                  {r.answers.length ? r.answers.map((a, j) => <div key={j}>{a.value}</div>) : '—'}
                </td>
                <td data-label="Time" class="num nowrap">
                  {r.time_ms === null ? '—' : formatMs(r.time_ms)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
