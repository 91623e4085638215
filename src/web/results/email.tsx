import { capText } from '../../client/verdicts';
import {
  EMAIL_CHECK_NAMES,
  EMAIL_CHECK_STATUS,
  EMAIL_GRADE_TONE,
  MAIL_FINDING_TONE,
  RECOMMENDATION_PRIORITY_TONE,
} from '../../client/words';
import type { EmailCheck, EmailResult, MailFinding } from '../api/types';
import { Badge, Note, Section } from '../ui/common';

/** A half-circle gauge; the arc's length is the score (pathLength 100). */
function Gauge({ score, grade }: { score: number; grade: EmailResult['grade'] }) {
  return (
    <svg
      class={`gauge tone-${EMAIL_GRADE_TONE[grade]}`}
      viewBox="0 0 120 70"
      role="img"
      aria-label={`Score ${score} of 100, grade ${grade}`}
    >
      <path class="gauge-track" d="M10 62 A50 50 0 0 1 110 62" pathLength={100} />
      <path
        class="gauge-value"
        d="M10 62 A50 50 0 0 1 110 62"
        pathLength={100}
        stroke-dasharray={`${score} 100`}
      />
      <text x="60" y="52" text-anchor="middle" class="gauge-grade">
        {grade}
      </text>
      <text x="60" y="67" text-anchor="middle" class="gauge-score">
        {score}/100
      </text>
    </svg>
  );
}

/** Findings with the RFC each comes from (the email grade's checks, the mail servers' hosts). */
export function MailFindings({ findings }: { findings: readonly MailFinding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul class="findings">
      {findings.map((f, i) => (
        <li key={i}>
          <Badge tone={MAIL_FINDING_TONE[f.severity]}>{f.severity}</Badge> {f.message}{' '}
          <span class="muted">({f.rfc})</span>
        </li>
      ))}
    </ul>
  );
}

function CheckRow({ check }: { check: EmailCheck }) {
  const s = EMAIL_CHECK_STATUS[check.status];
  const hasMore = check.record !== undefined || check.findings.length > 0 || check.breakdown.length > 0;
  return (
    <details class={`check tone-${s.tone}`}>
      <summary>
        <span class={`check-status badge badge-${s.tone}`}>
          <span aria-hidden="true">{s.icon}</span> {s.label}
        </span>
        <span class="check-name">{EMAIL_CHECK_NAMES[check.id]}</span>
        <span class="check-summary">{check.summary}</span>
        <span class="check-points" title="points earned of the check's weight">
          {check.points}/{check.max_points}
        </span>
      </summary>
      <div class="check-body">
        {check.record !== undefined && <pre class="record">{check.record}</pre>}
        <MailFindings findings={check.findings} />
        {check.breakdown.length > 0 && (
          <table class="breakdown">
            <caption class="visually-hidden">Scoring rules for {EMAIL_CHECK_NAMES[check.id]}</caption>
            <tbody>
              {check.breakdown.map((b) => (
                <tr key={b.rule}>
                  <td>{b.rule}</td>
                  <td class="num">
                    {b.points}/{b.max_points}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {!hasMore && <p class="muted">Nothing more to show.</p>}
      </div>
    </details>
  );
}

export function EmailView({ data }: { data: EmailResult }) {
  const { scoring } = data;
  return (
    <>
      <div class="email-head">
        <Gauge score={data.score} grade={data.grade} />
        <div>
          <p class="big">
            Grade <strong class="grade">{data.grade}</strong> · {data.score}/100
          </p>
          {(scoring.possible !== 100 || scoring.uncapped_score !== data.score) && (
            <p class="muted">
              {scoring.earned} of {scoring.possible} points
              {scoring.possible !== 100 && ' (checks whose lookups failed are left out)'}
              {scoring.uncapped_score !== data.score && `; ${scoring.uncapped_score} before caps`}
            </p>
          )}
          {scoring.caps.map((c) => {
            const cap = capText(c, scoring.uncapped_score);
            return (
              <p key={c.check} class={cap.tone === 'warn' ? 'warn-text' : 'muted'}>
                {cap.text}
              </p>
            );
          })}
          {scoring.non_sending && (
            <p class="muted">
              This domain sends no mail and says so: full points for DKIM, MTA-STS and TLS-RPT.
            </p>
          )}
        </div>
      </div>
      {data.recommendations.length > 0 && (
        <Section title="What to fix first">
          <ol class="recommendations">
            {data.recommendations.map((r, i) => (
              <li key={i}>
                <Badge tone={RECOMMENDATION_PRIORITY_TONE[r.priority]}>{r.priority}</Badge>{' '}
                <strong>{EMAIL_CHECK_NAMES[r.check]}</strong>: {r.text}
              </li>
            ))}
          </ol>
        </Section>
      )}
      <Section title="Checks">
        <div class="checks">
          {data.checks.map((c) => (
            <CheckRow key={c.id} check={c} />
          ))}
        </div>
      </Section>
      {data.mx.length > 0 && (
        <Section title="Mail servers">
          <div class="table-break">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Priority</th>
                  <th scope="col">Exchange</th>
                  <th scope="col">Addresses</th>
                </tr>
              </thead>
              <tbody>
                {data.mx.map((m) => (
                  <tr key={`${m.priority}-${m.exchange}`}>
                    <td data-label="Priority">{m.priority}</td>
                    <td data-label="Exchange" class="mono">
                      {m.exchange}
                    </td>
                    <td data-label="Addresses" class="mono">
                      {m.addresses.length
                        ? m.addresses.map((a) => (
                            <div key={a} class="nowrap">
                              {a}
                            </div>
                          ))
                        : '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Section>
      )}
      <Note>
        DKIM selectors tested: {data.tested_dkim_selectors.join(', ')}. {data.dns_queries} DNS queries. How
        the score is computed: {scoring.formula}.
      </Note>
    </>
  );
}
