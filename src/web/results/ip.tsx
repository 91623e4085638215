import { coordinatesText } from '../../client/words';
import type { IpGeoResult, IpPrivacyResult, MyIpResult } from '../api/types';
import { countryName, formatDateTime } from '../format';
import { Badge, Country, Facts, Mono, Note } from '../ui/common';

export function IpGeoView({ data }: { data: IpGeoResult }) {
  const place = [data.city, data.region, data.country?.name].filter(Boolean).join(', ');
  return (
    <>
      <p class="big">{place || 'No location on record'}</p>
      <Facts
        rows={[
          ['Address', <Mono>{data.ip}</Mono>],
          [
            'Country',
            data.country ? (
              <>
                <Country code={data.country.code} /> {data.country.name}
              </>
            ) : null,
          ],
          ['Region', data.region],
          ['City', data.city],
          ['Coordinates', coordinatesText(data)],
          ['Time zone', data.timezone],
          [
            'Network',
            data.asn !== null ? (
              <>
                AS{data.asn} {data.as_org}
              </>
            ) : (
              data.as_org
            ),
          ],
          ['Prefix', data.network ? <Mono>{data.network}</Mono> : null],
          [
            'Relay egress',
            data.is_relay === null ? (
              'lists still loading'
            ) : data.is_relay ? (
              <Badge tone="info">yes</Badge>
            ) : (
              'no'
            ),
          ],
        ]}
      />
      <Note>{data.accuracy_note}</Note>
    </>
  );
}

export function IpPrivacyView({ data }: { data: IpPrivacyResult }) {
  const r = data.relay;
  return (
    <>
      <p class={`verdict tone-${data.is_relay ? 'info' : 'ok'}`}>
        {data.is_relay && r
          ? `A published relay egress: ${r.provider}.`
          : 'Not a published relay egress address.'}
      </p>
      {r && (
        <Facts
          rows={[
            ['Relay', r.provider],
            ['Published prefix', <Mono>{r.prefix}</Mono>],
            [
              'Users’ region (hint)',
              r.egress_region
                ? [r.egress_region.city, r.egress_region.region, countryName(r.egress_region.country)]
                    .filter(Boolean)
                    .join(', ')
                : null,
            ],
          ]}
        />
      )}
      <p class="note">
        Lists checked:{' '}
        {data.lists.map((l, i) => (
          <span key={l.provider}>
            {i > 0 && '; '}
            {l.provider} ({l.loaded ? `${l.entries.toLocaleString('en')} entries` : 'not loaded yet'}
            {l.updated_at && `, updated ${formatDateTime(l.updated_at)}`})
          </span>
        ))}
        .
      </p>
      <Note>{data.note}</Note>
    </>
  );
}

/** The compact "your address" strip shown on load. */
export function MyIpView({ data, onLookup }: { data: MyIpResult; onLookup: (ip: string) => void }) {
  const place = data.geo ? [data.geo.city, data.geo.country?.name].filter(Boolean).join(', ') : '';
  const licences = [...(data.geo?.attribution ?? []), ...(data.asn?.attribution ?? [])];
  const seen = new Set<string>();
  return (
    <div class="myip">
      <div>
        <span class="muted">Your address</span> <strong class="mono">{data.ip}</strong>
        <span class="muted"> IPv{data.version}</span>
      </div>
      <div class="myip-facts">
        {place && <span>{place}</span>}
        {data.asn && (
          <span>
            AS{data.asn.number} {data.asn.org}
          </span>
        )}
        {data.reverse_dns && <span class="mono">{data.reverse_dns}</span>}
        {data.relay?.is_relay && data.relay.match && <Badge tone="info">{data.relay.match.provider}</Badge>}
        <span class="muted">{data.request.protocol}</span>
      </div>
      <div class="myip-actions">
        <button type="button" class="small" onClick={() => onLookup(data.ip)}>
          Look up this address
        </button>
        {licences
          .filter((l) => !seen.has(l.url) && seen.add(l.url))
          .map((l) => (
            <a key={l.url} class="muted small-link" href={l.url} rel="noreferrer noopener" target="_blank">
              {l.text}
            </a>
          ))}
      </div>
    </div>
  );
}
