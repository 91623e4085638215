/**
 * Query-name normalization shared by the resolver facade and every transport:
 * one spelling per name, so the cache key, the wire question and the
 * response check all agree.
 */
import { AppError } from '../../errors.js';

/**
 * A name the client refuses to put on the wire. It is an AppError (400) so a
 * route that forgot to validate still answers "bad input", never 500; services
 * resolving names taken from records (SPF includes, MX hosts) can catch it by
 * class and treat the name as unusable.
 */
export class InvalidDnsNameError extends AppError {
  constructor(
    readonly input: string,
    why: string,
  ) {
    super(400, 'bad_request', `name is not a valid DNS name: ${why}`);
  }
}

// RFC 1035 §2.3.4: 63 octets per label, 255 octets on the wire, which is 253
// characters in presentation form without the trailing dot.
const MAX_LABEL = 63;
const MAX_NAME = 253;
// dns-packet writes label text verbatim (no \DDD escapes), so only printable
// ASCII and space without the escape character itself can round-trip; IDNs
// must already be A-labels. Space is there for SPF: macro expansion can put
// one in a name (RFC 7208 §7.1 "%_"), and such a name is asked as it is.
const LABEL_CHARS = /^[\x20-\x5b\x5d-\x7e]+$/;

/**
 * Lower-cases, drops one trailing dot and checks the label and length limits.
 * The root is ".". Throws InvalidDnsNameError.
 */
export function normalizeDnsName(input: string): string {
  if (input === '.') return '.';
  const name = (input.endsWith('.') ? input.slice(0, -1) : input).toLowerCase();
  if (name === '') throw new InvalidDnsNameError(input, 'empty');
  if (name.length > MAX_NAME) throw new InvalidDnsNameError(input, `longer than ${MAX_NAME} characters`);
  for (const label of name.split('.')) {
    if (label === '') throw new InvalidDnsNameError(input, 'empty label');
    if (label.length > MAX_LABEL)
      throw new InvalidDnsNameError(input, `label longer than ${MAX_LABEL} characters`);
    if (!LABEL_CHARS.test(label))
      throw new InvalidDnsNameError(input, 'only printable ASCII is allowed (use A-labels)');
  }
  return name;
}

/** Names as decoded from the wire, in the client's one spelling (lower case, no trailing dot). */
export function canonicalName(name: string): string {
  if (name === '' || name === '.') return '.';
  return (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();
}
