import type { DnsResponse } from '../../features/dns/dns.schema.js';
import { table } from '../table.js';
import { badge, formatSeconds, plural, type Renderer } from './common.js';

type Answer = DnsResponse['answers'][number];
type DnsRecord = DnsResponse['records'][number];

/** An MX answer's preference: the first word of its presentation data (`10 mail.example.com`). */
function answerPreference(a: Answer): number {
  return Number.parseInt(a.data, 10);
}

/**
 * MX records by preference, lower first, then by name (RFC 5321 §5.1; the email and mail
 * servers tools' order, features/email/mx.ts sortMx): the API keeps the resolver's order, which
 * is arbitrary. For people only; --json prints the API's body as it is. The answer section's
 * other rows (a CNAME chain) keep their places.
 */
export function inPreferenceOrder(body: unknown): unknown {
  const data = body as DnsResponse;
  if (data.type !== 'MX') return body;
  const mxOf = (r: DnsRecord) => r as DnsRecord & { priority?: number; exchange?: string };
  const byRecord = (x: DnsRecord, y: DnsRecord) =>
    (mxOf(x).priority ?? 0) - (mxOf(y).priority ?? 0) ||
    (mxOf(x).exchange ?? '').localeCompare(mxOf(y).exchange ?? '');
  const mx = data.answers.filter((a) => a.type === 'MX');
  const sortedMx = [...mx].sort(
    (x, y) => answerPreference(x) - answerPreference(y) || x.data.localeCompare(y.data),
  );
  let next = 0;
  return {
    ...data,
    records: [...data.records].sort(byRecord),
    answers: data.answers.map((a) => (a.type === 'MX' ? (sortedMx[next++] ?? a) : a)),
  };
}

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
