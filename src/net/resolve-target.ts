/**
 * Turns a user-named host into the addresses the service may connect to
 * (docs/architecture.md §3): resolved once, through the project's own DNS client,
 * every address checked, and the checked set returned so the caller connects
 * to exactly those (no second resolution, so no DNS rebinding).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { addressFamily, classifyAddress, isAllowedByCidrs, parseHostLiteral } from './address.js';
import { UnsafeTargetError } from './errors.js';

/**
 * What this module reads of a DNS answer: its rcode and the answer section's records by
 * owner, type and data (an A or AAAA record's `address`, a CNAME's `target`). The DNS
 * client's DnsAnswer is one; declared here, so the safety layer needs nothing of the
 * client's, and a record's data is checked as it is read, not trusted.
 */
export interface AddressAnswer {
  rcode: string;
  answers: readonly { name: string; type: string; data: unknown }[];
}

/**
 * The part of the DNS client this module needs; `DnsResolver` satisfies it,
 * and a test can hand in a fake. Failures reject (the resolver's 502 AppError).
 */
export interface AddressResolver {
  resolve(
    name: string,
    type: 'A' | 'AAAA',
    opts?: { signal?: AbortSignal },
  ): Promise<{ value: AddressAnswer }>;
}

export interface ResolveTargetDeps {
  resolver: AddressResolver;
  /** UNSAFE_ALLOW_TARGET_CIDRS: non-public addresses inside these are accepted (labs and tests only). */
  allowCidrs: readonly string[];
  signal?: AbortSignal;
  /** The parameter named in 400 messages. Default 'target'. */
  param?: string;
}

export interface TargetAddress {
  address: string;
  family: 4 | 6;
}

export interface ResolvedTarget {
  /** The name (lower case, A-label, no trailing dot) or the canonical address of a literal. */
  host: string;
  /** True when `host` is an IP literal: no DNS was asked, and TLS sends no SNI. */
  literal: boolean;
  /** Every address, checked; IPv4 first. Connect to these and nothing else. */
  addresses: TargetAddress[];
}

/** Ports a user-named destination may use, unless a later issue says otherwise. */
export const ALLOWED_PORTS: readonly number[] = [80, 443];

/**
 * Throws a 400 UnsafeTargetError for a port outside `allowed` (ALLOWED_PORTS
 * unless a feature has its own: GET /api/mail-tls connects to 25 and only 25).
 */
export function assertAllowedPort(port: number, param = 'target', allowed = ALLOWED_PORTS): void {
  if (!allowed.includes(port)) {
    throw new UnsafeTargetError(
      'port',
      `${param} port ${port} is not allowed (only ${allowed.join(' and ')})`,
    );
  }
}

/** Bounds a CNAME chain inside one answer, as resolvers bound theirs. */
const MAX_CNAME_HOPS = 16;

/**
 * Resolves `host` (a name or an IP literal in any spelling a resolver library
 * accepts, brackets allowed) and checks every address. An IP literal is
 * classified directly, without DNS. A name is resolved A and AAAA
 * concurrently; the CNAME chain inside each answer is followed.
 *
 * Rejects with a 400 UnsafeTargetError when the host is invalid, does not
 * exist or has no A/AAAA records, or when ANY address is not public and not
 * inside `allowCidrs`; with the resolver's 502 AppError when DNS failed (if
 * one of the two queries failed but the other found addresses, those are used:
 * only checked addresses are ever returned, so this stays safe).
 */
export async function resolveTarget(host: string, deps: ResolveTargetDeps): Promise<ResolvedTarget> {
  const param = deps.param ?? 'target';
  const literal = parseHostLiteral(host, param);
  if (literal !== undefined) {
    assertPublic(literal, deps.allowCidrs, (why) => `${param} ${literal} is not a public address (${why})`);
    return {
      host: literal,
      literal: true,
      addresses: [{ address: literal, family: addressFamily(literal) }],
    };
  }

  const name = normalizeTargetName(host, param);
  const opts = deps.signal ? { signal: deps.signal } : undefined;
  const [a, aaaa] = await Promise.allSettled([
    deps.resolver.resolve(name, 'A', opts),
    deps.resolver.resolve(name, 'AAAA', opts),
  ]);
  deps.signal?.throwIfAborted();

  const found: string[] = [];
  let nxdomain = false;
  let failure: unknown;
  for (const [settled, type] of [
    [a, 'A'],
    [aaaa, 'AAAA'],
  ] as const) {
    if (settled.status === 'rejected') {
      failure ??= settled.reason;
      continue;
    }
    if (settled.value.value.rcode === 'NXDOMAIN') nxdomain = true;
    found.push(...addressesOf(settled.value.value, name, type));
  }
  if (found.length === 0) {
    if (failure !== undefined) throw failure;
    throw new UnsafeTargetError(
      'no_address',
      nxdomain ? `${param} ${name} does not exist (NXDOMAIN)` : `${param} ${name} has no A or AAAA records`,
    );
  }

  const addresses: TargetAddress[] = [];
  for (const raw of found) {
    const address = canonicalAddress(raw, name, param);
    if (addresses.some((t) => t.address === address)) continue;
    assertPublic(
      address,
      deps.allowCidrs,
      (why) => `${param} ${name} resolves to ${address}, which is not a public address (${why})`,
    );
    addresses.push({ address, family: addressFamily(address) });
  }
  return { host: name, literal: false, addresses };
}

function assertPublic(
  address: string,
  allowCidrs: readonly string[],
  message: (why: string) => string,
): void {
  const cls = classifyAddress(address);
  if (cls.public || isAllowedByCidrs(address, allowCidrs)) return;
  throw new UnsafeTargetError('not_public', message(cls.range), { address, range: cls.range });
}

/** A-label, lower case, no trailing dot; the DNS client checks label rules itself. */
function normalizeTargetName(host: string, param: string): string {
  let name = host.trim().replace(/\.$/, '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/[^\x00-\x7f]/.test(name)) name = domainToASCII(name);
  name = name.toLowerCase();
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(name)) {
    throw new UnsafeTargetError('invalid_host', `${param} ${host} is not a valid host name`);
  }
  return name;
}

/** The addresses of `qname` in one answer, following the CNAME chain the resolver put there. */
function addressesOf(answer: AddressAnswer, qname: string, type: 'A' | 'AAAA'): string[] {
  let owner = qname;
  const seen = new Set<string>();
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
    const out: string[] = [];
    for (const rr of answer.answers) {
      const address = rr.name === owner && rr.type === type ? textField(rr.data, 'address') : undefined;
      if (address !== undefined) out.push(address);
    }
    if (out.length > 0) return out;
    const cname = answer.answers.find((rr) => rr.type === 'CNAME' && rr.name === owner);
    const target = cname && textField(cname.data, 'target');
    if (target === undefined || seen.has(owner)) return [];
    seen.add(owner);
    owner = target;
  }
  return [];
}

/** A record data's text field, or undefined when the data has none. */
function textField(data: unknown, key: 'address' | 'target'): string | undefined {
  const value =
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** An address from a DNS answer in canonical text; anything that is not an address is refused, not trusted. */
function canonicalAddress(raw: string, name: string, param: string): string {
  if (isIPv4(raw)) return raw;
  if (isIPv6(raw)) return parseHostLiteral(raw) ?? raw;
  throw new UnsafeTargetError('not_public', `${param} ${name} resolves to ${raw}, which is not an address`);
}
