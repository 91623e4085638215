/**
 * DKIM public keys (RFC 6376 §3.6.1) at `<selector>._domainkey.<domain>`,
 * with the key actually parsed (node:crypto) to know its size: RFC 8301
 * makes RSA keys under 1024 bits invalid and asks for 2048; Ed25519 keys
 * (RFC 8463) are the raw 32-byte key.
 */

import { createPublicKey, type KeyObject } from 'node:crypto';
import { mapConcurrent } from '../../concurrency.js';
import { DKIM_QUERY_CONCURRENCY } from './dkim-selectors.js';
import { parseTagList, tagValue } from './tag-list.js';
import { type CheckStatus, type Finding, finding, type MailDns } from './types.js';

/**
 * valid: usable and at least 2048-bit RSA or Ed25519; weak: 1024–2047-bit RSA;
 * too_short: RSA under 1024 bits, which verifiers must reject; revoked: empty p=;
 * invalid: not usable for email (syntax, unknown key type, unparsable key, ...).
 */
export type DkimKeyState = 'valid' | 'weak' | 'too_short' | 'revoked' | 'invalid';

export interface DkimKey {
  record: string;
  state: DkimKeyState;
  key_type: 'rsa' | 'ed25519' | null;
  key_bits: number | null;
  /** t=y: the domain is testing DKIM and verifiers treat failures as unsigned. */
  testing: boolean;
  problem?: string;
}

export interface DkimSelectorResult {
  selector: string;
  /** `<selector>._domainkey.<domain>` */
  name: string;
  result: 'key' | 'none' | 'error';
  aliases: string[];
  keys: DkimKey[];
  error?: string;
}

export type KeyStrength = 'strong' | 'weak' | 'too_short';

export interface DkimEvaluation {
  state: 'found' | 'none' | 'error';
  /** Every selector queried, in order. */
  tested: string[];
  /** Selectors that returned a DKIM record or failed, in the order tested. */
  selectors: DkimSelectorResult[];
  /** At least one usable key (RSA ≥ 1024 bits or Ed25519). */
  validKey: boolean;
  /** The weakest non-revoked key that parsed; null when none. */
  weakest: KeyStrength | null;
  /** The record of the first usable key. */
  record: string | null;
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

const RFC6376 = 'RFC 6376 §3.6.1';
// DER SubjectPublicKeyInfo header for an Ed25519 key (RFC 8410 §4): the raw 32 bytes follow it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A TXT record is a DKIM key record if it starts with v=DKIM1 or carries a p= tag. */
export function isDkimRecord(text: string): boolean {
  const list = parseTagList(text);
  return list.tags[0]?.name === 'v' || list.tags.some((t) => t.name === 'p');
}

/** Parses one key record; findings carry what makes it weak or unusable. */
export function parseDkimKey(text: string): { key: DkimKey; findings: Finding[] } {
  const findings: Finding[] = [];
  const list = parseTagList(text);
  const key: DkimKey = { record: text, state: 'invalid', key_type: null, key_bits: null, testing: false };
  const invalid = (problem: string, rfc = RFC6376) => {
    key.state = 'invalid';
    key.problem = problem;
    findings.push(finding('error', problem, rfc));
    return { key, findings };
  };
  if (list.duplicates.length > 0)
    return invalid(`tag ${list.duplicates.join(', ')} appears more than once`, 'RFC 6376 §3.2');
  const v = tagValue(list, 'v');
  if (v !== undefined && list.tags[0]?.name !== 'v') return invalid('v= must be the first tag when present');
  if (v !== undefined && v !== 'DKIM1') return invalid(`v=${v} is not DKIM1; the record must be discarded`);
  const flags = (tagValue(list, 't') ?? '').split(':').map((f) => f.trim().toLowerCase());
  key.testing = flags.includes('y');
  const k = (tagValue(list, 'k') ?? 'rsa').toLowerCase();
  if (k !== 'rsa' && k !== 'ed25519')
    return invalid(`k=${k} is not a key type verifiers know (rsa, ed25519)`);
  key.key_type = k;
  const hashes = tagValue(list, 'h');
  if (hashes !== undefined) {
    const allowed = hashes.split(':').map((h) => h.trim().toLowerCase());
    if (!allowed.includes('sha256'))
      return invalid(`h=${hashes} allows only SHA-1, which must not be used`, 'RFC 8301 §3.1');
    if (allowed.includes('sha1'))
      findings.push(finding('warning', 'h= still allows SHA-1, which must not be used.', 'RFC 8301 §3.1'));
  }
  const service = tagValue(list, 's');
  if (
    service !== undefined &&
    !service.split(':').some((s) => ['*', 'email'].includes(s.trim().toLowerCase()))
  ) {
    return invalid(`s=${service} does not include email or *`);
  }
  const p = tagValue(list, 'p');
  if (p === undefined) return invalid('no p= tag (the public key is required)');
  const data = p.replace(/\s+/g, '');
  if (data === '') {
    key.state = 'revoked';
    key.problem = 'empty p=: the key is revoked';
    findings.push(finding('info', 'A revoked key (empty p=).', RFC6376));
    return { key, findings };
  }
  if (!BASE64.test(data)) return invalid('p= is not base64');
  const bits = keyBits(k, Buffer.from(data, 'base64'));
  if (typeof bits === 'string') return invalid(bits, k === 'ed25519' ? 'RFC 8463 §4.2' : RFC6376);
  key.key_bits = bits;
  if (k === 'ed25519' || bits >= 2048) key.state = 'valid';
  else if (bits >= 1024) {
    key.state = 'weak';
    findings.push(finding('warning', `RSA key of ${bits} bits: use at least 2048.`, 'RFC 8301 §3.2'));
  } else {
    key.state = 'too_short';
    key.problem = `RSA key of ${bits} bits`;
    findings.push(
      finding(
        'error',
        `RSA key of ${bits} bits: verifiers must not accept signatures made with keys under 1024 bits.`,
        'RFC 8301 §3.2',
      ),
    );
  }
  if (key.testing)
    findings.push(
      finding('warning', 't=y: the key is in testing mode; verifiers treat failures as unsigned.', RFC6376),
    );
  return { key, findings };
}

/** The key's size in bits, or why it cannot be used. */
function keyBits(type: 'rsa' | 'ed25519', der: Buffer): number | string {
  if (type === 'ed25519') {
    if (der.length !== 32) return `an Ed25519 p= must be the raw 32-byte key, not ${der.length} bytes`;
    try {
      createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, der]), format: 'der', type: 'spki' });
      return 256;
    } catch {
      return 'p= is not a valid Ed25519 key';
    }
  }
  // RFC 6376 says RSAPublicKey (PKCS#1); nearly everyone publishes SubjectPublicKeyInfo. Verifiers take both.
  let key: KeyObject | undefined;
  for (const format of ['spki', 'pkcs1'] as const) {
    try {
      key = createPublicKey({ key: der, format: 'der', type: format });
      break;
    } catch {
      // try the next encoding
    }
  }
  if (!key) return 'p= does not parse as an RSA public key';
  if (key.asymmetricKeyType !== 'rsa') return `p= holds a ${key.asymmetricKeyType ?? 'non-RSA'} key, not RSA`;
  return key.asymmetricKeyDetails?.modulusLength ?? 'p= does not parse as an RSA public key';
}

export async function evaluateDkim(
  domain: string,
  selectors: readonly string[],
  dns: MailDns,
): Promise<DkimEvaluation> {
  const findings: Finding[] = [];
  const results = await mapConcurrent(
    selectors,
    DKIM_QUERY_CONCURRENCY,
    async (selector): Promise<DkimSelectorResult> => {
      const name = `${selector}._domainkey.${domain}`;
      const answer = await dns.txt(name);
      if (answer.kind === 'error')
        return { selector, name, result: 'error', aliases: [], keys: [], error: answer.message };
      if (answer.kind === 'invalid_name') return { selector, name, result: 'none', aliases: [], keys: [] };
      const keys: DkimKey[] = [];
      for (const record of answer.records.filter(isDkimRecord)) {
        const parsed = parseDkimKey(record);
        keys.push(parsed.key);
        findings.push(...parsed.findings.map((f) => ({ ...f, message: `${selector}: ${f.message}` })));
      }
      return { selector, name, result: keys.length > 0 ? 'key' : 'none', aliases: answer.aliases, keys };
    },
  );
  const reported = results.filter((r) => r.result !== 'none');
  const keys = results.flatMap((r) => r.keys);
  const usable = keys.filter((k) => k.state === 'valid' || k.state === 'weak');
  const sized = keys.filter((k) => k.state === 'valid' || k.state === 'weak' || k.state === 'too_short');
  const weakest: KeyStrength | null = sized.some((k) => k.state === 'too_short')
    ? 'too_short'
    : sized.some((k) => k.state === 'weak')
      ? 'weak'
      : sized.length > 0
        ? 'strong'
        : null;
  const failed = results.filter((r) => r.result === 'error');
  const base = { tested: [...selectors], selectors: reported, findings };

  if (keys.length === 0) {
    if (failed.length > 0) {
      return {
        ...base,
        state: 'error',
        validKey: false,
        weakest: null,
        record: null,
        status: 'error',
        summary: `No DKIM key found, and ${failed.length} of ${selectors.length} selector lookups failed; this check is left out of the score.`,
      };
    }
    findings.push(
      finding(
        'error',
        `No DKIM key at any of the ${selectors.length} selectors tested (see tested_dkim_selectors).`,
        RFC6376,
      ),
    );
    return {
      ...base,
      state: 'none',
      validKey: false,
      weakest: null,
      record: null,
      status: 'fail',
      summary: `No DKIM key found at the ${selectors.length} selectors tested; if you sign with another selector, name it as a selector to test (the site's DKIM selector box, the API's selector parameter, the CLI's --selector).`,
    };
  }
  if (failed.length > 0) {
    findings.push(
      finding(
        'info',
        `${failed.length} selector lookup(s) failed: ${failed.map((r) => r.selector).join(', ')}.`,
        RFC6376,
      ),
    );
  }
  const first = usable[0];
  const withKey = results.filter((r) => r.keys.some((k) => k.state === 'valid' || k.state === 'weak'));
  let status: CheckStatus = 'pass';
  if (usable.length === 0 || weakest === 'too_short') status = 'fail';
  else if (findings.some((f) => f.severity !== 'info')) status = 'warn';
  const describe = (k: DkimKey) => (k.key_type === 'ed25519' ? 'Ed25519' : `RSA ${k.key_bits} bits`);
  return {
    ...base,
    state: 'found',
    validKey: usable.length > 0,
    weakest,
    record: first?.record ?? null,
    status,
    summary:
      usable.length > 0
        ? `DKIM key${withKey.length > 1 ? 's' : ''} found at ${withKey
            .map(
              (r) =>
                `${r.selector} (${r.keys
                  .filter((k) => k.state === 'valid' || k.state === 'weak')
                  .map(describe)
                  .join(', ')})`,
            )
            .join(', ')}.`
        : 'DKIM records were found, but none holds a usable key.',
  };
}
