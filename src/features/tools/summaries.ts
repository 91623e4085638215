/**
 * One short paragraph per lookup, read by a model beside the structured answer (MCP's text
 * content) and printed by the CLI above its tables: the verdict first, in the words the site
 * uses, then the few facts that decide it. Each takes the route's 200 body, which its
 * schema guarantees; nothing here is computed that the answer does not already say.
 */
import type { Static } from 'typebox';
import { addressLine, countsText } from '../../client/blocklists.js';
import { methodCards } from '../../client/message.js';
import { dnssecVerdict, tlsScanVerdict } from '../../client/verdicts.js';
import type { BlocklistsResponse } from '../blocklists/blocklists.schema.js';
import type { CertificatesResponse, SubdomainsResponse } from '../ct/ct.schema.js';
import type { DnsResponse } from '../dns/dns.schema.js';
import type { DnssecResponse } from '../dnssec/dnssec.schema.js';
import type { EmailSecurityResponse } from '../email/email.schema.js';
import type { GlobalDnsResponse } from '../global-dns/global-dns.schema.js';
import type { InspectResponseSchema } from '../inspect/inspect.schema.js';
import type { IpGeoResponse, IpPrivacyResponse, MyIpResponse } from '../ip/ip.schema.js';
import type { MailTlsResponse } from '../mail-tls/mail-tls.schema.js';
import type { MessageAnalysis } from '../message/message.schema.js';
import type { RdapResponse } from '../rdap/rdap.schema.js';
import type { SpfResponse } from '../spf/spf.schema.js';
import type { TlsResponse } from '../tls/tls.schema.js';
import type { TlsScanResponse } from '../tls-scan/tls-scan.schema.js';
import type { ToolName } from './catalog.js';

export type Summarize = (body: unknown) => string;

/** How many to name before "and N more". */
const LIST_MAX = 5;

function list(items: readonly string[], max = LIST_MAX): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The DNS record as one line of text, per type (the shapes /api/dns documents). */
export function recordText(record: Readonly<Record<string, unknown>>): string {
  const r = record as Record<string, string | number | boolean | undefined>;
  if (r.address !== undefined) return String(r.address);
  if (r.exchange !== undefined) return `${r.priority} ${r.exchange}`;
  if (r.text !== undefined) return `"${r.text}"`;
  if (r.mname !== undefined) return `${r.mname} ${r.rname} ${r.serial}`;
  if (r.tag !== undefined) return `${r.flags} ${r.tag} "${r.value}"`;
  if (r.port !== undefined) return `${r.priority} ${r.weight} ${r.port} ${r.target}`;
  if (r.target !== undefined) return String(r.target);
  if (r.host !== undefined) return String(r.host);
  const { ttl: _ttl, ...rest } = r;
  return JSON.stringify(rest);
}

function dns(body: unknown): string {
  const b = body as DnsResponse;
  const ad = b.authenticated_data ? ', DNSSEC-validated by the resolver (AD)' : '';
  if (b.rcode !== 'NOERROR')
    return `${b.query_name} ${b.type}: ${b.rcode}${ad}; no records (via ${b.source}).`;
  if (b.records.length === 0)
    return `${b.query_name} ${b.type}: no records (NOERROR, empty)${ad} (via ${b.source}).`;
  return `${b.query_name} ${b.type}: ${list(b.records.map(recordText))}${ad} (via ${b.source}).`;
}

function dnssec(body: unknown): string {
  const b = body as DnssecResponse;
  const chain = b.chain.map((l) => `${l.zone} ${l.status}`).join(', ');
  const answer = b.answer.records.length
    ? list(b.answer.records.filter((r) => r.type === b.type).map((r) => r.data))
    : `no records (${b.answer.rcode})`;
  return (
    `${dnssecVerdict(b).text} Chain: ${chain || 'none'}. Answer: ${answer || b.answer.rcode}; ` +
    `${plural(b.queries, 'upstream query', 'upstream queries')} (via ${b.source}).`
  );
}

function email(body: unknown): string {
  const b = body as EmailSecurityResponse;
  const checks = b.checks
    .filter((c) => c.status !== 'not_applicable')
    .map((c) => `${c.id.toUpperCase().replace('_', '-')} ${c.status}: ${c.summary}`);
  const top = b.recommendations[0];
  return [
    `${b.domain}: grade ${b.grade}, ${b.score}/100.`,
    ...checks.map((c) => `${c}${c.endsWith('.') ? '' : '.'}`),
    top ? `First to fix: ${top.text}` : 'Nothing to fix.',
  ].join(' ');
}

function spf(body: unknown): string {
  const b = body as SpfResponse;
  const who = b.sender ? `mail from ${b.sender}` : `HELO ${b.helo}`;
  const matched = b.matched ? ` (matched ${b.matched.mechanism} in ${b.matched.record_domain})` : '';
  const why = b.problem ? ` ${b.problem}` : '';
  const dnssec = b.dnssec ? ` ${b.dnssec.message}` : '';
  return `SPF ${b.result} for ${b.ip} sending ${who} (domain ${b.domain})${matched}; ${b.lookups}/${b.lookup_limit} DNS lookups.${why}${dnssec}`;
}

function mailTls(body: unknown): string {
  const b = body as MailTlsResponse;
  const hosts = b.hosts.map((h) => `${h.host} ${h.status}`);
  // The answer's own summary usually starts with the domain already.
  const summary = b.summary.startsWith(`${b.domain}: `) ? b.summary.slice(b.domain.length + 2) : b.summary;
  return `${b.domain}: mail servers ${b.status}. ${summary}${hosts.length ? ` Hosts: ${list(hosts)}.` : ''}`;
}

function rdap(body: unknown): string {
  const b = body as RdapResponse;
  const registry = b.registry;
  if (registry === null)
    return `${b.target}: no registration data.${b.notes.length ? ` ${b.notes.join(' ')}` : ''}`;
  const registrar = registry.entities.registrar?.name;
  const events = registry.events;
  const parts = [
    registrar && `registrar ${registrar}`,
    events.registration && `registered ${events.registration.slice(0, 10)}`,
    events.expiration && `expires ${events.expiration.slice(0, 10)}`,
    'nameservers' in registry && registry.nameservers.length > 0
      ? `nameservers ${list(registry.nameservers.map((n) => n.ldh_name))}`
      : undefined,
    'cidrs' in registry && registry.cidrs.length > 0 ? `network ${registry.cidrs.join(', ')}` : undefined,
    'name' in registry && registry.name ? `name ${registry.name}` : undefined,
    registry.status.length > 0 ? `status ${registry.status.join(', ')}` : undefined,
  ].filter(Boolean);
  return `${b.target} (${b.type}): ${parts.join('; ')} (via ${b.source}).`;
}

function tls(body: unknown): string {
  const { tls: t } = body as TlsResponse;
  if (t.status === 'error') return `No TLS evidence: ${t.error}.`;
  const c = t.connection;
  return (
    `${t.host}:${t.port}: ${t.verdict.summary} ${c.protocol} ${c.cipher}; certificate ${t.leaf.subject} ` +
    `issued by ${t.leaf.issuer}.${t.findings.length ? ` ${plural(t.findings.length, 'finding')}.` : ''}`
  );
}

function tlsScan(body: unknown): string {
  const { scan } = body as TlsScanResponse;
  const verdict = tlsScanVerdict(scan).text;
  if (scan.status === 'error') return verdict;
  const offered = scan.protocols
    .filter((p) => p.offered)
    .map((p) => p.name)
    .reverse();
  const worst = scan.findings.slice(0, 3).map((f) => `${f.severity}: ${f.message}`);
  return (
    `${verdict} Protocols: ${offered.join(', ') || 'none'}; ${plural(scan.cipher_suites.length, 'cipher suite')}` +
    `${scan.groups.length ? `; groups ${list(scan.groups.map((g) => g.name))}` : ''}` +
    `${worst.length ? `. ${plural(scan.findings.length, 'finding')}, first: ${worst.join(' ')}` : '. No findings'}` +
    `. ${plural(scan.handshakes, 'handshake')} in ${scan.elapsed_ms} ms.`
  );
}

/** The API's verdict sentence first, then each method's result, who connected, the path, the worst findings. */
function message(body: unknown): string {
  const m = body as MessageAnalysis;
  const cards = methodCards(m)
    .map((c) => `${c.method} ${c.result}`)
    .join(', ');
  const env = m.envelope;
  const envelope = env.ip
    ? `${env.ip}${env.helo ? ` (HELO ${env.helo})` : ''}${env.mail_from !== null ? `, MAIL FROM <${env.mail_from}>` : ''}${env.source === 'received' ? ` from Received header ${env.received_index}` : ''}`
    : 'not known';
  const worst = m.findings.slice(0, 3).map((f) => `${f.severity}: ${f.message}`);
  return (
    `${m.verdict.summary} ${cards}. From ${m.from.address ?? 'unknown'}; connecting: ${envelope}; ` +
    `${plural(m.received.length, 'Received hop')}` +
    `${worst.length ? `. ${plural(m.findings.length, 'finding')}, first: ${worst.join(' ')}` : '. No findings.'}`
  );
}

/** The API's summary first, then how each list answered and the MX addresses one by one. */
function blocklists(body: unknown): string {
  const b = body as BlocklistsResponse;
  const addresses = (b.mx ?? []).flatMap((h) =>
    h.addresses.map((a) => `${h.host} ${a.address} ${addressLine(a)}`),
  );
  return (
    `${b.summary}${b.lists.length ? ` Lists: ${countsText(b.lists)}.` : ''}` +
    `${addresses.length ? ` MX addresses: ${list(addresses, 3)}.` : ''}`
  );
}

function inspect(body: unknown): string {
  const b = body as Static<typeof InspectResponseSchema>;
  const final = b.http.final;
  const parts = [
    b.http.status === 'ok' && final ? `HTTP ${final.status} at ${final.url}` : `HTTP failed: ${b.http.error}`,
    b.http.redirects_to_https === true ? 'redirects to HTTPS' : undefined,
    b.security_headers.grade ? `security headers grade ${b.security_headers.grade}` : undefined,
    b.tls === undefined
      ? undefined
      : b.tls.status === 'ok'
        ? `TLS ${b.tls.connection.protocol}, certificate ${b.tls.verdict.status === 'rejected' ? `rejected (${b.tls.connection.authorization_reason})` : 'trusted'}`
        : `TLS failed: ${b.tls.error}`,
    b.http.http2.negotiated ? 'HTTP/2' : undefined,
    b.http.http3.advertised ? 'HTTP/3 advertised' : undefined,
  ].filter(Boolean);
  return `${b.target}: ${parts.join('; ')}.`;
}

function certificates(body: unknown): string {
  const b = body as CertificatesResponse;
  const issuers = [...new Set(b.issuances.map((i) => i.issuer.organization ?? i.issuer.name))];
  const latest = b.issuances[0];
  return (
    `${b.domain}: ${plural(b.total, 'certificate')} in CT logs${b.truncated ? ' (truncated)' : ''}` +
    `${b.expired_excluded ? ', expired ones excluded' : ''}` +
    `${latest ? `; latest ${latest.common_name ?? latest.dns_names[0] ?? ''} from ${latest.not_before.slice(0, 10)}` : ''}` +
    `${issuers.length ? `; issuers ${list(issuers, 3)}` : ''} (via ${b.source}).`
  );
}

function subdomains(body: unknown): string {
  const b = body as SubdomainsResponse;
  const active = b.hosts.filter((h) => h.status === 'active').map((h) => h.name);
  return (
    `${b.domain}: ${plural(b.discovered_count, 'name')} found in CT${b.truncated ? ' (truncated)' : ''}; ` +
    `${b.checked_count} resolved live, ${b.active_count} active${active.length ? `: ${list(active)}` : ''}` +
    `${b.dns_wildcard.detected ? '; the domain has a DNS wildcard' : ''} (via ${b.source}).`
  );
}

function globalDns(body: unknown): string {
  const b = body as GlobalDnsResponse;
  const s = b.summary;
  const sets = s.answer_sets
    .slice(0, 3)
    .map(
      (set) => `${set.values.length ? set.values.join(' ') : `(${set.rcode})`} in ${set.countries.join(' ')}`,
    );
  return (
    `${b.target} ${b.type} from ${s.measured} countries: ${s.answered} answered, ` +
    `${s.consistent ? 'consistent' : `${plural(s.distinct_answer_sets, 'different answer set')}`}` +
    `${sets.length ? `: ${sets.join('; ')}` : ''}${s.unmeasured.length ? `; not measured: ${s.unmeasured.join(' ')}` : ''} (via ${b.source}).`
  );
}

function place(city: string | null, region: string | null, country: { name: string } | null): string {
  return [city, region, country?.name].filter(Boolean).join(', ') || 'unknown location';
}

function ipGeo(body: unknown): string {
  const b = body as IpGeoResponse;
  const as = b.asn ? `AS${b.asn}${b.as_org ? ` ${b.as_org}` : ''}` : 'no AS data';
  return `${b.ip}: ${place(b.city, b.region, b.country)} (approximate); ${as}${b.network ? `, network ${b.network}` : ''}${b.is_relay ? '; a privacy-relay egress' : ''} (via ${b.source}).`;
}

function ipPrivacy(body: unknown): string {
  const b = body as IpPrivacyResponse;
  return b.is_relay && b.relay
    ? `${b.ip} is a published ${b.relay.provider} egress address.`
    : `${b.ip} is not in the published relay egress lists (${b.lists.map((l) => l.provider).join(', ')}).`;
}

function myIp(body: unknown): string {
  const b = body as MyIpResponse;
  const geo = b.geo ? `; ${place(b.geo.city, b.geo.region, b.geo.country)}` : '';
  const as = b.asn ? `; AS${b.asn.number}${b.asn.org ? ` ${b.asn.org}` : ''}` : '';
  return `Your address as this service sees it: ${b.ip} (IPv${b.version})${b.reverse_dns ? `, ${b.reverse_dns}` : ''}${geo}${as}.`;
}

export const summaries: Record<ToolName, Summarize> = {
  dns_lookup: dns,
  dnssec_validate: dnssec,
  email_security: email,
  spf_check: spf,
  mail_tls: mailTls,
  rdap_lookup: rdap,
  tls_certificate: tls,
  tls_scan: tlsScan,
  message_analyze: message,
  blocklists_check: blocklists,
  inspect_host: inspect,
  ct_certificates: certificates,
  subdomains,
  global_dns: globalDns,
  ip_geo: ipGeo,
  ip_privacy: ipPrivacy,
  my_ip: myIp,
};
