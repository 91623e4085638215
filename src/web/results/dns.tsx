import type { DnsResult } from '../api/types';
import { formatSeconds, plural } from '../format';
import { Badge, Mono, Note } from '../ui/common';

export function DnsView({ data }: { data: DnsResult }) {
  const { rcode, type, answers, records } = data;
  const empty = records.length === 0;
  return (
    <>
      <div class="summary-row">
        <Badge
          tone={rcode === 'NOERROR' ? 'ok' : rcode === 'NXDOMAIN' ? 'warn' : 'bad'}
          title="DNS response code"
        >
          {rcode}
        </Badge>
        <Badge
          tone={data.authenticated_data ? 'ok' : 'muted'}
          title="The resolver's AD flag: it validated the answer with DNSSEC"
        >
          {data.authenticated_data ? 'DNSSEC validated' : 'DNSSEC not validated'}
        </Badge>
        <span class="muted">
          {plural(records.length, `${type} record`)}
          {data.query_name !== data.target && (
            <>
              {' '}
              for <Mono>{data.query_name}</Mono>
            </>
          )}
        </span>
      </div>
      {empty && (
        <Note>
          {rcode === 'NXDOMAIN'
            ? `The name does not exist (NXDOMAIN).`
            : `The name exists but has no ${type} records.`}
        </Note>
      )}
      {answers.length > 0 && <AnswerTable records={answers} asked={type} className="dns-table" />}
      {data.extended_errors && data.extended_errors.length > 0 && (
        <ul class="findings">
          {data.extended_errors.map((e) => (
            <li key={e.code}>
              <Badge tone="warn">EDE {e.code}</Badge> {e.name}
              {e.text && <span class="muted"> — {e.text}</span>}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/**
 * An answer section as a table, the records of another type than the one asked (a CNAME chain)
 * drawn quieter: the DNS tool's, and the DNSSEC tool's answer.
 */
export function AnswerTable({
  records,
  asked,
  className,
}: {
  records: readonly { name: string; type: string; ttl: number; data: string }[];
  asked: string;
  className: string;
}) {
  return (
    <div class="table-break">
      <table class={`${className} stack`}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">TTL</th>
            <th scope="col">Data</th>
          </tr>
        </thead>
        <tbody>
          {records.map((r, i) => (
            <tr key={`${r.name}-${r.type}-${i}`} class={r.type === asked ? '' : 'chain'}>
              <td data-label="Name" class="mono">
                {r.name}
              </td>
              <td data-label="Type">{r.type}</td>
              <td data-label="TTL" class="num" title={`${r.ttl} seconds`}>
                {formatSeconds(r.ttl)}
              </td>
              <td data-label="Data" class="mono break">
                {r.data}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
