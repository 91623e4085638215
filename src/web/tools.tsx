/**
 * The tools on the page: which inputs each accepts, which API calls it makes
 * (built with the contract-typed `get`/`post`) and how each answer is drawn.
 * A tool is one or more parts; each part is one call and one result card.
 */
import type { ComponentChildren } from 'preact';
import { type Call, get, post, postText } from './api/client';
import type {
  BlocklistsResult,
  CertificatesResult,
  DnsResult,
  DnssecResult,
  EmailResult,
  GlobalDnsResult,
  GlobalDnsType,
  InspectResult,
  IpGeoResult,
  IpPrivacyResult,
  MailTlsResult,
  MessageResult,
  RdapResult,
  SpfResult,
  SubdomainsResult,
  TlsResult,
  TlsScanResult,
} from './api/types';
import type { ToolId } from './endpoints';
import { BlocklistsView } from './results/blocklists';
import { CertificatesView } from './results/certificates';
import { DnsView } from './results/dns';
import { DnssecView } from './results/dnssec';
import { EmailView } from './results/email';
import { GlobalDnsView } from './results/global-dns';
import { InspectView } from './results/inspect';
import { IpGeoView, IpPrivacyView } from './results/ip';
import { MailTlsView } from './results/mail-tls';
import { MessageView } from './results/message';
import { RdapView } from './results/rdap';
import { SpfView } from './results/spf';
import { SubdomainsView } from './results/subdomains';
import { TlsView } from './results/tls';
import { TlsScanView } from './results/tls-scan';
import { DNS_TYPES, DNSSEC_TYPES, GLOBAL_DNS_TYPES, type PageState, typeFor } from './state';
import type { Target, TargetKind } from './target';

export interface Part {
  title: string;
  call: Call;
  render: (data: unknown) => ComponentChildren;
}

/**
 * Pairs a call with the renderer for its 200 body. The one cast in the
 * client: `send` parsed JSON that the contract says has type T for this call.
 */
function part<T>(title: string, call: Call, render: (data: T) => ComponentChildren): Part {
  return { title, call, render: (data) => render(data as T) };
}

export interface Tool {
  id: ToolId;
  label: string;
  kinds: readonly TargetKind[];
  /** Shown under the spinner of tools that take seconds. */
  slowNote?: string;
  /** Why the tool's button is disabled for the box's input, when "Not for …" would not say what to type. */
  disabledNote?: string;
  /**
   * Whether the page holds what the calls need besides the box (for the SPF
   * check, a sender, HELO name or domain); when not, picking the tool shows
   * its options and waits for "Look up". Default: always ready.
   */
  ready?(state: PageState): boolean;
  /**
   * Takes a pasted text (the message tool) instead of the box's target: the page shows a paste
   * box for it, and its one part is messagePart's.
   */
  paste?: true;
  parts(target: Target, state: PageState): Part[];
}

/** What the message tool sends: the pasted text, and who connected (each optional, '' for not given). */
export interface PastedMessage {
  message: string;
  ip: string;
  helo: string;
  mail_from: string;
}

export const EMPTY_MESSAGE: PastedMessage = { message: '', ip: '', helo: '', mail_from: '' };

/** The message as text/plain (its size is then the route's limit), who connected in the query. */
export function messagePart(m: PastedMessage): Part {
  const query = { ip: m.ip.trim(), helo: m.helo.trim(), mail_from: m.mail_from.trim() };
  return part<MessageResult>('Message analysis', postText('/api/message', query, m.message), (d) => (
    <MessageView data={d} />
  ));
}

/** The identity the SPF check is asked about, as its card's title names it. */
function spfIdentity(s: PageState): string {
  const sender = s.sender.trim();
  const helo = s.helo.trim();
  const domain = s.domain.trim();
  if (sender) return domain ? `${sender} (policy of ${domain})` : sender;
  if (helo) return domain ? `HELO ${helo} (policy of ${domain})` : `HELO ${helo}`;
  return domain;
}

export const TOOLS: readonly Tool[] = [
  {
    id: 'dns',
    label: 'DNS',
    kinds: ['domain', 'ip'],
    parts: (t, s) => {
      // An address can only be asked for its PTR name.
      const type = t.kind === 'ip' ? 'PTR' : typeFor(DNS_TYPES, s.type);
      return [
        part<DnsResult>(`DNS ${type} · ${t.host}`, get('/api/dns', { target: t.host, type }), (d) => (
          <DnsView data={d} />
        )),
      ];
    },
  },
  {
    id: 'dnssec',
    label: 'DNSSEC',
    kinds: ['domain', 'ip'],
    parts: (t, s) => {
      // An address is validated as its reverse name (PTR), as the DNS tool asks it.
      const type = t.kind === 'ip' ? 'PTR' : typeFor(DNSSEC_TYPES, s.type);
      return [
        part<DnssecResult>(
          `DNSSEC ${type} · ${t.host}`,
          get('/api/dnssec', { target: t.host, type }),
          (d) => <DnssecView data={d} />,
        ),
      ];
    },
  },
  {
    id: 'email',
    label: 'Email security',
    kinds: ['domain'],
    slowNote: 'Checks MX, SPF, DMARC, DKIM, MTA-STS, TLS-RPT and BIMI: a few seconds.',
    parts: (t, s) => [
      part<EmailResult>(
        `Email security · ${t.host}`,
        get('/api/email-security', { domain: t.host, ...(s.selector ? { selector: s.selector } : {}) }),
        (d) => <EmailView data={d} />,
      ),
    ],
  },
  {
    id: 'spf',
    label: 'SPF check',
    kinds: ['ip'],
    disabledNote: 'Type the sending server’s IP address; the sender is asked for next',
    ready: (s) => spfIdentity(s) !== '',
    parts: (t, s) => [
      part<SpfResult>(
        `SPF check · ${t.host}${spfIdentity(s) ? ` as ${spfIdentity(s)}` : ''}`,
        get('/api/spf', {
          ip: t.host,
          sender: s.sender.trim(),
          helo: s.helo.trim(),
          domain: s.domain.trim(),
        }),
        (d) => <SpfView data={d} />,
      ),
    ],
  },
  {
    id: 'mail-tls',
    label: 'Mail servers',
    kinds: ['domain'],
    slowNote:
      'Talks SMTP to every MX host on port 25 (STARTTLS, certificate, DANE): a few seconds, longer when a server is slow to greet.',
    parts: (t) => [
      part<MailTlsResult>(`Mail servers · ${t.host}`, get('/api/mail-tls', { domain: t.host }), (d) => (
        <MailTlsView data={d} />
      )),
    ],
  },
  {
    id: 'rdap',
    label: 'RDAP',
    kinds: ['domain', 'ip'],
    parts: (t) => [
      part<RdapResult>(
        `Registration (RDAP) · ${t.host}`,
        get('/api/rdap', { target: t.host, type: t.kind === 'ip' ? 'ip' : 'domain' }),
        (d) => <RdapView data={d} />,
      ),
    ],
  },
  {
    id: 'tls',
    label: 'TLS',
    kinds: ['domain'],
    parts: (t) => [
      part<TlsResult>(`TLS certificate · ${t.host}`, get('/api/tls', { target: t.host }), (d) => (
        <TlsView data={d} />
      )),
    ],
  },
  {
    id: 'tls-scan',
    label: 'TLS scan',
    kinds: ['domain', 'ip'],
    slowNote:
      'Tries every protocol, cipher suite and group with a few handshakes at a time: often 5–20 s, longer for a mail server.',
    parts: (t, s) => [
      part<TlsScanResult>(
        `TLS scan${s.service === 'smtp' ? ' (SMTP)' : ''} · ${t.host}`,
        get('/api/tls-scan', { target: t.host, service: s.service }),
        (d) => <TlsScanView data={d} />,
      ),
    ],
  },
  {
    id: 'message',
    label: 'Message',
    kinds: [],
    paste: true,
    slowNote: 'Verifies each DKIM signature and the ARC chain, checks SPF and DMARC: a few seconds.',
    parts: () => [],
  },
  {
    id: 'blocklists',
    label: 'Blocklists',
    kinds: ['ip', 'domain'],
    slowNote:
      'Asks each DNS blocklist at its own servers (a domain: its lists, then every MX address): a few seconds.',
    parts: (t) => [
      part<BlocklistsResult>(
        `Blocklists · ${t.host}`,
        // The box decides what is asked: an address against the IP lists, a domain against the domain lists and its MX addresses.
        get('/api/blocklists', t.kind === 'ip' ? { ip: t.host } : { domain: t.host }),
        (d) => <BlocklistsView data={d} />,
      ),
    ],
  },
  {
    id: 'inspect',
    label: 'Inspect',
    kinds: ['domain', 'ip'],
    slowNote: 'Follows redirects, grades security headers and looks up the network: a few seconds.',
    parts: (t) => [
      part<InspectResult>(`HTTP inspection · ${t.host}`, get('/api/inspect', { target: t.host }), (d) => (
        <InspectView data={d} />
      )),
    ],
  },
  {
    id: 'certificates',
    label: 'Certificates',
    kinds: ['domain'],
    slowNote: 'Certificate-transparency searches can take several seconds for busy domains.',
    parts: (t) => [
      part<CertificatesResult>(
        `Certificate history · ${t.host}`,
        get('/api/certificates', { domain: t.host }),
        (d) => <CertificatesView data={d} />,
      ),
    ],
  },
  {
    id: 'subdomains',
    label: 'Subdomains',
    kinds: ['domain'],
    slowNote: 'Searches certificate-transparency logs, then resolves the 50 most recent names: often 5–20 s.',
    parts: (t) => [
      part<SubdomainsResult>(`Subdomains · ${t.host}`, get('/api/subdomains', { domain: t.host }), (d) => (
        <SubdomainsView data={d} />
      )),
    ],
  },
  {
    id: 'global-dns',
    label: 'Global DNS',
    kinds: ['domain'],
    slowNote: 'Probes in ten countries resolve the name; a measurement usually takes 5–20 s.',
    parts: (t, s) => {
      const type: GlobalDnsType = typeFor(GLOBAL_DNS_TYPES, s.type);
      return [
        part<GlobalDnsResult>(
          `Global DNS ${type} · ${t.host}`,
          post('/api/global-dns', { target: t.host, type }),
          (d) => <GlobalDnsView data={d} />,
        ),
      ];
    },
  },
  {
    id: 'ip',
    label: 'IP geo & relay',
    kinds: ['ip'],
    parts: (t) => [
      part<IpGeoResult>(`IP geolocation · ${t.host}`, get('/api/ip-geo', { ip: t.host }), (d) => (
        <IpGeoView data={d} />
      )),
      part<IpPrivacyResult>(`Relay check · ${t.host}`, get('/api/ip-privacy', { ip: t.host }), (d) => (
        <IpPrivacyView data={d} />
      )),
    ],
  },
];

export function toolById(id: ToolId): Tool {
  const tool = TOOLS.find((t) => t.id === id);
  if (!tool) throw new Error(`unknown tool ${id}`);
  return tool;
}

/** The tool to run: the one asked for if it takes this kind of input, else the kind's first. */
export function toolFor(kind: TargetKind, wanted: ToolId | null): Tool {
  const chosen = wanted ? toolById(wanted) : undefined;
  if (chosen?.kinds.includes(kind)) return chosen;
  return toolById(kind === 'ip' ? 'ip' : 'dns');
}
