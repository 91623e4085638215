import type { DnsResponse } from '../../features/dns/dns.schema.js';
import { table } from '../table.js';
import { badge, formatSeconds, plural, type Renderer } from './common.js';

/** The site's DNS card (src/web/results/dns.tsx): rcode, DNSSEC, the answer section. */
export const dns: Renderer = (body, style) => {
  const data = body as DnsResponse;
  const { rcode, type, answers, records } = data;
  const lines = [
    [
      badge(style, rcode === 'NOERROR' ? 'ok' : rcode === 'NXDOMAIN' ? 'warn' : 'bad', rcode),
      badge(
        style,
        data.authenticated_data ? 'ok' : 'muted',
        data.authenticated_data ? 'DNSSEC validated' : 'DNSSEC not validated',
      ),
      style.dim(
        `${plural(records.length, `${type} record`)}${data.query_name !== data.target ? ` for ${data.query_name}` : ''}`,
      ),
    ].join('  '),
  ];
  if (records.length === 0) {
    lines.push(
      rcode === 'NXDOMAIN'
        ? 'The name does not exist (NXDOMAIN).'
        : `The name exists but has no ${type} records.`,
    );
  }
  if (answers.length > 0) {
    lines.push(
      '',
      ...table(
        style,
        ['NAME', 'TYPE', 'TTL', 'DATA'],
        answers.map((a) => {
          // CNAMEs followed to the answer are the chain, drawn quieter as the site does.
          const quiet = (text: string) => (a.type === type ? text : style.dim(text));
          return [quiet(a.name), quiet(a.type), quiet(formatSeconds(a.ttl)), quiet(a.data)];
        }),
      ),
    );
  }
  for (const e of data.extended_errors ?? []) {
    lines.push(
      `${badge(style, 'warn', `EDE ${e.code}`)} ${e.name}${e.text ? style.dim(` — ${e.text}`) : ''}`,
    );
  }
  return lines;
};
