/**
 * Response and request types of every endpoint the site uses, named for the
 * page, from the typed client's generic types over the generated contract
 * (src/client/openapi.gen.d.ts, written from /openapi.json by `npm run build` /
 * `npm run typecheck`). Nothing here restates a field by hand: when a schema
 * changes, the site's type check says what to adjust.
 */
import type { BodyOf, Ok, QueryOf } from '../../client';

export type { BodyOf, ErrorBody, GetPath, Ok, PostPath, QueryOf } from '../../client';

export type DnsResult = Ok<'/api/dns'>;
export type DnsType = NonNullable<QueryOf<'/api/dns'>['type']>;
export type DnssecResult = Ok<'/api/dnssec'>;
export type DnssecZone = DnssecResult['chain'][number];
export type EmailResult = Ok<'/api/email-security'>;
export type EmailCheck = EmailResult['checks'][number];
export type SpfResult = Ok<'/api/spf'>;
/** One of RFC 7208 §2.6's results: pass, fail, softfail, neutral, none, temperror, permerror. */
export type SpfResultName = SpfResult['result'];
export type SpfTraceEntry = SpfResult['trace'][number];
export type MailTlsResult = Ok<'/api/mail-tls'>;
/** pass, warn, fail, unreachable, refused (private address, not contacted), no_mail (null MX). */
export type MailTlsStatus = MailTlsResult['status'];
export type MailTlsHost = MailTlsResult['hosts'][number];
export type MailTlsAddress = MailTlsHost['addresses'][number];
export type MailTlsDane = NonNullable<MailTlsHost['dane']>;
/** A finding with the RFC it comes from, as /api/email-security and /api/mail-tls give them. */
export type MailFinding = MailTlsResult['findings'][number];
export type RdapResult = Ok<'/api/rdap'>;
export type TlsResult = Ok<'/api/tls'>;
export type TlsScanResult = Ok<'/api/tls-scan'>;
export type MessageResult = Ok<'/api/message', 'post'>;
export type BlocklistsResult = Ok<'/api/blocklists'>;
export type TlsScanResultOk = Extract<TlsScanResult['scan'], { status: 'ok' }>;
export type TlsScanCertificate = TlsScanResultOk['certificates'][number];
export type TlsScanService = NonNullable<QueryOf<'/api/tls-scan'>['service']>;
/** The live certificate evidence; /api/inspect embeds the same object (with a status). */
/** The evidence of one handshake: /api/tls's `tls` when the target gave some, each mail server's. */
export type TlsEvidence = Omit<Extract<TlsResult['tls'], { status: 'ok' }>, 'status'>;
export type InspectResult = Ok<'/api/inspect'>;
export type CertificatesResult = Ok<'/api/certificates'>;
export type SubdomainsResult = Ok<'/api/subdomains'>;
export type GlobalDnsResult = Ok<'/api/global-dns', 'post'>;
export type GlobalDnsType = BodyOf<'/api/global-dns'>['type'];
export type IpGeoResult = Ok<'/api/ip-geo'>;
export type IpPrivacyResult = Ok<'/api/ip-privacy'>;
export type MyIpResult = Ok<'/api/my-ip'>;
export type ChallengeStatus = Ok<'/api/challenge/status'>;
export type VerifyResult = Ok<'/api/challenge/verify', 'post'>;
export type VerifyBody = BodyOf<'/api/challenge/verify'>;
export type ProviderAttempt = DnsResult['providers_tried'][number];
