/**
 * What GET /api/inspect accepts, as pure functions: `target` is a host name
 * or an IP literal (never a URL), `ip` a public IP address that is looked up
 * but never connected to.
 */
import { AppError, badInput } from '../../errors.js';
import { classifyAddress, isIP, parseHostLiteral } from '../../net/address.js';
import { normalizeDomain } from '../../net/names.js';

export interface InspectTarget {
  /** Lower-case A-label name, or the canonical text of an IP literal. */
  host: string;
  literal: boolean;
}

/**
 * Normalizes `target`. An IP literal may use any spelling a resolver library
 * accepts (`0x7f.1`, `[::1]`), which parseHostLiteral turns into canonical
 * text, so the outbound-safety check sees the address it really is. Whether
 * the address is public is decided later, by resolveTarget, for names and
 * literals alike.
 */
export function parseInspectTarget(input: string): InspectTarget {
  const trimmed = input.trim();
  if (trimmed === '') throw badInput('target', 'must not be empty');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) || /[/?#@]/.test(trimmed)) {
    throw badInput('target', 'must be a host name or IP address, not a URL (e.g. example.com)');
  }
  if (/^[^:[\]]+:\d*$/.test(trimmed) || /^\[.*\]:\d*$/.test(trimmed)) {
    throw badInput('target', 'must not carry a port (ports 80 and 443 are inspected)');
  }
  const literal = parseHostLiteral(trimmed);
  if (literal !== undefined) return { host: literal, literal: true };
  return { host: normalizeDomain(trimmed, { param: 'target' }), literal: false };
}

/**
 * The `ip` parameter: an IPv4 or IPv6 address (brackets allowed), in
 * canonical text. A non-public address is a 400: routing data about private
 * or special-use space means nothing, and the parameter is never an escape
 * hatch (UNSAFE_ALLOW_TARGET_CIDRS does not apply to it).
 */
export function parseRoutingIp(input: string): string {
  const trimmed = input.trim();
  const bare = trimmed.startsWith('[') && trimmed.endsWith(']') ? trimmed.slice(1, -1) : trimmed;
  if (bare.includes('%')) throw badInput('ip', 'must not carry a zone id (%...)');
  if (isIP(bare) === 0) throw badInput('ip', 'must be an IPv4 or IPv6 address');
  const canonical = parseHostLiteral(bare, 'ip') ?? bare;
  const cls = classifyAddress(canonical);
  if (!cls.public) {
    const block = cls.rfc ? `${cls.range}, ${cls.rfc}` : cls.range;
    throw new AppError(400, 'bad_request', `ip ${canonical} is not a public address (${block})`);
  }
  return canonical;
}
