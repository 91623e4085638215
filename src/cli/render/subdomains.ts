import { SUBDOMAIN_STATUS } from '../../client/words.js';
import type { SubdomainsResponse } from '../../features/ct/ct.schema.js';
import { table } from '../table.js';
import { badge, capped, formatDate, type Renderer } from './common.js';

/** As many rows as the site shows before its "Show all" button. */
const ROWS_SHOWN = 100;

export const subdomains: Renderer = (body, style) => {
  const data = body as SubdomainsResponse;
  const lines = [
    `${style.bold(data.discovered_count.toLocaleString('en'))} discovered in CT · ` +
      `${style.bold(String(data.checked_count))} resolved now · ${style.bold(String(data.active_count))} active`,
  ];
  if (data.dns_wildcard.detected) {
    lines.push(
      `This domain has a DNS wildcard (${[...data.dns_wildcard.addresses, ...data.dns_wildcard.cnames].join(', ')}): ` +
        'names that only resolve to it are marked wildcard, not active.',
    );
  }
  if (data.truncated) lines.push(data.gaps.map((gap) => gap.detail).join(' '));
  if (data.hosts.length === 0) {
    lines.push('No names below this domain appear in certificate-transparency logs.');
  } else {
    const { shown, note } = capped(data.hosts, ROWS_SHOWN);
    lines.push(
      '',
      ...table(
        style,
        ['NAME', 'STATUS', 'ANSWERS NOW', 'LAST CERTIFICATE', 'CERTS'],
        shown.map((h) => [
          `${h.name}${h.wildcard ? style.dim(' (*)') : ''}`,
          badge(style, SUBDOMAIN_STATUS[h.status].tone, SUBDOMAIN_STATUS[h.status].label),
          [h.cname ? `→ ${h.cname}` : '', h.addresses.join(', ')].filter(Boolean).join(' ') || '—',
          formatDate(h.last_not_after),
          String(h.certificate_count),
        ]),
      ),
      ...note,
    );
  }
  lines.push(
    '',
    style.dim(
      'Names come from public certificate-transparency logs: this is not a port scan and not a complete ' +
        'inventory (private or never-certified names do not appear).',
    ),
  );
  return lines;
};
