import { describe, expect, it } from 'vitest';
import { faxPhone, parseJCard, voicePhone } from '../../../../src/features/rdap/jcard.js';
import { hasShared, sharedFixture } from '../../../shared-data.js';

type Obj = { vcardArray?: unknown; entities?: Obj[]; roles?: string[] };

function entityWithRole(file: string, role: string): Obj {
  const queue = [...((sharedFixture(file) as Obj).entities ?? [])];
  while (queue.length > 0) {
    const e = queue.shift()!;
    if (e.roles?.includes(role)) return e;
    queue.push(...(e.entities ?? []));
  }
  throw new Error(`no ${role} in ${file}`);
}

describe('parseJCard (RFC 7095)', () => {
  it.skipIf(!hasShared)(
    'reads fn, kind, org, email and tel of an ARIN contact, tel types given as an array',
    () => {
      const card = parseJCard(entityWithRole('rdap/arin-ip-2606-4700-4700--1111.json', 'abuse').vcardArray);
      expect(card).toMatchObject({
        fn: 'Abuse',
        kind: 'group',
        org: 'Abuse',
        emails: ['abuse@cloudflare.com'],
        phones: [{ number: '+1-650-319-8930', types: ['work', 'voice'] }],
      });
      // ARIN leaves the ADR components empty and puts the postal address in LABEL.
      expect(card?.addresses[0]).toEqual({
        label: '101 Townsend Street\nSan Francisco\nCA\n94107\nUnited States',
        lines: [],
        locality: null,
        region: null,
        postal_code: null,
        country: null,
        country_code: null,
      });
    },
  );

  it.skipIf(!hasShared)(
    'strips the tel: scheme of a uri-typed tel (Verisign) and reads a structured adr (.fr)',
    () => {
      const abuse = parseJCard(
        entityWithRole('rdap/verisign-com-domain-google.com.json', 'abuse').vcardArray,
      );
      expect(abuse?.phones).toEqual([{ number: '+1.2086851750', types: ['voice'] }]);
      expect(abuse?.fn).toBeNull(); // an empty FN is absent, not ""

      const registrar = parseJCard(
        entityWithRole('rdap/cctld-fr-domain-lemonde.fr.json', 'registrar').vcardArray,
      );
      expect(registrar?.addresses[0]).toMatchObject({
        lines: ['39 boulevard des Capucines'],
        locality: 'PARIS',
        postal_code: '75002',
        country: 'FR',
      });
      expect(registrar?.urls).toEqual(['https://www.nameshield.com/contact-nameshield/']);
      expect(voicePhone(registrar!)).toBe('+33.241182828');
      expect(faxPhone(registrar!)).toBe('+33.241182829');
    },
  );

  it.skipIf(!hasShared)('takes adr components given as arrays, including empty ones (.no)', () => {
    const card = parseJCard(entityWithRole('rdap/cctld-no-domain-norway.no.json', 'registrar').vcardArray);
    expect(card?.addresses[0]).toMatchObject({
      lines: ['Christian Krohgs gate 16'],
      locality: 'Oslo',
      postal_code: 'NO-0186',
      country: 'NORWAY',
    });
  });

  it('orders by PREF, joins ORG units, reads the CC parameter and ignores property-name case', () => {
    const card = parseJCard([
      'vcard',
      [
        ['version', {}, 'text', '4.0'],
        ['EMAIL', {}, 'text', 'second@example.net'],
        ['email', { pref: '1' }, 'text', 'first@example.net'],
        ['email', {}, 'text', 'mailto:second@example.net'],
        ['org', {}, 'text', ['Example Inc.', 'Registry Operations']],
        ['adr', { cc: 'nz' }, 'text', ['', '', '1 Queen St', 'Auckland', '', '1010', 'New Zealand']],
        ['tel', { type: 'fax' }, 'text', '+64.1'],
      ],
    ]);
    expect(card?.emails).toEqual(['first@example.net', 'second@example.net']);
    expect(card?.org).toBe('Example Inc., Registry Operations');
    expect(card?.addresses[0]?.country_code).toBe('NZ');
    // A fax is never reported as the voice number.
    expect(voicePhone(card!)).toBeNull();
  });

  it('returns undefined for something that is not a jCard, and skips malformed properties', () => {
    expect(parseJCard(undefined)).toBeUndefined();
    expect(parseJCard(['vcard'])).toBeUndefined();
    expect(parseJCard({ fn: 'x' })).toBeUndefined();
    const card = parseJCard([
      'vcard',
      [['fn'], 'junk', ['fn', {}, 'text', 'Kept'], ['email', null, 'text', 42]],
    ]);
    expect(card).toMatchObject({ fn: 'Kept', emails: [] });
  });
});
