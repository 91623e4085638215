import { coordinatesText } from '../../client/words.js';
import type { IpGeoResponse, IpPrivacyResponse, MyIpResponse } from '../../features/ip/ip.schema.js';
import { facts } from '../table.js';
import { badge, formatDateTime, type Renderer } from './common.js';

export const ipGeo: Renderer = (body, style) => {
  const data = body as IpGeoResponse;
  const place = [data.city, data.region, data.country?.name].filter(Boolean).join(', ');
  return [
    style.bold(place || 'No location on record'),
    '',
    ...facts(style, [
      ['Address', data.ip],
      ['Country', data.country ? `${data.country.code} ${data.country.name}` : null],
      ['Region', data.region],
      ['City', data.city],
      ['Coordinates', coordinatesText(data)],
      ['Time zone', data.timezone],
      ['Network', data.asn !== null ? `AS${data.asn} ${data.as_org ?? ''}`.trim() : data.as_org],
      ['Prefix', data.network],
      [
        'Relay egress',
        data.is_relay === null ? 'lists still loading' : data.is_relay ? badge(style, 'info', 'yes') : 'no',
      ],
    ]),
    '',
    style.dim(data.accuracy_note),
  ];
};

export const ipPrivacy: Renderer = (body, style) => {
  const data = body as IpPrivacyResponse;
  const r = data.relay;
  const lists = data.lists
    .map(
      (l) =>
        `${l.provider} (${l.loaded ? `${l.entries.toLocaleString('en')} entries` : 'not loaded yet'}` +
        `${l.updated_at ? `, updated ${formatDateTime(l.updated_at)}` : ''})`,
    )
    .join('; ');
  return [
    style.bold(
      data.is_relay && r
        ? badge(style, 'info', `A published relay egress: ${r.provider}.`)
        : badge(style, 'ok', 'Not a published relay egress address.'),
    ),
    ...(r
      ? [
          '',
          ...facts(style, [
            ['Relay', r.provider],
            ['Published prefix', r.prefix],
            [
              'Users’ region (hint)',
              r.egress_region
                ? [r.egress_region.city, r.egress_region.region, r.egress_region.country]
                    .filter(Boolean)
                    .join(', ')
                : null,
            ],
          ]),
        ]
      : []),
    '',
    style.dim(`Lists checked: ${lists}.`),
    style.dim(data.note),
  ];
};

export const myIp: Renderer = (body, style) => {
  const data = body as MyIpResponse;
  const place = data.geo
    ? [data.geo.city, data.geo.region, data.geo.country?.name].filter(Boolean).join(', ')
    : '';
  return facts(style, [
    ['Your address', `${style.bold(data.ip)} ${style.dim(`IPv${data.version}`)}`],
    ['Reverse DNS', data.reverse_dns],
    ['Location', place],
    ['Network', data.asn ? `AS${data.asn.number} ${data.asn.org ?? ''}`.trim() : null],
    [
      'Relay egress',
      data.relay === null
        ? null
        : data.relay.is_relay && data.relay.match
          ? badge(style, 'info', data.relay.match.provider)
          : 'no',
    ],
    ['Protocol', data.request.protocol],
  ]);
};
