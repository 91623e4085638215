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
      {answers.length > 0 && (
        <div class="table-break">
          <table class="dns-table stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">TTL</th>
                <th scope="col">Data</th>
              </tr>
            </thead>
            <tbody>
              {answers.map((a, i) => (
                <tr key={`${a.name}-${a.type}-${i}`} class={a.type === type ? '' : 'chain'}>
                  <td data-label="Name" class="mono">
                    {a.name}
                  </td>
                  <td data-label="Type">{a.type}</td>
                  <td data-label="TTL" class="num" title={`${a.ttl} seconds`}>
                    {formatSeconds(a.ttl)}
                  </td>
                  <td data-label="Data" class="mono break">
                    {a.data}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
