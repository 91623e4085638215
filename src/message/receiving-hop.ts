/**
 * Which Received header the receiving side wrote for the connection from
 * outside: the one whose client address, HELO and MAIL FROM SPF is checked
 * against, and the line above which Authentication-Results can be trusted
 * (RFC 8601 §5). Everything below that header could have been written by the
 * sender, so the choice walks down from the top and stops at the first hop
 * it cannot explain as the receiving system's own relay
 * (docs/message.md, "The receiving hop").
 */
import type { ReceivedHop } from '../features/message/message.schema.js';
import { classifyAddress, formatIpBytes, isAllowedByCidrs, parseIpBytes } from '../net/address.js';
import { organizationalDomain } from '../net/organizational-domain.js';

export interface ReceivingHopOptions {
  /** Addresses or CIDRs of the receiving system: hops from them are its own relays. */
  internal?: readonly string[];
  /** The connecting address the caller was told: the topmost hop naming it is the one. */
  ip?: string;
}

export type ReceivingHop =
  | { index: number; ip: string; helo: string | null; mail_from: string | null; why: string }
  | { index: null; ip: null; helo: null; mail_from: null; why: string };

/**
 * The receiving hop among `hops` (top first, as receivedHops gives them).
 * A hop is the receiving system's own relay, and skipped, when its client
 * address is not public (private, loopback, ...: src/net/address.ts), is one
 * of `opts.internal`, or when the client's name and both ends of the hop lie
 * in the receiving organization (see sameOrganizationRelay).
 */
export function receivingHop(hops: readonly ReceivedHop[], opts: ReceivingHopOptions = {}): ReceivingHop {
  let prefix = '';
  if (opts.ip !== undefined) {
    const given = canonical(opts.ip);
    const hop = given === null ? undefined : hops.find((h) => h.from_address === given);
    if (hop) return found(hop, `Received header ${hop.index} names the given address ${given}.`);
    prefix = `No Received header names the given address ${opts.ip}. `;
  }
  const orgs = new Set<string>();
  const skipped: string[] = [];
  let firstRelay: ReceivedHop | undefined;
  for (let i = 0; i < hops.length; i++) {
    const hop = hops[i]!;
    const byInside = i === 0 || belongs(hop.by, orgs) || sameHost(hop.by, clientName(hops[i - 1]!));
    const byOrg = hop.by === null ? null : organizationalDomain(hop.by);
    if (byInside && byOrg !== null) orgs.add(byOrg);
    if (hop.from_address === null) continue; // local pickup or a server's own hand-over: no client
    const cls = safeClass(hop.from_address);
    if (!cls.public) {
      skipped.push(`${i} (${hop.from_address}, ${cls.range})`);
      continue;
    }
    if (opts.internal?.length && isAllowedByCidrs(hop.from_address, opts.internal)) {
      skipped.push(`${i} (${hop.from_address}, one of the receiving system's own addresses)`);
      continue;
    }
    if (byInside && sameOrganizationRelay(hops, i, orgs)) {
      skipped.push(
        `${i} (from ${clientName(hop)} [${hop.from_address}], a relay inside ${[...orgs].join(', ')})`,
      );
      firstRelay ??= hop;
      continue;
    }
    const above =
      skipped.length > 0 ? ` Above it: ${skipped.join('; ')}: the receiving system's own relays.` : '';
    return found(
      hop,
      `${prefix}Received header ${i} (from ${hop.from ?? '?'} [${hop.from_address}] by ${hop.by ?? '?'}) is the ` +
        `topmost one naming a public client address the receiving system does not own.${above}`,
    );
  }
  if (firstRelay) {
    return found(
      firstRelay,
      `${prefix}Every Received header naming a public client address looked like a relay inside ` +
        `${[...orgs].join(', ')}; the topmost, ${firstRelay.index}, is taken as the receiving side's.`,
    );
  }
  return {
    index: null,
    ip: null,
    helo: null,
    mail_from: null,
    why: `${prefix}No Received header names a public client address.`,
  };
}

function found(hop: ReceivedHop, why: string): ReceivingHop {
  return { index: hop.index, ip: hop.from_address!, helo: hop.from, mail_from: hop.envelope_from, why };
}

/**
 * A hop inside the receiving organization: the client's name is in one of
 * its organizational domains (PSL), and the hop below it was written there
 * too (by a server of those domains, or by the very host the client is). The
 * client's name is the reverse name the receiver wrote; HELO, which the
 * sender chooses, is used only where the MTA never writes a reverse name
 * (Exchange and Outlook.com). Microsoft's outbound pool
 * (*.outbound.protection.outlook.com) is the sending tenant's egress even
 * when the receiver is Microsoft too, so it is never a relay.
 */
function sameOrganizationRelay(hops: readonly ReceivedHop[], i: number, orgs: ReadonlySet<string>): boolean {
  const hop = hops[i]!;
  const below = hops[i + 1];
  const client = clientName(hop);
  if (client === null || below === undefined) return false;
  if (/(^|\.)outbound\.protection\.outlook\.com$/i.test(client)) return false;
  return belongs(client, orgs) && (belongs(below.by, orgs) || sameHost(below.by, client));
}

function clientName(hop: ReceivedHop): string | null {
  if (hop.from_reverse !== null) return hop.from_reverse;
  const microsoft = /^(Microsoft SMTP Server|HTTPS|mapi)\b/i.test(hop.with ?? '');
  return microsoft && hop.from !== null && !hop.from.startsWith('[') ? hop.from : null;
}

function belongs(name: string | null, orgs: ReadonlySet<string>): boolean {
  if (name === null) return false;
  const org = organizationalDomain(name);
  return org !== null && orgs.has(org);
}

/**
 * The same machine under two names: Exchange names a server
 * BN9PR03CA0123.namprd03.prod.outlook.com as a client and
 * BN9PR03CA0123.outlook.office365.com as a server. Only a first label long
 * enough to name one host (not "mail" or "mx1") counts.
 */
function sameHost(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return false;
  const x = a.toLowerCase().split('.')[0]!;
  return x.length >= 8 && /\d/.test(x) && x === b.toLowerCase().split('.')[0];
}

function canonical(ip: string): string | null {
  const bytes = parseIpBytes(ip.trim().replace(/^\[|\]$/g, ''));
  return bytes ? formatIpBytes(bytes) : null;
}

function safeClass(ip: string): { public: boolean; range: string } {
  try {
    return classifyAddress(ip);
  } catch {
    return { public: false, range: 'not an address' };
  }
}
