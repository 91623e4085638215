/**
 * DKIM and ARC of one message (docs/message.md "DKIM and ARC"), verified by mailauth
 * (mailauth.ts) with netdiag's resolver, and reported in the answer's terms
 * (features/message/message.schema.ts). Alignment is left null: DMARC decides it.
 */
import type { Arc, DkimSignature } from '../features/message/message.schema.js';
import { ARC_MAX_INSTANCES, arcSets, reportArc } from './arc.js';
import { type DkimContext, reportSignature } from './dkim.js';
import { type HeaderField, joinMessage, splitMessage } from './header-fields.js';
import { type MailauthResolver, verifyDkim } from './mailauth.js';

/**
 * netdiag's DNS client, as mailauth calls it: the TXT records at `name`, each as its strings.
 * No such record: throw an Error whose `code` is 'ENOTFOUND' (no such name) or 'ENODATA' (no
 * TXT there); mailauth reports that as "no key" (`neutral`). Any other throw is a DNS failure
 * (`temperror`, and for an ARC seal a failing chain).
 */
export type KeyResolver = (name: string, type: 'TXT') => Promise<string[][]>;

export interface AuthenticateOptions {
  resolver: KeyResolver;
  /** The verification time: x= is compared with it (mailauth's `curTime`). */
  now: Date;
  /** Only headers were given: body hashes are `not_checked` and never fail a signature. */
  headersOnly: boolean;
  /** DKIM-Signatures verified, top first (default 10); the rest are left out and noted. */
  maxSignatures?: number;
  /** ARC sets validated (default and most 50, RFC 8617's limit); a longer chain fails, noted. */
  maxArcInstances?: number;
}

export interface AuthenticationReport {
  dkim: DkimSignature[];
  arc: Arc;
  /** RFC5322.From's first address and its domain, as mailauth read it. */
  headerFrom: { address: string | null; domain: string | null };
  /** What was left out (limits) and what passing signatures leave unsigned. */
  notes: string[];
}

export const DEFAULT_MAX_SIGNATURES = 10;

export async function authenticateMessage(
  raw: Buffer,
  opts: AuthenticateOptions,
): Promise<AuthenticationReport> {
  const notes: string[] = [];
  const maxSignatures = Math.max(0, opts.maxSignatures ?? DEFAULT_MAX_SIGNATURES);
  const maxArc = Math.min(ARC_MAX_INSTANCES, Math.max(0, opts.maxArcInstances ?? ARC_MAX_INSTANCES));
  const answers = new Map<string, string[][]>();
  const ctx: DkimContext = {
    resolver: onceEach(opts.resolver, answers),
    now: opts.now,
    headersOnly: opts.headersOnly,
    answers,
  };

  const { fields, rest } = splitMessage(raw);
  const signatures = fields.filter((f) => f.name === 'dkim-signature');
  let kept: HeaderField[] = fields;
  if (signatures.length > maxSignatures) {
    // Judged on the first ones, top first. The others are cut from the copy mailauth reads (a
    // signature that itself signed DKIM-Signature fields could then fail; a message with this
    // many signatures is not one a signer would make).
    const dropped = new Set(signatures.slice(maxSignatures));
    kept = fields.filter((f) => !dropped.has(f));
    notes.push(
      `${signatures.length} DKIM-Signature fields: the first ${maxSignatures} were verified, ${dropped.size} left out.`,
    );
  }
  // A chain too long to validate is not handed to mailauth at all (reportArc says why).
  const tooLong = arcSets(fields).size > maxArc;
  if (tooLong) kept = kept.filter((f) => !f.name.startsWith('arc-'));
  const verified = await verifyDkim(kept === fields ? raw : joinMessage(kept, rest), ctx.resolver, opts.now);

  // Strict mode gives one result per DKIM-Signature, in header order; with none, a lone
  // "message not signed" placeholder, which has no counterpart here.
  const dkim: DkimSignature[] = [];
  const checked = signatures.slice(0, maxSignatures);
  for (const [i, field] of checked.entries()) {
    dkim.push(await reportSignature(i, field, verified.results[i], ctx, notes));
  }

  const arc = await reportArc(fields, tooLong ? { chain: false } : verified.arc, ctx, maxArc, notes);

  if (verified.fromFields > 1)
    notes.push(`${verified.fromFields} From fields: RFC 5322 allows one; the first was used.`);
  const address = verified.headerFrom[0] ?? null;
  const at = address?.lastIndexOf('@') ?? -1;
  return {
    dkim,
    arc,
    headerFrom: { address, domain: address && at >= 0 ? address.slice(at + 1).toLowerCase() || null : null },
    notes,
  };
}

/**
 * One question per name and message (mailauth and the headers-only probe may ask twice), and
 * the answers kept so the report can show a key record as it was published.
 */
function onceEach(resolver: KeyResolver, answers: Map<string, string[][]>): MailauthResolver {
  const asked = new Map<string, Promise<string[][]>>();
  return (name, type) => {
    if (type !== 'TXT')
      return Promise.reject(Object.assign(new Error(`unexpected ${type} query`), { code: 'ENOTIMP' }));
    const key = name.toLowerCase();
    let answer = asked.get(key);
    if (!answer) {
      answer = resolver(name, 'TXT').then((records) => {
        answers.set(key, records);
        return records;
      });
      asked.set(key, answer);
    }
    return answer;
  };
}
