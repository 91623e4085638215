import { mailHostOverview, type OverviewCell } from '../../client/verdicts.js';
import { DANE_RECORD_TONE, DANE_TONE, MAIL_TLS_STATUS, MX_STATE } from '../../client/words.js';
import type {
  MailTlsAddress,
  MailTlsDane,
  MailTlsHost,
  MailTlsResponse,
} from '../../features/mail-tls/mail-tls.schema.js';
import type { Style } from '../style.js';
import { facts, section, table } from '../table.js';
import { badge, formatDateTime, formatMs, headline, plural, type Renderer, yesNo } from './common.js';
import { mailFindings } from './email.js';
import { tlsEvidence } from './tls.js';

type Status = MailTlsResponse['status'];

function status(style: Style, s: Status): string {
  return badge(style, MAIL_TLS_STATUS[s].tone, MAIL_TLS_STATUS[s].label);
}

function dane(style: Style, d: MailTlsDane, indent: string): string[] {
  return [
    `${indent}${badge(style, DANE_TONE[d.verdict], `DANE ${d.verdict}`)} ${d.summary}`,
    ...d.records.map(
      (r) =>
        `${indent}  ${badge(style, DANE_RECORD_TONE[r.result], r.result)} ${r.meaning}` +
        (r.matched !== null ? style.dim(` — matches certificate ${r.matched} as sent`) : '') +
        ((r.reason ?? r.problem) ? style.dim(` — ${r.reason ?? r.problem}`) : ''),
    ),
    style.dim(
      `${indent}TLSA at ${d.tlsa_name}${d.validated === true ? ' (DNSSEC-validated)' : d.validated === false ? ' (not DNSSEC-validated)' : ''}`,
    ),
  ];
}

function address(style: Style, a: MailTlsAddress, showDane: boolean): string[] {
  const { smtp } = a;
  const banner = smtp?.banner;
  const indent = '    ';
  return [
    '',
    `  ${style.bold(a.address)} ${style.dim(`IPv${a.family}`)} ${status(style, a.status)}`,
    ...(a.refused_reason ? [style.dim(`${indent}Not contacted: ${a.refused_reason}`)] : []),
    ...(smtp?.failure
      ? [
          style.tone(
            'bad',
            `${indent}Stopped at ${smtp.failure.stage} (${smtp.failure.kind}): ${smtp.failure.message}`,
          ),
        ]
      : []),
    ...facts(
      style,
      [
        ['Banner', banner ? `${banner.code} ${banner.lines.join(' / ')}` : null],
        ['STARTTLS offered', yesNo(smtp?.starttls_offered)],
        ['Extensions', smtp?.ehlo_extensions.join(' ')],
        ['Timings', smtp?.timings.map((t) => `${t.stage} ${formatMs(t.ms)}`).join(' · ')],
        ['PTR', a.ptr.length ? a.ptr.join(', ') : a.smtp ? 'none' : null],
        [
          'FCrDNS',
          a.fcrdns === null
            ? null
            : badge(style, a.fcrdns ? 'ok' : 'warn', a.fcrdns ? 'resolves back' : 'does not resolve back'),
        ],
        ['DANE', showDane && a.dane ? badge(style, DANE_TONE[a.dane.verdict], a.dane.verdict) : null],
      ],
      indent,
    ),
    ...(a.tls ? ['', ...tlsEvidence(style, a.tls, indent, false)] : []),
  ];
}

function host(style: Style, h: MailTlsHost): string[] {
  const sts = h.mta_sts;
  // The host's DANE is its addresses' worst; name each address's only when they differ.
  const verdicts = new Set(h.addresses.map((a) => a.dane?.verdict));
  return [
    '',
    `${style.bold(h.host)}  ${style.dim(h.preference === null ? 'implicit MX' : `preference ${h.preference}`)}  ${status(style, h.status)}`,
    ...mailFindings(style, h.findings, '  '),
    ...(h.dane ? dane(style, h.dane, '  ') : []),
    ...(sts.mode && sts.mode !== 'none'
      ? [
          `  MTA-STS (${sts.mode}): ` +
            badge(
              style,
              sts.matches_policy ? 'ok' : 'bad',
              sts.matches_policy ? 'matches the policy' : 'not in the policy',
            ) +
            (sts.deliverable === null
              ? ''
              : ` ${badge(style, sts.deliverable ? 'ok' : 'bad', sts.deliverable ? 'a sender would deliver' : 'a sender would not deliver')}`),
        ]
      : []),
    ...(h.addresses.length === 0 ? [style.dim('  No address to test.')] : []),
    ...h.addresses.flatMap((a) => address(style, a, verdicts.size > 1)),
  ];
}

/** One line per MX host, as the site's overview above the cards. */
function overview(style: Style, hosts: readonly MailTlsHost[]): string[] {
  const cell = (c: OverviewCell) => badge(style, c.tone, c.text);
  return table(
    style,
    ['PREF', 'MX HOST', 'STATUS', 'STARTTLS', 'CERTIFICATE', 'DANE', 'MTA-STS'],
    hosts.map((h) => {
      const o = mailHostOverview(h);
      return [
        h.preference === null ? 'implicit' : String(h.preference),
        h.host,
        status(style, h.status),
        cell(o.starttls),
        cell(o.certificate),
        cell(o.dane),
        cell(o.mta_sts),
      ];
    }),
  );
}

export const mailTls: Renderer = (body, style) => {
  const data = body as MailTlsResponse;
  const sts = data.mta_sts;
  return [
    `${headline(style, MAIL_TLS_STATUS[data.status].tone, MAIL_TLS_STATUS[data.status].label)}  ${data.summary}`,
    ...(data.hosts.length > 0 ? ['', ...overview(style, data.hosts)] : []),
    ...mailFindings(style, data.findings),
    '',
    ...facts(style, [
      [
        'MX',
        data.mx.state === 'present'
          ? `${plural(data.mx.hosts, 'host')} published${data.mx.hosts > data.hosts.length ? `, the first ${data.hosts.length} tested` : ''}`
          : MX_STATE[data.mx.state],
      ],
      ['MTA-STS', sts.mode ?? (sts.state === 'none' ? 'no policy' : sts.state)],
      ['Policy mx', sts.mx.join(', ')],
      ['HELO name', data.helo_name],
    ]),
    ...section(style, 'Mail servers', data.hosts.flatMap((h) => host(style, h)).slice(1)),
    '',
    style.dim(
      `Checked ${formatDateTime(data.checked_at)}. Each address gets an SMTP session on port 25 up to STARTTLS ` +
        'and a second EHLO; no mail is ever attempted.',
    ),
  ];
};
