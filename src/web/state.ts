/**
 * The page's state in its URL, so a result can be shared and back/forward
 * replay it: /?q=example.com&tool=dns&type=MX (&selector=s1 for email;
 * &sender=, &helo= and &domain= for the SPF check of the address in q).
 */
import type { DnsType, GlobalDnsType } from './api/types';
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
  /** Record type for the DNS and global DNS tools. */
  type: DnsType;
  /** DKIM selectors for the email tool. */
  selector: string;
  /** The SPF check's MAIL FROM, HELO name and policy domain; `q` holds the client address. */
  sender: string;
  helo: string;
  domain: string;
}

export const EMPTY_STATE: PageState = {
  q: '',
  tool: null,
  type: 'A',
  selector: '',
  sender: '',
  helo: '',
  domain: '',
};

/** The SPF check's fields, in the order they appear in the URL. */
const SPF_FIELDS = ['sender', 'helo', 'domain'] as const;

function isTool(value: string | null): value is ToolId {
  return value !== null && (TOOL_IDS as readonly string[]).includes(value);
}

function isDnsType(value: string): value is DnsType {
  return (DNS_TYPES as readonly string[]).includes(value);
}

export function readState(search: string): PageState {
  const params = new URLSearchParams(search);
  const type = (params.get('type') ?? 'A').toUpperCase();
  const tool = params.get('tool');
  return {
    q: params.get('q') ?? '',
    tool: isTool(tool) ? tool : null,
    type: isDnsType(type) ? type : 'A',
    selector: params.get('selector') ?? '',
    sender: params.get('sender') ?? '',
    helo: params.get('helo') ?? '',
    domain: params.get('domain') ?? '',
  };
}

export function stateSearch(state: PageState): string {
  const params = new URLSearchParams();
  if (state.q) params.set('q', state.q);
  if (state.tool) params.set('tool', state.tool);
  if ((state.tool === 'dns' || state.tool === 'global-dns') && state.type !== 'A')
    params.set('type', state.type);
  if (state.tool === 'email' && state.selector) params.set('selector', state.selector);
  if (state.tool === 'spf') for (const field of SPF_FIELDS) if (state[field]) params.set(field, state[field]);
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}
