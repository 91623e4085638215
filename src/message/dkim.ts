/**
 * One report entry per DKIM-Signature, from mailauth's strict verification (mailauth.ts), with
 * its results in RFC 8601 words and a reason a person can read.
 *
 * What netdiag adds: mailauth compares the body hash first and stops there on a mismatch
 * (RFC 6376 §6.1.3 allows either order), so it neither fetches the key nor checks the signature
 * over the header fields. For a pasted header block that is every signature. checkHeaders() does
 * that second half: it has mailauth fetch and vet the key through a probe message (a one-field
 * message signed "from" with the same d=, s=, a= and i=, whose bh= is right for its empty body,
 * so mailauth gets past the body hash and reports the key exactly as it would: revoked, missing,
 * too short, DNS failure...), then verifies b= over the canonicalized header data mailauth
 * already computed for the real signature (`signingHeaders.canonicalizedHeader`), and applies
 * mailauth's own x= rule. Headers only: that is the result, the body hash `not_checked`. With a
 * body: the result stays `fail`, and the reason says whether the headers still verify.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import type { DkimSignature } from '../features/message/message.schema.js';
import { compact, type HeaderField, parseTags } from './header-fields.js';
import { type MailauthResolver, MIN_KEY_BITS, type VerifiedSignature, verifyDkim } from './mailauth.js';

type AuthResult = DkimSignature['result'];

export interface DkimContext {
  resolver: MailauthResolver;
  now: Date;
  headersOnly: boolean;
  /** What the resolver answered, by lower-case name: the key record as published. */
  answers: Map<string, string[][]>;
}

/** Base64 SHA-256 of an empty body under relaxed canonicalization: the probe's bh=. */
const EMPTY_RELAXED_BH = createHash('sha256').update('').digest('base64');
const BODY_HASH_MISMATCH = 'body hash did not verify';

export interface HeaderCheck {
  result: AuthResult;
  comment: string | undefined;
  /** The probe's result, which carries the key (publicKey, rr, modulusLength) when one was had. */
  key: VerifiedSignature | undefined;
}

/**
 * The signature over the header fields alone, for a signature mailauth stopped at the body hash.
 * `kind` ARC: an ARC-Message-Signature (no i=, never rsa-sha1).
 */
export async function checkHeaders(
  sig: VerifiedSignature,
  tags: Map<string, string>,
  kind: 'DKIM' | 'ARC',
  ctx: DkimContext,
): Promise<HeaderCheck> {
  const d = compact(tags.get('d')) ?? '';
  const s = compact(tags.get('s')) ?? '';
  const a = (compact(tags.get('a')) ?? '').toLowerCase();
  const i = kind === 'DKIM' ? tags.get('i') : undefined;
  // mailauth only compares body hashes of signatures whose tags passed its strict syntax checks;
  // this guard keeps anything else out of the probe's header text all the same.
  const safe = (v: string) => /^[A-Za-z0-9._-]+$/.test(v);
  if (!safe(d) || !safe(s) || !safe(a) || (i !== undefined && /[;\r\n]/.test(i))) {
    return { result: 'permerror', comment: 'signature syntax error', key: undefined };
  }
  const probe =
    `From: probe@${d}\r\nDKIM-Signature: v=1; a=${a}; c=relaxed/relaxed; d=${d}; s=${s};` +
    `${i !== undefined ? ` i=${i};` : ''} h=from; bh=${EMPTY_RELAXED_BH}; b=AAAA\r\n\r\n`;
  const probed = (await verifyDkim(Buffer.from(probe, 'latin1'), ctx.resolver, ctx.now)).results[0];
  if (!probed) return { result: 'permerror', comment: 'signature could not be processed', key: undefined };
  // A probe can only fail its own (dummy) signature once the key was found and accepted.
  if (!(probed.status.result === 'fail' && probed.status.comment === 'bad signature') || !probed.publicKey) {
    return { result: asAuthResult(probed.status.result), comment: commentOf(probed), key: probed };
  }
  const canon = Buffer.from(sig.signingHeaders?.canonicalizedHeader ?? '', 'base64');
  const b = Buffer.from(compact(tags.get('b')) ?? '', 'base64');
  let ok = false;
  try {
    ok = a.startsWith('ed25519')
      ? verify(null, createHash('sha256').update(canon).digest(), probed.publicKey, b)
      : verify(a.endsWith('sha1') ? 'sha1' : 'sha256', canon, probed.publicKey, b);
  } catch {
    ok = false;
  }
  if (!ok) return { result: 'fail', comment: 'bad signature', key: probed };
  const x = Number(compact(tags.get('x')));
  if (tags.has('x') && Number.isFinite(x) && x * 1000 < ctx.now.getTime()) {
    return { result: 'neutral', comment: 'expired', key: probed };
  }
  return { result: 'pass', comment: undefined, key: probed };
}

/** The report entry of the DKIM-Signature `field` at `index`, from mailauth's `sig`. */
export async function reportSignature(
  index: number,
  field: HeaderField,
  sig: VerifiedSignature | undefined,
  ctx: DkimContext,
  notes: string[],
): Promise<DkimSignature> {
  const tags = parseTags(field.value);
  const domain = compact(tags.get('d')) || null;
  const selector = compact(tags.get('s')) || null;
  const [hc, bc] = (compact(tags.get('c')) ?? '').toLowerCase().split('/');
  let result: AuthResult = sig ? asAuthResult(sig.status.result) : 'permerror';
  let comment = sig ? commentOf(sig) : 'signature could not be processed';
  let keySource: VerifiedSignature | undefined = sig;
  let bodyHash: DkimSignature['body_hash'] =
    sig?.bodyHash !== undefined && sig.bodyHashExpecting !== undefined
      ? sig.bodyHash === compact(sig.bodyHashExpecting)
        ? 'match'
        : 'mismatch'
      : 'not_checked';

  if (sig && sig.status.comment === BODY_HASH_MISMATCH) {
    const check = await checkHeaders(sig, tags, 'DKIM', ctx);
    keySource = check.key;
    if (ctx.headersOnly) {
      result = check.result;
      comment = check.comment;
    } else {
      comment =
        check.result === 'pass'
          ? `${BODY_HASH_MISMATCH}; the signed header fields do verify: the body was changed after signing`
          : check.result === 'fail'
            ? `${BODY_HASH_MISMATCH}, and the signature over the header fields does not verify either`
            : `${BODY_HASH_MISMATCH}; the header fields could not be checked: ${words(check.comment, check.key, keyName(domain, selector))}`;
    }
  }
  if (ctx.headersOnly) bodyHash = 'not_checked';

  const lLimit = compact(tags.get('l'));
  if (sig?.status.underSized && result === 'pass') {
    notes.push(
      `DKIM signature ${index} (d=${domain}): l=${lLimit} leaves ${sig.status.underSized} body octets unsigned.`,
    );
  }
  const name = keyName(domain, selector);
  return {
    index,
    domain,
    selector,
    algorithm: compact(tags.get('a'))?.toLowerCase() || null,
    canonicalization: { header: hc || 'simple', body: bc || 'simple' },
    identity: identityOf(sig, tags, domain),
    signed_headers: (tags.get('h') ?? '')
      .split(':')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    body_length: lLimit !== undefined && /^\d{1,15}$/.test(lLimit) ? Number(lLimit) : null,
    signed_at: timeTag(tags.get('t')),
    expires_at: timeTag(tags.get('x')),
    result,
    reason: result === 'pass' ? null : words(comment, keySource, name, sig?.status.policy),
    body_hash: bodyHash,
    key: keyOf(name, keySource, ctx),
    aligned: null,
  };
}

export function keyName(domain: string | null, selector: string | null): string | null {
  return domain && selector ? `${selector}._domainkey.${domain}` : null;
}

export function asAuthResult(result: string): AuthResult {
  if (result === 'temperr') return 'temperror';
  const known: readonly string[] = ['pass', 'fail', 'neutral', 'policy', 'temperror', 'permerror', 'none'];
  return (known.includes(result) ? result : 'permerror') as AuthResult;
}

function commentOf(sig: VerifiedSignature): string | undefined {
  if (sig.status.comment) return sig.status.comment;
  if (sig.status.policy?.['dkim-rules'] === 'weak-key') return 'weak key';
  return undefined;
}

function identityOf(sig: VerifiedSignature | undefined, tags: Map<string, string>, domain: string | null) {
  // mailauth's strict header.i is the AUID with dkim-quoted-printable decoded (RFC 6376 §3.5).
  const auid = sig?.status.header?.i;
  if (typeof auid === 'string' && auid) return auid;
  const i = compact(tags.get('i'));
  return i || (domain ? `@${domain}` : null);
}

function timeTag(value: string | undefined): string | null {
  const v = compact(value);
  if (!v || !/^\d{1,12}$/.test(v)) return null;
  const d = new Date(Number(v) * 1000);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The key record as published (the first TXT record, strings joined, as mailauth reads it). */
function keyOf(
  name: string | null,
  source: VerifiedSignature | undefined,
  ctx: DkimContext,
): DkimSignature['key'] {
  if (!name) return null;
  const answer = ctx.answers.get(name.toLowerCase());
  const record = answer?.[0]?.join('');
  if (record === undefined || !source || (!source.rr && !source.publicKey)) return null;
  const k = compact(parseTags(record).get('k'))?.toLowerCase();
  let type: string | null = k || null;
  let bits: number | null = null;
  try {
    const pub = source.publicKey ? createPublicKey(source.publicKey) : publicKeyOfRecord(record);
    if (pub) {
      type = pub.asymmetricKeyType ?? type;
      bits = pub.asymmetricKeyType === 'ed25519' ? 256 : (pub.asymmetricKeyDetails?.modulusLength ?? null);
    }
  } catch {
    // a record mailauth refused (revoked, bad base64): the record is still worth showing
  }
  return { name, type: type ?? (bits ? 'rsa' : null), bits, record };
}

/** The key of a record mailauth refused for its length: to say how many bits it had. */
function publicKeyOfRecord(record: string) {
  const p = compact(parseTags(record).get('p'));
  if (!p) return null;
  const der = Buffer.from(p, 'base64');
  try {
    return createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    return createPublicKey({ key: der, format: 'der', type: 'pkcs1' });
  }
}

/** mailauth's comments (dkim-verifier.js, tools.js KEY_ERROR_COMMENTS) in words. */
function words(
  comment: string | undefined,
  key: VerifiedSignature | undefined,
  name: string | null,
  policy?: Record<string, string | undefined>,
): string {
  const record = name ? `the key record ${name}` : 'the key record';
  if (!comment && policy?.['dkim-rules'] === 'weak-key') comment = 'weak key';
  switch (comment) {
    case undefined:
      return 'no reason given';
    case BODY_HASH_MISMATCH:
      return 'body hash mismatch: the body is not the one that was signed (bh=)';
    case 'bad signature':
      return 'the signature over the signed header fields does not verify: a signed header was changed (or the key does not match)';
    case 'no key':
      return `no key: ${record} does not exist (RFC 6376 §6.1.2, no key for signature)`;
    case 'invalid public key': {
      const p = key?.rr !== undefined ? parseTags(key.rr).get('p') : undefined;
      return p === ''
        ? `key revoked: ${record} has an empty p= (RFC 6376 §3.6.1)`
        : `${record} does not hold a usable public key (p=)`;
    }
    case 'unknown key version':
      return `${record} has a v= other than DKIM1 (or not as its first tag)`;
    case 'unknown key type':
      return `${record} has a key type (k=) that is unknown or does not match its key`;
    case 'inappropriate hash algorithm':
      return `${record}'s h= does not allow the signature's hash algorithm (RFC 6376 §3.6.1)`;
    case 'inappropriate key algorithm':
      return `${record}'s key type does not match the signature's a= (RFC 6376 §6.1.2)`;
    case 'key not for email':
      return `${record}'s s= does not list email`;
    case 'weak key':
      return `the RSA key at ${name ?? 'its record'} is shorter than ${MIN_KEY_BITS} bits (RFC 8301 §3.2)`;
    case 'weak algorithm':
      return 'rsa-sha1, which verifiers must not accept (RFC 8301 §3.1)';
    case 'expired':
      return 'the signature has expired (x= is in the past; RFC 6376 §3.5, §6.1.1)';
    case 'invalid expiration':
      return 'x= is not later than t= (RFC 6376 §3.5)';
    case 'domain mismatch':
      return 'i= is not within d= (RFC 6376 §6.1.1), or the key has t=s and i= is a subdomain';
    case 'From field not signed':
      return 'h= does not include From (RFC 6376 §6.1.1)';
    case 'signature missing required tag':
      return 'a required tag (v, a, b, bh, d, h, s) is missing (RFC 6376 §6.1.1)';
    case 'incompatible version':
      return 'v= is not 1 (RFC 6376 §6.1.1, incompatible version)';
    case 'signature syntax error':
      return 'the signature is not valid tag-list syntax (RFC 6376 §3.2)';
    case 'unknown algorithm':
      return 'a= is an algorithm verifiers do not know (rsa-sha256, ed25519-sha256, rsa-sha1 are)';
    case 'unknown canonicalization':
      return 'c= names an unknown canonicalization';
    case 'unsupported query method':
      return 'q= does not list dns/txt';
    default:
      if (comment.startsWith('DNS failure')) return `${comment} fetching ${record}: a retry may succeed`;
      return comment;
  }
}
