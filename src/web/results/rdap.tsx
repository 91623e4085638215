import type { ComponentChildren } from 'preact';
import { rdapVerdict } from '../../client/verdicts';
import { expiryText, expiryTone } from '../../client/words';
import type { RdapResult } from '../api/types';
import { daysUntil, formatDate, relativeDays } from '../format';
import { Badge, Country, Facts, Mono, Note, Section } from '../ui/common';

type Registry = RdapResult['registry'];
type Entities = Registry['entities'];
type Contact = NonNullable<Entities['registrant']>;

function DateWithDistance({ iso }: { iso: string | undefined }) {
  if (!iso) return null;
  const days = daysUntil(iso);
  return (
    <>
      {formatDate(iso)}
      {days !== null && <span class="muted"> ({relativeDays(days)})</span>}
    </>
  );
}

function Expiry({ iso }: { iso: string | undefined }) {
  if (!iso) return null;
  const days = daysUntil(iso);
  return (
    <>
      {formatDate(iso)} {days !== null && <Badge tone={expiryTone(days)}>{expiryText(days)}</Badge>}
    </>
  );
}

function StatusChips({ status }: { status: string[] }) {
  if (status.length === 0) return null;
  return (
    <span class="chips">
      {status.map((s) => (
        <Badge key={s} tone="muted">
          {s}
        </Badge>
      ))}
    </span>
  );
}

function contactLine(c: Contact | undefined): ComponentChildren {
  if (!c) return null;
  const parts = [c.organization, c.name, c.address?.country_code ?? c.address?.country].filter(Boolean);
  if (parts.length === 0) return c.redacted ? <span class="muted">redacted for privacy</span> : null;
  return (
    <>
      {parts.join(', ')}
      {c.redacted && <span class="muted"> (partly redacted)</span>}
    </>
  );
}

function commonRows(r: Registry): [string, ComponentChildren][] {
  const e = r.entities;
  const registrar = e.registrar;
  return [
    [
      'Registrar',
      registrar?.name ? (
        <>
          {registrar.name}
          {registrar.iana_id && <span class="muted"> (IANA {registrar.iana_id})</span>}
        </>
      ) : null,
    ],
    ['Registered', <DateWithDistance iso={r.events.registration} />],
    ['Expires', r.events.expiration ? <Expiry iso={r.events.expiration} /> : null],
    ['Last changed', r.events.last_changed ? <DateWithDistance iso={r.events.last_changed} /> : null],
    ['Status', r.status.length ? <StatusChips status={r.status} /> : null],
    ['Registrant', contactLine(e.registrant)],
    [
      'Abuse contact',
      e.abuse && (e.abuse.email || e.abuse.phone)
        ? [e.abuse.email, e.abuse.phone].filter(Boolean).join(' · ')
        : null,
    ],
  ];
}

function RegistryFacts({ r }: { r: Registry }) {
  if (r.object_class === 'domain') {
    const dnssec = r.secure_dns?.delegation_signed;
    return (
      <Facts
        rows={[
          [
            'Domain',
            <>
              <Mono>{r.ldh_name ?? '—'}</Mono>
              {r.unicode_name && r.unicode_name !== r.ldh_name && <span> ({r.unicode_name})</span>}
            </>,
          ],
          ...commonRows(r),
          [
            'Nameservers',
            r.nameservers.length ? (
              <ul class="plain">
                {r.nameservers.map((ns) => (
                  <li key={ns.ldh_name} class="mono">
                    {ns.ldh_name}
                  </li>
                ))}
              </ul>
            ) : null,
          ],
          [
            'DNSSEC',
            dnssec === null || dnssec === undefined ? (
              'not stated'
            ) : (
              <Badge tone={dnssec ? 'ok' : 'muted'}>{dnssec ? 'signed delegation' : 'unsigned'}</Badge>
            ),
          ],
        ]}
      />
    );
  }
  return (
    <Facts
      rows={[
        ['Network', r.name],
        ['Handle', r.handle ? <Mono>{r.handle}</Mono> : null],
        ['Range', r.cidrs.length ? <Mono>{r.cidrs.join(', ')}</Mono> : null],
        ['Type', r.type],
        ['Country', r.country ? <Country code={r.country} /> : null],
        ['Parent', r.parent_handle ? <Mono>{r.parent_handle}</Mono> : null],
        ...commonRows(r),
      ]}
    />
  );
}

export function RdapView({ data }: { data: RdapResult }) {
  const registrar = data.registrar;
  const verdict = rdapVerdict(data);
  return (
    <>
      <p class={`verdict tone-${verdict.tone}`}>{verdict.text}</p>
      <RegistryFacts r={data.registry} />
      {registrar && (
        <Section title="From the registrar">
          <Facts rows={commonRows(registrar)} />
        </Section>
      )}
      {data.notes.map((n) => (
        <Note key={n}>{n}</Note>
      ))}
    </>
  );
}
