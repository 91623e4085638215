import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config/index.js';
import {
  BUNDLED_BLOCKLISTS_FILE,
  CatalogueError,
  loadCatalogue,
  parseCatalogue,
  queryZone,
} from '../../../../src/features/blocklists/catalogue.js';
import { thrownBy } from '../../../expect-error.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-blocklists-'));
let n = 0;
function fileWith(doc: unknown): string {
  const path = join(dir, `catalogue-${n++}.json`);
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

const good = {
  zone: 'bl.example.org',
  name: 'Example list',
  kind: 'ip4',
  codes: { '127.0.0.2': 'listed' },
  refusal_codes: { '127.255.255.254': 'public resolver' },
  delist_url: 'https://example.org/remove',
  key: null,
  terms: 'free',
  enabled: true,
};

describe('the bundled catalogue', () => {
  const catalogue = loadCatalogue({ blocklistsFile: BUNDLED_BLOCKLISTS_FILE, blocklistKeys: {} });
  const enabled = catalogue.lists.filter((l) => l.enabled);

  it('validates, and enables some lists of each address family it can', () => {
    expect(catalogue.lists.length).toBeGreaterThan(15);
    expect(enabled.length).toBeGreaterThan(3);
    expect(enabled.some((l) => l.kind === 'ip4')).toBe(true);
    expect(enabled.some((l) => l.kind === 'domain')).toBe(true);
  });

  it('gives every enabled list codes, a delisting page, terms and its sources', () => {
    for (const list of enabled) {
      expect(Object.keys(list.codes).length, list.zone).toBeGreaterThan(0);
      expect(list.delistUrl, list.zone).toMatch(/^https?:\/\//);
      expect(list.terms.length, list.zone).toBeGreaterThan(20);
      expect(list.sources.length, list.zone).toBeGreaterThan(0);
    }
  });

  it('keeps the refusal codes the lists document (Spamhaus, URIBL, SURBL)', () => {
    const zen = catalogue.lists.find((l) => l.zone === 'zen.spamhaus.org' && l.kind === 'ip4');
    expect(Object.keys(zen?.refusalCodes ?? {})).toEqual(
      expect.arrayContaining(['127.255.255.252', '127.255.255.254', '127.255.255.255']),
    );
    for (const zone of ['multi.uribl.com', 'multi.surbl.org']) {
      const list = catalogue.lists.find((l) => l.zone === zone);
      expect(list?.refusalCodes['127.0.0.1'], zone).toBeDefined();
      expect(list?.codes['127.0.0.1'], zone).toBeUndefined();
    }
  });

  it('enables no list that needs a key, and no defunct list', () => {
    expect(enabled.filter((l) => l.keySetting !== null)).toEqual([]);
    for (const zone of ['dnsbl.sorbs.net', 'dnsbl.ahbl.org', 'dnsbl.njabl.org', 'list.dsbl.org']) {
      const list = catalogue.lists.find((l) => l.zone === zone);
      expect(list?.enabled, zone).toBe(false);
    }
  });

  it('catalogues keyed lists with their setting and the zone without its key', () => {
    const dqs = catalogue.lists.find((l) => l.keySetting === 'SPAMHAUS_DQS_KEY' && l.kind === 'ip4');
    expect(dqs?.zone).toBe('zen.dq.spamhaus.net');
    expect(dqs?.keyMissing).toBe(true);
    expect(dqs && queryZone(dqs)).toBeNull();
  });

  it('is what the configuration checks and loads by default', () => {
    const config = loadConfig({});
    expect(config.blocklistsFile).toBe(BUNDLED_BLOCKLISTS_FILE);
    expect(config.blocklistKeys).toEqual({});
  });
});

describe('a catalogue file that cannot be used', () => {
  const cases: [string, unknown, RegExp][] = [
    ['not JSON', '{"lists": [', /not JSON/],
    ['no lists array', { list: [] }, /must be an object \{"lists"/],
    [
      'a missing field',
      { lists: [{ ...good, terms: undefined }] },
      /lists\[0\] \(bl\.example\.org\): .*terms/,
    ],
    [
      'a zone that is no DNS name',
      { lists: [good, { ...good, zone: 'bad_zone..org' }] },
      /lists\[1\] \(bad_zone\.\.org\): zone:/,
    ],
    ['a one-label zone', { lists: [{ ...good, zone: 'localhost' }] }, /lists\[0\] \(localhost\): zone:/],
    [
      'an unknown kind',
      { lists: [{ ...good, kind: 'ipv4' }] },
      /lists\[0\] \(bl\.example\.org\): kind: "ipv4" is not one of ip4, ip6, domain/,
    ],
    [
      'a code outside 127/8',
      { lists: [{ ...good, codes: { '10.0.0.2': 'x' } }] },
      /codes: "10\.0\.0\.2" is not a 127\.x\.x\.x address/,
    ],
    ['a code that is no address', { lists: [{ ...good, codes: { listed: 'x' } }] }, /codes: "listed" is not/],
    [
      'a bad refusal code',
      { lists: [{ ...good, refusal_codes: { '127.0.0.256': 'x' } }] },
      /refusal_codes: "127\.0\.0\.256"/,
    ],
    ['no codes at all', { lists: [{ ...good, codes: {} }] }, /codes: lists no return code/],
    [
      'a code both listed and refused',
      { lists: [{ ...good, refusal_codes: { '127.0.0.2': 'x' } }] },
      /refusal_codes: "127\.0\.0\.2" is also in codes/,
    ],
    [
      'a key setting in lower case',
      { lists: [{ ...good, zone: '{key}.bl.example.org', key: 'spamhaus_key' }] },
      /key: "spamhaus_key" is not a key setting's name/,
    ],
    [
      'a key setting not ending in _KEY',
      { lists: [{ ...good, zone: '{key}.bl.example.org', key: 'SESSION_SECRET' }] },
      /key: "SESSION_SECRET"/,
    ],
    [
      'a keyed zone without {key}',
      { lists: [{ ...good, key: 'EXAMPLE_KEY' }] },
      /zone: must start with the label \{key\}/,
    ],
    [
      '{key} in a list without a key',
      { lists: [{ ...good, zone: '{key}.bl.example.org' }] },
      /zone: holds \{key\} but the list has no key setting/,
    ],
    [
      'a delisting page that is no URL',
      { lists: [{ ...good, delist_url: 'example.org/remove' }] },
      /delist_url: "example\.org\/remove" is not an absolute URL/,
    ],
    [
      'enabled that is not a boolean',
      { lists: [{ ...good, enabled: 'yes' }] },
      /lists\[0\] \(bl\.example\.org\): enabled:/,
    ],
    [
      'a list twice',
      { lists: [good, { ...good, name: 'again' }] },
      /lists\[1\] \(bl\.example\.org\): zone: listed twice as ip4/,
    ],
  ];
  for (const [what, doc, message] of cases) {
    it(`is refused naming the entry and the field: ${what}`, () => {
      const file = fileWith(doc);
      const err = thrownBy(
        () => parseCatalogue(typeof doc === 'string' ? doc : JSON.stringify(doc), file),
        CatalogueError,
      );
      expect(err.message).toMatch(message);
      expect(err.message).toContain(file);
      // And the start-up refuses it, naming the variable and the entry.
      const configErr = thrownBy(() => loadConfig({ BLOCKLISTS_FILE: file }), ConfigError);
      expect(configErr).toBeInstanceOf(ConfigError);
      expect(configErr.message).toMatch(/^BLOCKLISTS_FILE: /);
      expect(configErr.message).toMatch(message);
    });
  }

  it('is refused at start-up when missing, naming the file', () => {
    const missing = join(dir, 'no-such-file.json');
    const err = thrownBy(() => loadConfig({ BLOCKLISTS_FILE: missing }), ConfigError);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`BLOCKLISTS_FILE: ${missing}: cannot read it (ENOENT)`);
  });

  it("is refused when it names one of netdiag's own secrets as a key", () => {
    const file = fileWith({
      lists: [{ ...good, zone: '{key}.bl.example.org', key: 'TURNSTILE_SECRET_KEY' }],
    });
    const err = thrownBy(
      () => loadConfig({ BLOCKLISTS_FILE: file, TURNSTILE_SECRET_KEY: 's3cret' }),
      ConfigError,
    );
    expect(err.message).toMatch(/^BLOCKLISTS_FILE: .*TURNSTILE_SECRET_KEY, netdiag's own secret/);
    expect(err.message).not.toContain('s3cret');
  });
});

describe('BLOCKLISTS_FILE and keys', () => {
  const keyed = {
    ...good,
    zone: '{key}.dq.example.org',
    name: 'Keyed',
    key: 'EXAMPLE_DQS_KEY',
    enabled: true,
  };
  const file = fileWith({ lists: [good, keyed] });

  it('replaces the bundled catalogue', () => {
    const config = loadConfig({ BLOCKLISTS_FILE: file });
    const catalogue = loadCatalogue(config);
    expect(catalogue.file).toBe(file);
    expect(catalogue.lists.map((l) => l.zone)).toEqual(['bl.example.org', 'dq.example.org']);
  });

  it('resolves a key from the environment into the query zone only', () => {
    const secret = 'abcdefghijklmnopqrstuvwxyz';
    const config = loadConfig({ BLOCKLISTS_FILE: file, EXAMPLE_DQS_KEY: secret });
    const list = loadCatalogue(config).lists.find((l) => l.keySetting === 'EXAMPLE_DQS_KEY');
    if (!list) throw new Error('the keyed list is missing');
    expect(list.keyMissing).toBe(false);
    expect(list.keyValue).toBe(secret);
    expect(queryZone(list)).toBe(`${secret}.dq.example.org`);
    // What an answer could be built from: serialized, spread, listed: no key anywhere.
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(JSON.stringify({ ...list })).not.toContain(secret);
    expect(Object.keys(list)).not.toContain('keyValue');
    expect(list.zone).toBe('dq.example.org');
  });

  it('reports a key that is not set as missing, and never queries without it', () => {
    const list = loadCatalogue(loadConfig({ BLOCKLISTS_FILE: file })).lists[1];
    expect(list?.keyMissing).toBe(true);
    expect(list?.keyValue).toBeNull();
    expect(list && queryZone(list)).toBeNull();
  });

  it('refuses a key that is not one DNS label, without echoing it', () => {
    const err = thrownBy(
      () => loadConfig({ BLOCKLISTS_FILE: file, EXAMPLE_DQS_KEY: 'abc.evil.example' }),
      ConfigError,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^EXAMPLE_DQS_KEY: must be one DNS label/);
    expect(err.message).not.toContain('evil');
  });
});
