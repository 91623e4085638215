/**
 * The mail servers themselves: the domain's verdict large in its colour, one line per MX host
 * (preference, name, STARTTLS, certificate, DANE, MTA-STS), then the evidence: one card per host
 * with each address's SMTP session, its certificate (as the TLS tool draws it), DANE and the
 * MTA-STS verdict for the host.
 */

import { mailHostOverview, type OverviewCell } from '../../client/verdicts';
import {
  commonName,
  DANE_RECORD_TONE,
  DANE_TONE,
  MAIL_TLS_STATUS,
  MX_STATE,
  yesNo,
} from '../../client/words';
import type { MailTlsAddress, MailTlsDane, MailTlsHost, MailTlsResult, MailTlsStatus } from '../api/types';
import { formatDateTime, formatMs, plural } from '../format';
import { Badge, Facts, Mono, Note, Section } from '../ui/common';
import { MailFindings } from './email';
import { TlsEvidenceView } from './tls';

/** A status in its colour (the `mail-<status>` class), as the verdict above the hosts shows it. */
export function MailStatus({ status }: { status: MailTlsStatus }) {
  return <span class={`badge mail-badge mail-${status}`}>{MAIL_TLS_STATUS[status].label}</span>;
}

function Dane({ dane }: { dane: MailTlsDane }) {
  return (
    <div class="dane">
      <p>
        <Badge tone={DANE_TONE[dane.verdict]}>DANE {dane.verdict}</Badge> {dane.summary}
      </p>
      {dane.records.length > 0 && (
        <ul class="dane-records">
          {dane.records.map((r, i) => (
            <li key={i}>
              <Badge tone={DANE_RECORD_TONE[r.result]}>{r.result}</Badge> <Mono>{r.meaning}</Mono>
              {r.matched !== null && <span class="muted"> — matches certificate {r.matched} as sent</span>}
              {(r.reason ?? r.problem) && <span class="muted"> — {r.reason ?? r.problem}</span>}
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        TLSA at <Mono>{dane.tlsa_name}</Mono>
        {dane.validated === true && ' (DNSSEC-validated)'}
        {dane.validated === false && ' (not DNSSEC-validated)'}
      </p>
    </div>
  );
}

function Address({ address: a, showDane }: { address: MailTlsAddress; showDane: boolean }) {
  const { smtp } = a;
  const banner = smtp?.banner;
  return (
    <section class="mx-address">
      <h5>
        <Mono>{a.address}</Mono> <span class="muted">IPv{a.family}</span> <MailStatus status={a.status} />
      </h5>
      {a.refused_reason && <p class="muted">Not contacted: {a.refused_reason}</p>}
      {smtp?.failure && (
        <p class="error-text">
          Stopped at {smtp.failure.stage} ({smtp.failure.kind}): {smtp.failure.message}
        </p>
      )}
      <Facts
        rows={[
          [
            'Banner',
            banner ? (
              <Mono>
                {banner.code} {banner.lines.join(' / ')}
              </Mono>
            ) : null,
          ],
          ['STARTTLS offered', yesNo(smtp?.starttls_offered)],
          [
            'Extensions',
            smtp?.ehlo_extensions.length ? (
              <span class="mono break">{smtp.ehlo_extensions.join(' ')}</span>
            ) : null,
          ],
          [
            'Timings',
            smtp?.timings.length ? smtp.timings.map((t) => `${t.stage} ${formatMs(t.ms)}`).join(' · ') : null,
          ],
          ['PTR', a.ptr.length ? <span class="mono break">{a.ptr.join(', ')}</span> : a.smtp ? 'none' : null],
          [
            'FCrDNS',
            a.fcrdns === null ? null : (
              <Badge tone={a.fcrdns ? 'ok' : 'warn'}>
                {a.fcrdns ? 'resolves back' : 'does not resolve back'}
              </Badge>
            ),
          ],
          [
            'DANE',
            showDane && a.dane ? <Badge tone={DANE_TONE[a.dane.verdict]}>{a.dane.verdict}</Badge> : null,
          ],
        ]}
      />
      {a.tls && (
        // The certificate card is the longest part of a host: folded under its one-line summary,
        // so the page reads as the overview and the verdicts, the evidence a click away.
        <details class="mx-tls">
          <summary>
            Certificate <Mono>{commonName(a.tls.leaf.subject)}</Mono>{' '}
            <Badge tone={a.tls.connection.authorized ? 'ok' : 'warn'}>
              {a.tls.connection.authorized
                ? 'trusted'
                : (a.tls.connection.authorization_reason ?? 'not trusted')}
            </Badge>{' '}
            <span class="muted">
              {a.tls.connection.protocol} · {a.tls.leaf.days_remaining} days left
            </span>
          </summary>
          <TlsEvidenceView tls={a.tls} verdict={false} />
        </details>
      )}
    </section>
  );
}

function Cell({ cell, label }: { cell: OverviewCell; label: string }) {
  return (
    <td data-label={label}>
      <Badge tone={cell.tone} title={cell.detail}>
        {cell.text}
      </Badge>
    </td>
  );
}

/** Every host on one line, so the cards below are the detail (a page of 5 hosts was 5 400 px tall). */
function Overview({ hosts }: { hosts: readonly MailTlsHost[] }) {
  return (
    <div class="table-break">
      <table class="stack mx-overview">
        <thead>
          <tr>
            <th scope="col">Pref.</th>
            <th scope="col">MX host</th>
            <th scope="col">Status</th>
            <th scope="col">STARTTLS</th>
            <th scope="col">Certificate</th>
            <th scope="col">DANE</th>
            <th scope="col">MTA-STS</th>
          </tr>
        </thead>
        <tbody>
          {hosts.map((h) => {
            const o = mailHostOverview(h);
            return (
              <tr key={h.host}>
                <td data-label="Pref." class="num">
                  {h.preference ?? 'implicit'}
                </td>
                <td data-label="MX host">
                  <span class="mono break">{h.host}</span>
                </td>
                <td data-label="Status">
                  <MailStatus status={h.status} />
                </td>
                <Cell cell={o.starttls} label="STARTTLS" />
                <Cell cell={o.certificate} label="Certificate" />
                <Cell cell={o.dane} label="DANE" />
                <Cell cell={o.mta_sts} label="MTA-STS" />
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Host({ host: h }: { host: MailTlsHost }) {
  const sts = h.mta_sts;
  // The host's DANE is its addresses' worst; name each address's only when they differ.
  const verdicts = new Set(h.addresses.map((a) => a.dane?.verdict));
  return (
    <article class={`mx-host mail-${h.status}`}>
      <header class="mx-host-head">
        <h4>
          <Mono>{h.host}</Mono>
        </h4>
        <span class="muted">{h.preference === null ? 'implicit MX' : `preference ${h.preference}`}</span>
        <MailStatus status={h.status} />
      </header>
      <MailFindings findings={h.findings} />
      {h.dane && <Dane dane={h.dane} />}
      {sts.mode && sts.mode !== 'none' && (
        <p class="mx-sts">
          MTA-STS ({sts.mode}):{' '}
          <Badge tone={sts.matches_policy ? 'ok' : 'bad'}>
            {sts.matches_policy ? 'matches the policy' : 'not in the policy'}
          </Badge>{' '}
          {sts.deliverable !== null && (
            <Badge tone={sts.deliverable ? 'ok' : 'bad'}>
              {sts.deliverable ? 'a sender would deliver' : 'a sender would not deliver'}
            </Badge>
          )}
        </p>
      )}
      {h.addresses.length === 0 && <p class="muted">No address to test.</p>}
      {h.addresses.map((a) => (
        <Address key={a.address} address={a} showDane={verdicts.size > 1} />
      ))}
    </article>
  );
}

export function MailTlsView({ data }: { data: MailTlsResult }) {
  const sts = data.mta_sts;
  return (
    <>
      <div class={`mail-verdict mail-${data.status}`}>
        <p class="mail-result">{MAIL_TLS_STATUS[data.status].label}</p>
        <p>{data.summary}</p>
      </div>
      {data.hosts.length > 0 && <Overview hosts={data.hosts} />}
      <MailFindings findings={data.findings} />
      <Facts
        rows={[
          [
            'MX',
            data.mx.state === 'present'
              ? `${plural(data.mx.hosts, 'host')} published${data.mx.hosts > data.hosts.length ? `, the first ${data.hosts.length} tested` : ''}`
              : MX_STATE[data.mx.state],
          ],
          ['MTA-STS', sts.mode ?? (sts.state === 'none' ? 'no policy' : sts.state)],
          ['Policy mx', sts.mx.length ? <span class="mono break">{sts.mx.join(', ')}</span> : null],
          ['HELO name', <Mono>{data.helo_name}</Mono>],
        ]}
      />
      {data.hosts.length > 0 && (
        <Section title="Mail servers">
          <div class="mx-hosts">
            {data.hosts.map((h) => (
              <Host key={h.host} host={h} />
            ))}
          </div>
        </Section>
      )}
      <Note>
        Checked {formatDateTime(data.checked_at)}. Each address gets an SMTP session on port 25 up to STARTTLS
        and a second EHLO; no mail is ever attempted.
      </Note>
    </>
  );
}
