/**
 * The page's state in its URL, so a result can be shared and back/forward
 * replay it: /?q=example.com&tool=dns&type=MX (type for DNSSEC too; &selector=s1 for email;
 * &sender=, &helo= and &domain= for the SPF check of the address in q; &service=smtp for the
 * TLS scan of a mail server). The message tool is ?tool=message alone: what is pasted is not
 * put in the URL, the history or storage.
 */
import type { DnsType, GlobalDnsType, TlsScanService } from './api/types';
import { TOOL_IDS, type ToolId } from './endpoints';

export const DNS_TYPES: readonly DnsType[] = [
  'A',
  'AAAA',
  'CNAME',
  'MX',
  'TXT',
  'NS',
  'SOA',
  'CAA',
  'SRV',
  'PTR',
];
/**
 * What /api/dnssec validates: the DNS tool's types and the DNSSEC and DANE records themselves
 * (the route's DNSSEC_TYPES; test/unit/web/tools.test.ts holds the two lists equal).
 */
export const DNSSEC_TYPES = [...DNS_TYPES, 'DS', 'DNSKEY', 'TLSA'] as const;
/** A record type of any of the page's DNS tools. */
export type RecordType = DnsType | (typeof DNSSEC_TYPES)[number];

export const GLOBAL_DNS_TYPES: readonly GlobalDnsType[] = [
  'A',
  'AAAA',
  'CNAME',
  'MX',
  'TXT',
  'NS',
  'SOA',
  'CAA',
];

export interface PageState {
  q: string;
  tool: ToolId | null;
  /** Record type for the DNS, DNSSEC and global DNS tools (each asks A for one it does not take). */
  type: RecordType;
  /** DKIM selectors for the email tool. */
  selector: string;
  /** The SPF check's MAIL FROM, HELO name and policy domain; `q` holds the client address. */
  sender: string;
  helo: string;
  domain: string;
  /** What the TLS scan scans: the web server (443) or the mail server (25, STARTTLS). */
  service: TlsScanService;
}

export const EMPTY_STATE: PageState = {
  q: '',
  tool: null,
  type: 'A',
  selector: '',
  sender: '',
  helo: '',
  domain: '',
  service: 'https',
};

/** The SPF check's fields, in the order they appear in the URL. */
const SPF_FIELDS = ['sender', 'helo', 'domain'] as const;

function isTool(value: string | null): value is ToolId {
  return value !== null && (TOOL_IDS as readonly string[]).includes(value);
}

function isRecordType(value: string): value is RecordType {
  return (DNSSEC_TYPES as readonly string[]).includes(value);
}

/** The type a tool asks for: the page's, when the tool takes it, else A. */
export function typeFor<T extends string>(types: readonly T[], type: RecordType): T | 'A' {
  return (types as readonly string[]).includes(type) ? (type as T) : 'A';
}

export function readState(search: string): PageState {
  const params = new URLSearchParams(search);
  const type = (params.get('type') ?? 'A').toUpperCase();
  const tool = params.get('tool');
  return {
    q: params.get('q') ?? '',
    tool: isTool(tool) ? tool : null,
    type: isRecordType(type) ? type : 'A',
    selector: params.get('selector') ?? '',
    sender: params.get('sender') ?? '',
    helo: params.get('helo') ?? '',
    domain: params.get('domain') ?? '',
    service: params.get('service') === 'smtp' ? 'smtp' : 'https',
  };
}

export function stateSearch(state: PageState): string {
  const params = new URLSearchParams();
  // The message tool's input is a pasted message: it never enters the address bar or history.
  if (state.tool === 'message') return '?tool=message';
  if (state.q) params.set('q', state.q);
  if (state.tool) params.set('tool', state.tool);
  if ((state.tool === 'dns' || state.tool === 'dnssec' || state.tool === 'global-dns') && state.type !== 'A')
    params.set('type', state.type);
  if (state.tool === 'email' && state.selector) params.set('selector', state.selector);
  if (state.tool === 'tls-scan' && state.service !== 'https') params.set('service', state.service);
  if (state.tool === 'spf') for (const field of SPF_FIELDS) if (state[field]) params.set(field, state[field]);
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}
