/**
 * The one door to postalsys's mailauth (CommonJS). Its own index.d.ts types most of the API but
 * leaves `any` in parsed headers and status objects; this facade states the few fields netdiag
 * reads, so nothing untyped leaves src/message/. Only the main entry's documented exports are
 * used: dkimVerify, arc, verifyASChain (the functions `authenticate` itself composes).
 *
 * Every call runs in mailauth's strict mode: RFC 6376/8301/8463/8617 as written (a body hash
 * mismatch is `fail`, not the lenient `neutral`; a signature that cannot be processed is still
 * reported; rsa-sha1 is `policy`). Measured against the ARC suite, strict mode is the one that
 * gets every entry right (docs/message.md).
 */
import { arc as mailauthArc, dkimVerify as mailauthDkimVerify, verifyASChain } from 'mailauth';

/** What netdiag's DNS client gives mailauth: TXT strings per record, or an Error with `code`. */
export type MailauthResolver = (name: string, type: string) => Promise<string[][]>;

/** RFC 6376 §3.5 minimum, and RFC 8301 §3.2: shorter RSA keys are `policy`. */
export const MIN_KEY_BITS = 1024;

export interface VerifiedSignature {
  signingDomain?: string;
  selector?: string;
  algo?: string;
  format?: string;
  signature?: string;
  /** The body hash mailauth computed over the body given, and the bh= it was compared with. */
  bodyHash?: string;
  bodyHashExpecting?: string;
  signingHeaders?: { keys: string; headers: string[]; canonicalizedHeader: string };
  status: {
    result: string;
    comment?: string;
    underSized?: number;
    policy?: Record<string, string | undefined>;
    header?: { i?: unknown };
  };
  publicKey?: string;
  modulusLength?: number;
  rr?: string;
}

/** An ARC set as mailauth parsed it; the tags are read by netdiag's own header reader. */
export interface ArcEntry {
  i: number;
  messageSignature?: VerifiedSignature;
}

/** mailauth's ARC data (its ARCData): the parsed chain, or the error that stopped parsing. */
export interface ArcData {
  chain: ArcEntry[] | false;
  lastEntry?: ArcEntry;
  error?: Error & { code?: string };
}

export interface DkimVerifyOutcome {
  results: VerifiedSignature[];
  headerFrom: string[];
  fromFields: number;
  arc: ArcData;
}

export interface ArcOutcome {
  status: { result: string; comment?: string };
}

/** dkimVerify, strict, with the caller's clock (mailauth's `curTime`, used for x=). */
export async function verifyDkim(
  raw: Buffer,
  resolver: MailauthResolver,
  now: Date,
): Promise<DkimVerifyOutcome> {
  const r = await mailauthDkimVerify(raw, {
    resolver,
    curTime: now,
    strict: true,
    minBitLength: MIN_KEY_BITS,
  });
  // `arc` is a non-enumerable property of the result (mailauth's verify.js); without ARC headers
  // it is still there, with `chain: false`.
  const arc = (r.arc ?? { chain: false }) as unknown as ArcData;
  return {
    results: r.results as unknown as VerifiedSignature[],
    headerFrom: r.headerFrom ?? [],
    fromFields: r.fromFields ?? 0,
    arc,
  };
}

/** RFC 8617 §5.2 as mailauth does it: seals, then the newest ARC-Message-Signature's result. */
export async function validateArc(data: ArcData, resolver: MailauthResolver): Promise<ArcOutcome> {
  const r = await mailauthArc(data as never, { resolver, minBitLength: MIN_KEY_BITS, strict: true });
  return { status: { result: r.status.result, ...(r.status.comment ? { comment: r.status.comment } : {}) } };
}

/**
 * Validates the seals of instances 1..count (newest first): resolves, or rejects with mailauth's
 * error (`code`, a message naming the instance, `queryDomain` for a key that failed).
 */
export async function verifySeals(
  chain: ArcEntry[],
  count: number,
  resolver: MailauthResolver,
): Promise<void> {
  await verifyASChain({ chain: chain.slice(0, count) } as never, {
    resolver,
    minBitLength: MIN_KEY_BITS,
    strict: true,
  });
}
