import { useState } from 'preact/hooks';
import { SUBDOMAIN_STATUS } from '../../client/words';
import type { SubdomainsResult } from '../api/types';
import { formatDate, plural } from '../format';
import { Badge, DnsName, Note } from '../ui/common';

type Host = SubdomainsResult['hosts'][number];
type Filter = 'all' | Host['status'];

const ROWS_SHOWN = 100;

export function SubdomainsView({ data }: { data: SubdomainsResult }) {
  const [filter, setFilter] = useState<Filter>('all');
  const [all, setAll] = useState(false);
  const counts = new Map<Host['status'], number>();
  for (const h of data.hosts) counts.set(h.status, (counts.get(h.status) ?? 0) + 1);
  const shown = data.hosts.filter((h) => filter === 'all' || h.status === filter);
  const rows = all ? shown : shown.slice(0, ROWS_SHOWN);
  const filters: Filter[] = [
    'all',
    ...(Object.keys(SUBDOMAIN_STATUS) as Host['status'][]).filter((s) => counts.has(s)),
  ];
  return (
    <>
      <div class="stats">
        <div>
          <strong>{data.discovered_count.toLocaleString('en')}</strong>
          <span>discovered in CT</span>
        </div>
        <div>
          <strong>{data.checked_count}</strong>
          <span>resolved now</span>
        </div>
        <div>
          <strong>{data.active_count}</strong>
          <span>active</span>
        </div>
      </div>
      {data.dns_wildcard.detected && (
        <Note>
          This domain has a DNS wildcard (
          {[...data.dns_wildcard.addresses, ...data.dns_wildcard.cnames].join(', ')}): names that only resolve
          to it are marked <em>wildcard</em>, not active.
        </Note>
      )}
      {data.truncated && <Note>{data.gaps.map((gap) => gap.detail).join(' ')}</Note>}
      {data.hosts.length > 0 && (
        <fieldset class="filters">
          <legend class="visually-hidden">Show</legend>
          {filters.map((f) => (
            <button
              key={f}
              type="button"
              class="small"
              aria-pressed={filter === f}
              onClick={() => setFilter(f)}
            >
              {f === 'all' ? `All (${data.hosts.length})` : `${SUBDOMAIN_STATUS[f].label} (${counts.get(f)})`}
            </button>
          ))}
        </fieldset>
      )}
      {rows.length > 0 ? (
        <div class="table-break">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Answers now</th>
                <th scope="col">Last certificate</th>
                <th scope="col" class="num">
                  Certs
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((h) => (
                <tr key={h.name}>
                  <td data-label="Name" class="mono break">
                    <DnsName name={h.name} />
                    {h.wildcard && (
                      <span class="muted" title="covered by a *. certificate">
                        {' '}
                        (*)
                      </span>
                    )}
                  </td>
                  <td data-label="Status">
                    <Badge tone={SUBDOMAIN_STATUS[h.status].tone} title={SUBDOMAIN_STATUS[h.status].help}>
                      {SUBDOMAIN_STATUS[h.status].label}
                    </Badge>
                  </td>
                  <td data-label="Answers now" class="mono break">
                    {h.cname && (
                      <>
                        → <DnsName name={h.cname} />{' '}
                      </>
                    )}
                    {h.addresses.join(', ') || (h.cname ? '' : '—')}
                  </td>
                  <td data-label="Last certificate" class="nowrap">
                    {formatDate(h.last_not_after)}
                  </td>
                  <td data-label="Certs" class="num">
                    {h.certificate_count}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Note>No names below this domain appear in certificate-transparency logs.</Note>
      )}
      {!all && shown.length > ROWS_SHOWN && (
        <button type="button" class="small" onClick={() => setAll(true)}>
          Show all {plural(shown.length, 'name')}
        </button>
      )}
      <Note>
        Names come from public certificate-transparency logs: this is not a port scan and not a complete
        inventory (private or never-certified names do not appear).
      </Note>
    </>
  );
}
