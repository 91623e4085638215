import { capText } from '../../client/verdicts.js';
import {
  EMAIL_CHECK_NAMES,
  EMAIL_CHECK_STATUS,
  EMAIL_GRADE_TONE,
  MAIL_FINDING_TONE,
  RECOMMENDATION_PRIORITY_TONE,
} from '../../client/words.js';
import type { EmailSecurityResponse } from '../../features/email/email.schema.js';
import type { Style } from '../style.js';
import { section, table } from '../table.js';
import { badge, type Renderer } from './common.js';

/** Findings with the RFC each comes from (the email grade's checks, the mail servers' hosts). */
export function mailFindings(
  style: Style,
  findings: readonly { severity: keyof typeof MAIL_FINDING_TONE; message: string; rfc: string }[],
  indent = '',
): string[] {
  return findings.map(
    (f) =>
      `${indent}${badge(style, MAIL_FINDING_TONE[f.severity], f.severity)} ${f.message} ${style.dim(`(${f.rfc})`)}`,
  );
}

export const email: Renderer = (body, style) => {
  const data = body as EmailSecurityResponse;
  const { scoring } = data;
  const lines = [
    `${style.bold('Grade')} ${badge(style, EMAIL_GRADE_TONE[data.grade], style.bold(data.grade))} · ${data.score}/100`,
  ];
  if (scoring.possible !== 100 || scoring.uncapped_score !== data.score) {
    lines.push(
      style.dim(
        `${scoring.earned} of ${scoring.possible} points` +
          (scoring.possible !== 100 ? ' (checks whose lookups failed are left out)' : '') +
          (scoring.uncapped_score !== data.score ? `; ${scoring.uncapped_score} before caps` : ''),
      ),
    );
  }
  for (const c of scoring.caps) {
    const cap = capText(c, scoring.uncapped_score);
    lines.push(style.tone(cap.tone, cap.text));
  }
  if (scoring.non_sending) {
    lines.push(
      style.dim('This domain sends no mail and says so: full points for DKIM, MTA-STS and TLS-RPT.'),
    );
  }
  lines.push(
    ...section(
      style,
      'What to fix first',
      data.recommendations.map(
        (r, i) =>
          `${i + 1}. ${badge(style, RECOMMENDATION_PRIORITY_TONE[r.priority], r.priority)} ${style.bold(EMAIL_CHECK_NAMES[r.check])}: ${r.text}`,
      ),
    ),
    ...section(
      style,
      'Checks',
      table(
        style,
        ['CHECK', 'STATUS', 'POINTS', 'SUMMARY'],
        data.checks.map((c) => {
          const s = EMAIL_CHECK_STATUS[c.status];
          return [
            EMAIL_CHECK_NAMES[c.id],
            badge(style, s.tone, `${s.icon} ${s.label}`),
            `${c.points}/${c.max_points}`,
            c.summary,
          ];
        }),
      ),
    ),
  );
  const findings = data.checks.flatMap((c) =>
    c.findings.length ? [`${EMAIL_CHECK_NAMES[c.id]}:`, ...mailFindings(style, c.findings, '  ')] : [],
  );
  lines.push(...section(style, 'Findings', findings));
  if (data.mx.length > 0) {
    lines.push(
      ...section(
        style,
        'Mail servers',
        table(
          style,
          ['PRIORITY', 'EXCHANGE', 'ADDRESSES'],
          data.mx.map((m) => [String(m.priority), m.exchange, m.addresses.join(', ') || '—']),
        ),
      ),
    );
  }
  lines.push(
    '',
    style.dim(
      `DKIM selectors tested: ${data.tested_dkim_selectors.join(', ')}. ${data.dns_queries} DNS queries. ` +
        `How the score is computed: ${scoring.formula}.`,
    ),
  );
  return lines;
};
