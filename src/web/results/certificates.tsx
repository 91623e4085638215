import { useState } from 'preact/hooks';
import type { CertificatesResult } from '../api/types';
import { formatDate, plural } from '../format';
import { Badge, DnsName, Note } from '../ui/common';

type Issuance = CertificatesResult['issuances'][number];

const ROWS_SHOWN = 50;
/** Up to this many months of history are drawn per month; a longer history per year. */
const MONTHLY_SPAN = 36;

function monthIndex(t: number): number {
  const d = new Date(t);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

function monthLabel(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/**
 * Issuances over time (by not_before) as SVG bars: per month for a short
 * history, per year for a long one. The table below is the accessible
 * equivalent; the chart is a summary with an aria-label.
 */
function Timeline({ issuances }: { issuances: readonly Issuance[] }) {
  const months = issuances
    .map((i) => Date.parse(i.not_before))
    .filter((t) => !Number.isNaN(t))
    .map(monthIndex);
  if (months.length === 0) return null;
  const first = Math.min(...months);
  const last = Math.max(...months);
  const yearly = last - first + 1 > MONTHLY_SPAN;
  const bucketOf = (m: number) => (yearly ? Math.floor(m / 12) - Math.floor(first / 12) : m - first);
  const label = (b: number) => (yearly ? String(Math.floor(first / 12) + b) : monthLabel(first + b));
  const counts = new Array<number>(bucketOf(last) + 1).fill(0);
  for (const m of months) counts[bucketOf(m)] = (counts[bucketOf(m)] ?? 0) + 1;
  const max = Math.max(...counts, 1);
  const unit = yearly ? 'year' : 'month';
  const w = 800;
  const h = 110;
  const pad = 18;
  const slot = w / counts.length;
  const bar = Math.max(2, Math.min(slot * 0.7, 48));
  return (
    <figure class="timeline">
      <svg
        viewBox={`0 0 ${w} ${h + pad}`}
        role="img"
        aria-label={`Certificates issued per ${unit}, ${label(0)} to ${label(counts.length - 1)}; at most ${max} in a ${unit}`}
      >
        <line class="axis" x1="0" y1={h} x2={w} y2={h} />
        {counts.map((c, i) => {
          const bh = (c / max) * (h - 16);
          return (
            <rect
              key={i}
              class="bar"
              x={i * slot + (slot - bar) / 2}
              y={h - bh}
              width={bar}
              height={bh}
              rx="2"
            >
              <title>{`${label(i)}: ${c}`}</title>
            </rect>
          );
        })}
        <text class="axis-label" x="0" y={h + pad - 3}>
          {label(0)}
        </text>
        <text class="axis-label" x={w} y={h + pad - 3} text-anchor="end">
          {label(counts.length - 1)}
        </text>
        <text class="axis-label" x="0" y="11">
          {`issued per ${unit} (max ${max})`}
        </text>
      </svg>
    </figure>
  );
}

function names(i: Issuance): string {
  const all = i.dns_names.length ? i.dns_names : i.common_name ? [i.common_name] : [];
  if (all.length <= 3) return all.join(', ');
  return `${all.slice(0, 3).join(', ')} +${all.length - 3} more`;
}

export function CertificatesView({ data }: { data: CertificatesResult }) {
  const [all, setAll] = useState(false);
  const rows = all ? data.issuances : data.issuances.slice(0, ROWS_SHOWN);
  const valid = data.issuances.filter((i) => !i.expired && !i.revoked).length;
  return (
    <>
      <div class="summary-row">
        <span>
          <strong>{plural(data.total, 'issuance')}</strong> for <span class="mono">{data.domain}</span> and
          its subdomains
        </span>
        <Badge tone={valid > 0 ? 'ok' : 'muted'}>{valid} currently valid</Badge>
        {data.truncated && <Badge tone="warn">incomplete</Badge>}
      </div>
      <Timeline issuances={data.issuances} />
      {data.issuances.length > 0 ? (
        <div class="table-break">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Issued</th>
                <th scope="col">Expires</th>
                <th scope="col">Names</th>
                <th scope="col">Issuer</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((i) => (
                <tr key={i.id}>
                  <td data-label="Issued" class="nowrap">
                    {formatDate(i.not_before)}
                  </td>
                  <td data-label="Expires" class="nowrap">
                    {formatDate(i.not_after)}
                  </td>
                  <td data-label="Names" class="mono break" title={i.dns_names.join('\n')}>
                    <DnsName name={names(i)} />
                  </td>
                  <td data-label="Issuer">{i.issuer.organization ?? i.issuer.name}</td>
                  <td data-label="State">
                    {i.revoked ? (
                      <Badge tone="bad">revoked</Badge>
                    ) : i.expired ? (
                      <Badge tone="muted">expired</Badge>
                    ) : (
                      <Badge tone="ok">valid</Badge>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Note>No certificate has been logged for this name.</Note>
      )}
      {!all && data.issuances.length > ROWS_SHOWN && (
        <button type="button" class="small" onClick={() => setAll(true)}>
          Show all {data.issuances.length}
        </button>
      )}
      <Note>
        An issuance record shows a certificate was logged; it does not prove that the certificate is served
        now.
        {data.gaps.map((gap) => ` ${gap.detail}`).join('')}
      </Note>
    </>
  );
}
