/**
 * The `ip` query parameter: parse strictly, normalize, and refuse
 * special-use space with a 400 that names the block. "Public" is decided by
 * the outbound-safety classifier (net/address.ts), the one table of
 * special-purpose ranges in the service.
 */
import { AppError, badInput } from '../../errors.js';
import { classifyAddress } from '../../net/address.js';
import { formatIpNumber, type ParsedIp, parseIpNumber } from '../../providers/ip/ip-number.js';

export interface IpParam {
  ip: ParsedIp;
  /** Canonical text: dotted quad, or RFC 5952 IPv6. */
  text: string;
}

export function parseIpParam(input: string, param = 'ip'): IpParam {
  const literal = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  if (literal.includes('%')) throw badInput(param, 'must not carry a zone id (%...)');
  const ip = parseIpNumber(literal);
  if (!ip) throw badInput(param, 'must be an IPv4 or IPv6 address');
  return { ip, text: formatIpNumber(ip) };
}

/** Throws 400 naming the special-use block when the address is not public; `why` completes the sentence. */
export function requirePublic({ text }: IpParam, why: string, param = 'ip'): void {
  const cls = classifyAddress(text);
  if (cls.public) return;
  // e.g. "10.0.0.0/8 private-use, RFC 1918"
  const named = cls.block ? `${cls.block} ${cls.range}` : cls.range;
  const block = cls.rfc ? `${named}, ${cls.rfc}` : named;
  throw new AppError(400, 'bad_request', `${param} ${text} is a special-use address (${block}): ${why}`);
}

export function isPublic(text: string): boolean {
  return classifyAddress(text).public;
}
