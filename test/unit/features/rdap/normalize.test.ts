import { describe, expect, it } from 'vitest';
import {
  domainFromRdap,
  eventsFromRdap,
  networkFromRdap,
  RAW_MAX_BYTES,
  registrarLink,
} from '../../../../src/features/rdap/normalize.js';
import type { RdapObject } from '../../../../src/providers/rdap/types.js';
import { hasShared, sharedFixture } from '../../../shared-data.js';

/** A real registry answer (../shared/fixtures/rdap/); the tests that read one are skipped without it. */
const rdap = (name: string) => sharedFixture(`rdap/${name}`) as RdapObject;
const URL_ = 'https://registry.example/rdap/x';

describe('domainFromRdap', () => {
  it.skipIf(!hasShared)('normalizes the Verisign .com answer for google.com (thin registry)', () => {
    const d = domainFromRdap(rdap('verisign-com-domain-google.com.json'), URL_);
    expect(d).toMatchObject({
      url: URL_,
      object_class: 'domain',
      handle: '2138514_DOMAIN_COM-VRSN',
      ldh_name: 'google.com', // Verisign sends GOOGLE.COM
      unicode_name: 'google.com',
      status: expect.arrayContaining(['client delete prohibited', 'server update prohibited']),
      events: {
        registration: '1997-09-15T04:00:00Z',
        expiration: '2028-09-14T04:00:00Z',
        last_changed: '2019-09-09T15:39:04Z',
        last_update_of_rdap_database: '2024-07-29T17:23:53Z',
      },
      entities: {
        registrar: { name: 'MarkMonitor Inc.', iana_id: '292', handle: '292' },
        abuse: { email: 'abusecomplaints@markmonitor.com', phone: '+1.2086851750' },
      },
      nameservers: [
        { ldh_name: 'ns1.google.com', ipv4: [], ipv6: [] },
        { ldh_name: 'ns2.google.com', ipv4: [], ipv6: [] },
        { ldh_name: 'ns3.google.com', ipv4: [], ipv6: [] },
        { ldh_name: 'ns4.google.com', ipv4: [], ipv6: [] },
      ],
      secure_dns: { delegation_signed: false },
      raw_truncated: false,
    });
    expect(d.notices.map((n) => n.title)).toEqual([
      'Terms of Use',
      'Status Codes',
      'RDDS Inaccuracy Complaint Form',
    ]);
    expect(d.notices[1]?.links).toEqual(['https://icann.org/epp']);
    expect(d.raw).toEqual(rdap('verisign-com-domain-google.com.json'));
    expect(d.entities.registrant).toBeUndefined();
  });

  it.skipIf(!hasShared)(
    'normalizes the MarkMonitor registrar answer: org as the registrar name, "last update", redacted registrant',
    () => {
      const d = domainFromRdap(rdap('registrar-markmonitor-domain-google.com.json'), URL_);
      expect(d.events).toMatchObject({
        registration: '1997-09-15T07:00:00Z', // "+0000" offsets read as UTC
        last_update: '2019-09-09T15:39:04Z',
        last_changed: '2019-09-09T15:39:04Z', // the non-standard "last update" stands in for "last changed"
      });
      expect(d.entities.registrar).toEqual({ name: 'MarkMonitor Inc.', iana_id: '292', handle: '292' });
      expect(d.entities.abuse).toEqual({ email: 'abusecomplaints@markmonitor.com', phone: '+1.2086851750' });
      expect(d.entities.registrant).toEqual({
        handle: null,
        roles: ['registrant'],
        kind: null,
        name: null,
        organization: 'Google LLC',
        email: null,
        phone: null,
        fax: null,
        address: {
          label: null,
          lines: [],
          locality: null,
          region: 'CA',
          postal_code: null,
          country: 'US',
          country_code: null,
        },
        redacted: true,
      });
      expect(d.entities.technical?.redacted).toBe(true);
    },
  );

  it.skipIf(!hasShared)('keeps a thick ccTLD registrant as published (.fr), with no secureDNS member', () => {
    const d = domainFromRdap(rdap('cctld-fr-domain-lemonde.fr.json'), URL_);
    expect(d.entities.registrant).toMatchObject({
      handle: 'SEDM254-FRNIC',
      name: 'SOCIETE EDITRICE du monde',
      organization: 'SOCIETE EDITRICE DU MONDE',
      email: 'domain_names@lemonde.fr',
      phone: '+33.157282224',
      redacted: false,
    });
    expect(d.entities.registrar).toMatchObject({
      name: 'NAMESHIELD',
      iana_id: '1251',
      url: 'https://www.nameshield.com/contact-nameshield/',
    });
    expect(d.secure_dns).toBeNull();
  });

  it.skipIf(!hasShared)('drops trailing dots (.top) and derives nothing that is not there', () => {
    const d = domainFromRdap(rdap('gtld-top-domain-bitcoin.top.json'), URL_);
    expect(d.ldh_name).toBe('bitcoin.top');
    expect(d.unicode_name).toBe('bitcoin.top');
    expect(d.nameservers[0]).toEqual({ ldh_name: 'ns1.72dns.com', ipv4: [], ipv6: [] });
    expect(d.events.registration).toBe('2014-11-17T16:00:29Z');
    expect(d.entities.abuse).toEqual({ email: 'westabuse@gmail.com', phone: '02862778877' });
  });

  it('derives unicode_name from an A-label name when the registry sends none', () => {
    const d = domainFromRdap({ objectClassName: 'domain', ldhName: 'XN--MNCHEN-3YA.DE' }, URL_);
    expect(d).toMatchObject({ ldh_name: 'xn--mnchen-3ya.de', unicode_name: 'münchen.de', secure_dns: null });
  });

  it('maps DS records of secureDNS', () => {
    const d = domainFromRdap(
      {
        objectClassName: 'domain',
        ldhName: 'example.com',
        secureDNS: {
          delegationSigned: true,
          dsData: [
            {
              keyTag: 370,
              algorithm: 13,
              digestType: 2,
              digest: 'BE74359954660069D5C63D200C39F5603827D7DD02B56F120EE9F3A86764247C',
            },
          ],
        },
      },
      URL_,
    );
    expect(d.secure_dns).toEqual({
      delegation_signed: true,
      ds: [
        {
          key_tag: 370,
          algorithm: 13,
          digest_type: 2,
          digest: 'BE74359954660069D5C63D200C39F5603827D7DD02B56F120EE9F3A86764247C',
        },
      ],
    });
  });

  it('leaves out raw past the size cap and says so', () => {
    const big = {
      objectClassName: 'domain',
      ldhName: 'example.com',
      remarks: [{ description: ['x'.repeat(RAW_MAX_BYTES)] }],
    };
    const d = domainFromRdap(big, URL_);
    expect(d.raw).toBeNull();
    expect(d.raw_truncated).toBe(true);
    expect(d.ldh_name).toBe('example.com');
  });
});

describe('networkFromRdap', () => {
  it.skipIf(!hasShared)('normalizes an ARIN IPv6 network with cidr0_cidrs', () => {
    const n = networkFromRdap(rdap('arin-ip-2606-4700-4700--1111.json'), URL_);
    expect(n).toMatchObject({
      object_class: 'ip network',
      handle: 'NET6-2606-4700-1',
      name: 'CLOUDFLARENET',
      type: 'DIRECT ALLOCATION',
      start_address: '2606:4700::',
      end_address: '2606:4700:ffff:ffff:ffff:ffff:ffff:ffff',
      cidrs: ['2606:4700::/32'],
      ip_version: 'v6',
      country: null,
      parent_handle: 'NET6-2600-1',
      status: ['active'],
      events: { last_changed: '2017-02-17T23:07:51Z', registration: '2011-11-01T19:59:58Z' },
      entities: {
        registrar: null,
        abuse: { email: 'abuse@cloudflare.com', phone: '+1-650-319-8930' },
        registrant: { handle: 'CLOUD14', name: 'Cloudflare, Inc.', kind: 'org' },
        noc: { handle: 'NOC11962-ARIN', email: 'noc@cloudflare.com' },
      },
    });
  });

  it.skipIf(!hasShared)('normalizes an APNIC IPv4 network', () => {
    const n = networkFromRdap(rdap('apnic-ip-1.1.1.1.json'), URL_);
    expect(n).toMatchObject({
      cidrs: ['1.1.1.0/24'],
      ip_version: 'v4',
      country: 'AU',
      name: 'APNIC-LABS',
      entities: {
        abuse: { email: 'helpdesk@apnic.net', phone: null },
        registrant: { fax: '+61-7-38583199' },
      },
    });
  });

  it.skipIf(!hasShared)('computes CIDRs from the range when the RIR sends no cidr0 (RIPE)', () => {
    const n = networkFromRdap(rdap('ripe-ip-130.59.0.0.json'), URL_);
    expect(n).toMatchObject({
      cidrs: ['130.59.0.0/16'],
      ip_version: 'v4',
      country: 'CH',
      parent_handle: '0.0.0.0 - 255.255.255.255',
      entities: { abuse: { email: 'abuse@switch.ch' } },
    });
  });
});

describe('registrarLink', () => {
  it.skipIf(!hasShared)('finds the related RDAP link of a thin registry', () => {
    expect(registrarLink(rdap('verisign-com-domain-google.com.json'))).toBe(
      'https://rdap.markmonitor.com/rdap/domain/GOOGLE.COM',
    );
  });

  it.skipIf(!hasShared)('ignores related links that are not RDAP (HTML), and self links', () => {
    expect(
      registrarLink({
        links: [
          { rel: 'related', href: 'https://whois.example/', type: 'text/html' },
          { rel: 'self', href: 'https://reg.example/domain/x', type: 'application/rdap+json' },
        ],
      }),
    ).toBeUndefined();
    expect(registrarLink(rdap('cctld-fr-domain-lemonde.fr.json'))).toBeUndefined();
  });
});

describe('eventsFromRdap', () => {
  it('keeps the first of repeated actions and an unparseable date as given', () => {
    expect(
      eventsFromRdap([
        { eventAction: 'transfer', eventDate: '2020-01-01T00:00:00Z' },
        { eventAction: 'transfer', eventDate: '2021-01-01T00:00:00Z' },
        { eventAction: 'expiration', eventDate: 'sometime' },
        { eventAction: 'registration' },
      ]),
    ).toEqual({ transfer: '2020-01-01T00:00:00Z', expiration: 'sometime' });
  });
});
