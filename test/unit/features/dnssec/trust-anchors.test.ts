/**
 * DNSSEC_TRUST_ANCHORS: where validation starts. The built-in anchors are IANA's; a file in
 * zone-file format (unbound's root.key, BIND's exported keys) replaces them, and a bad one
 * stops the start naming the line.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config/index.js';
import { dsDigest, keyTag } from '../../../../src/dnssec/index.js';
import { loadTrustAnchors, parseTrustAnchors } from '../../../../src/features/dnssec/trust-anchors.js';

// The IANA root KSK-2017 (key tag 20326), as root-anchors.xml and the root zone publish it.
const KSK_2017 =
  'AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU=';

describe('trust anchors', () => {
  it('built in: the IANA root KSKs 20326 and 38696, and the first is the key the root serves', () => {
    const anchors = loadTrustAnchors(undefined);
    const ds = anchors.ds.get('.') ?? [];
    expect(ds.map((d) => d.keyTag)).toEqual([20326, 38696]);
    const key = { flags: 257, algorithm: 8, key: Buffer.from(KSK_2017, 'base64') };
    expect(keyTag(key)).toBe(20326);
    expect(dsDigest('.', key, 2)?.equals(ds[0]!.digest)).toBe(true);
  });

  it('reads DS and DNSKEY records in zone-file format: TTL and class optional, comments, parentheses', () => {
    const anchors = parseTrustAnchors(
      `; a lab's root\n. 3600 IN DS 12345 13 2 ${'ab'.repeat(32)}\nexample. DNSKEY 257 3 13 (\n  ${Buffer.alloc(64, 1).toString('base64')} ) ; KSK\n`,
      'lab.key',
    );
    expect(anchors.ds.get('.')?.[0]).toMatchObject({ keyTag: 12345, algorithm: 13, digestType: 2 });
    expect(anchors.dnskey.get('example')?.[0]).toMatchObject({ flags: 257, algorithm: 13 });
    expect(anchors.dnskey.get('example')?.[0]?.key.length).toBe(64);
  });

  it('refuses what is not a DS or DNSKEY record, naming the line', () => {
    expect(() => parseTrustAnchors('. IN A 192.0.2.1', 'bad.key')).toThrow(
      /bad\.key: only DS and DNSKEY records are trust anchors: \. IN A 192\.0\.2\.1/,
    );
    expect(() => parseTrustAnchors('. IN DS 1 8 2 not-hex', 'bad.key')).toThrow(/a DS record must be/);
    expect(() => parseTrustAnchors('; nothing', 'empty.key')).toThrow(/no DS or DNSKEY record/);
  });

  it('DNSSEC_TRUST_ANCHORS: a bad file stops the start, naming the variable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netdiag-anchors-'));
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, '. IN TXT "hello"\n');
    expect(() => loadConfig({ DNSSEC_TRUST_ANCHORS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ DNSSEC_TRUST_ANCHORS: join(dir, 'missing.key') })).toThrow(
      /DNSSEC_TRUST_ANCHORS/,
    );
    const good = join(dir, 'root.key');
    writeFileSync(
      good,
      `. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D\n`,
    );
    expect(loadConfig({ DNSSEC_TRUST_ANCHORS: good }).dnssecTrustAnchors).toBe(good);
  });
});
