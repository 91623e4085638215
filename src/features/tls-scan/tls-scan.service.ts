/**
 * GET /api/tls-scan: what one server accepts (docs/tls-scan.md). The target
 * is resolved and checked once and every handshake goes to that one address,
 * through the outbound client; the wire work is src/tls-scan/'s, the
 * certificates' complete handshakes are ./certificates.ts's, and the judging
 * (findings, grade, Mozilla and NCSC-NL ratings) is src/tls-scan/'s pure rules.
 *
 * Cached an hour per service and host (`tls-scan:<service>:<host>`); a scan
 * of a target already being scanned joins that scan (the loader's single
 * flight). A target that could not be scanned is an answer (`status: error`),
 * never cached.
 */
import type { Duplex } from 'node:stream';
import { type Freshness, freshness } from '../../cache/cached.js';
import type { AppContext } from '../../context.js';
import { TargetError } from '../../net/errors.js';
import { negotiateStarttls, SMTP_PORT } from '../../net/smtp-starttls.js';
import { cipherSuite, SSLV2_CIPHER_SPECS, type TlsProtocol } from '../../tls-scan/cipher-suites.js';
import { NAMED_GROUPS } from '../../tls-scan/client-hello.js';
import {
  enumerateGroups,
  enumerateProtocols,
  helloFeatures,
  type ProtocolFindings,
  TLS_VERSIONS,
} from '../../tls-scan/enumerate.js';
import { scanGrade } from '../../tls-scan/grade.js';
import { rateMozilla } from '../../tls-scan/mozilla.js';
import { ncscDheClass, ncscGroupClass, ncscSuiteClass, rateNcsc } from '../../tls-scan/ncsc.js';
import { scanFindings } from '../../tls-scan/scan-findings.js';
import { ScanSession } from '../../tls-scan/session.js';
import { parseTlsTarget } from '../tls/tls-target.js';
import { scanCertificates } from './certificates.js';
import {
  PROTOCOL_NAMES,
  type ScanGroupName,
  type ScannedGroup,
  type ScannedSuite,
  type TlsScan,
  type TlsScanResponse,
} from './tls-scan.schema.js';

export const TLS_SCAN_CACHE_SECONDS = 3600;
/**
 * The most connections one scan may make. A typical server costs 30–60 (docs/tls-scan.md
 * counts them); a server that accepts every suite of every protocol reaches the bound and is
 * reported incomplete rather than scanned for minutes.
 */
export const HANDSHAKE_BUDGET = 150;
/** Handshakes at once against one address: polite to a web server, gentler still to a mail server. */
const CONCURRENCY = { https: 4, smtp: 2 } as const;
const PORTS = { https: 443, smtp: SMTP_PORT } as const;

export type TlsScanDeps = Pick<AppContext, 'clock' | 'loader' | 'outbound' | 'config'>;
type Service = keyof typeof PORTS;

/** A scan that could not start: what the answer says about the target. */
class ScanFailure extends Error {
  constructor(
    message: string,
    readonly stage: string,
    readonly handshakes: number,
    readonly elapsedMs: number,
  ) {
    super(message);
  }
}

export async function lookupTlsScan(
  deps: TlsScanDeps,
  target: string,
  service: Service = 'https',
): Promise<{ body: TlsScanResponse; cache: Freshness | undefined }> {
  const parsed = parseTlsTarget(target);
  try {
    const result = await deps.loader.load(`tls-scan:${service}:${parsed.host}`, async () => ({
      value: await scan(deps, parsed, service),
      ttl: TLS_SCAN_CACHE_SECONDS,
    }));
    return { body: { scan: { status: 'ok', ...result.value } }, cache: freshness(result) };
  } catch (err) {
    if (!(err instanceof ScanFailure)) throw err;
    return {
      body: {
        scan: {
          status: 'error',
          target: parsed.host,
          service,
          error: err.message,
          stage: err.stage,
          handshakes: err.handshakes,
          elapsed_ms: err.elapsedMs,
        },
      },
      cache: undefined,
    };
  }
}

async function scan(
  deps: TlsScanDeps,
  target: { host: string; literal: boolean },
  service: Service,
): Promise<TlsScan> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { config } = deps;
  // Refuses a private or special-use target (400) before any connection.
  const resolved = await deps.outbound.resolve(target.host);
  const address = resolved.addresses[0]!.address;
  const port = PORTS[service];
  const sni = target.literal ? null : target.host;
  // One deadline for the whole scan, inside the request's own.
  const deadlineMs = Math.min(config.providerTimeoutMs * 4, config.requestTimeoutMs - 2_000);
  const deadline = AbortSignal.timeout(Math.max(1_000, deadlineMs));
  const handshakeTimeoutMs = config.providerTimeoutMs;
  const beforeTls =
    service === 'smtp'
      ? (tcp: Duplex, signal: AbortSignal) =>
          negotiateStarttls(
            tcp,
            signal,
            { heloName: config.smtpHeloName, replyTimeoutMs: handshakeTimeoutMs },
            { extensions: [], starttlsOffered: null },
          )
      : undefined;
  const session = new ScanSession(deps.outbound, {
    address,
    port,
    serverName: sni ?? undefined,
    concurrency: CONCURRENCY[service],
    budget: HANDSHAKE_BUDGET,
    deadline,
    handshakeTimeoutMs,
    ...(beforeTls ? { prelude: beforeTls } : {}),
  });
  const notes: string[] = [];
  const alpn = service === 'https' ? ['h2', 'http/1.1'] : [];

  let protocols: ProtocolFindings;
  try {
    protocols = await enumerateProtocols(session, alpn, notes);
  } catch (err) {
    if (err instanceof TargetError) {
      const stage = err.stage === 'starttls' ? 'smtp' : 'connect';
      throw new ScanFailure(
        `${target.host} (${address}) port ${port}: ${err.message}`,
        stage,
        session.handshakes,
        elapsed(),
      );
    }
    throw err;
  }
  if (!Object.values(protocols.offered).some(Boolean)) {
    throw new ScanFailure(
      `${target.host} (${address}) port ${port} answered no TLS or SSL hello: it accepts none of SSLv2 to TLS 1.3`,
      'tls',
      session.handshakes,
      elapsed(),
    );
  }
  const [groups, hello, certs] = await Promise.all([
    enumerateGroups(session, protocols, notes),
    helloFeatures(session, protocols, notes),
    scanCertificates(
      deps,
      session,
      {
        host: target.host,
        address,
        port,
        sni,
        https: service === 'https',
        handshakeTimeoutMs,
        ...(beforeTls ? { beforeTls } : {}),
      },
      notes,
    ),
  ]);
  if (session.exhausted && !notes.some((n) => n.includes(session.exhausted!.message)))
    notes.push(`The scan ended early: ${session.exhausted.message}; what was not reached is left out.`);

  const best12 = TLS_VERSIONS.filter((p) => p !== 'TLSv1.3')
    .map((p) => protocols.hellos[p])
    .find(Boolean);
  const facts = {
    target: target.host,
    service,
    port,
    address,
    sni,
    protocols: PROTOCOL_NAMES.map((name) => ({ name, offered: protocols.offered[name] })),
    cipher_suites: suitesOf(protocols),
    server_preference: protocols.serverPreference,
    chacha20_preference: protocols.chacha20Preference,
    groups: groups.groups.map((g): ScannedGroup => groupOf(g.name, g.protocol)),
    dhe:
      groups.dheBits === null
        ? null
        : {
            bits: groups.dheBits,
            group: groups.dheGroup,
            ncsc: ncscDheClass(groups.dheBits, groups.dheGroup !== null),
          },
    certificates: certs.certificates,
    without_sni: certs.withoutSni,
    ocsp_stapling: certs.ocsp,
    features: {
      secure_renegotiation: best12 ? best12.extensions.secureRenegotiation : null,
      compression: hello.compression,
      fallback_scsv: hello.fallbackScsv,
      extended_master_secret: best12 ? best12.extensions.extendedMasterSecret : null,
      session_tickets: best12 ? best12.extensions.sessionTicket : null,
      alpn: certs.alpn,
      heartbeat: hello.heartbeat,
    },
    handshakes: session.handshakes,
    handshake_budget: HANDSHAKE_BUDGET,
    complete: session.exhausted === undefined,
    notes,
    elapsed_ms: elapsed(),
    scanned_at: new Date(deps.clock()).toISOString(),
  };
  const findings = scanFindings(facts);
  return {
    ...facts,
    findings,
    grade: scanGrade(facts, findings),
    ratings: { mozilla: rateMozilla(facts), ncsc: rateNcsc(facts) },
  };
}

/** Newest protocol first, each in the order found (the server's, where it enforces one). */
function suitesOf(found: ProtocolFindings): ScannedSuite[] {
  const out: ScannedSuite[] = [];
  for (const protocol of TLS_VERSIONS) {
    for (const code of found.suites.get(protocol) ?? []) {
      const suite = cipherSuite(code);
      if (!suite) continue;
      out.push({
        protocol,
        code: hex(code, 4),
        name: suite.name,
        openssl_name: suite.opensslName,
        key_exchange: suite.keyExchange,
        authentication: suite.authentication,
        encryption: suite.encryption,
        bits: suite.bits,
        export: suite.export,
        ncsc: ncscSuiteClass(suite, protocol as TlsProtocol),
      });
    }
  }
  for (const code of found.sslv2Specs) {
    const spec = SSLV2_CIPHER_SPECS.find((s) => s.code === code);
    out.push({
      protocol: 'SSLv2',
      code: hex(code, 6),
      name: spec?.name ?? `SSLv2 cipher ${hex(code, 6)}`,
      openssl_name: spec?.opensslName ?? null,
      key_exchange: 'RSA',
      authentication: 'RSA',
      encryption: spec?.encryption ?? 'unknown',
      bits: spec?.bits ?? 0,
      export: spec?.export ?? false,
      ncsc: 'insufficient',
    });
  }
  return out;
}

function groupOf(name: ScanGroupName, protocol: 'TLSv1.3' | 'TLSv1.2'): ScannedGroup {
  const kind = /MLKEM/.test(name) ? 'hybrid_pq' : /^ffdhe/.test(name) ? 'ffdhe' : 'ecdhe';
  return { name, code: NAMED_GROUPS[name], kind, protocol, ncsc: ncscGroupClass(name) };
}

const hex = (code: number, digits: number) => `0x${code.toString(16).toUpperCase().padStart(digits, '0')}`;
