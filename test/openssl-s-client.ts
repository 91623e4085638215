/**
 * What `openssl s_client -showcerts` sees of one TLS server, for the interop
 * tests that hold netdiag's view of a handshake against OpenSSL's own
 * (test/integration/tls-openssl-interop.test.ts, test/interop/mail-tls-postfix.test.ts).
 * OpenSSL's `x509` command reads the certificates s_client printed, so neither
 * side's parser checks itself.
 *
 *   const view = await sClientView({ connect: '127.0.0.77:25', servername, caFile, starttls: 'smtp' });
 */
import { execFile, execFileSync } from 'node:child_process';

/** `openssl version`, or undefined when there is no openssl on PATH (the callers skip, saying so). */
export function opensslVersion(): string | undefined {
  try {
    return execFileSync('openssl', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

export interface SClientOptions {
  /** `host:port`. */
  connect: string;
  /** SNI. */
  servername: string;
  /** The name the certificate is verified against; none: the chain alone is verified. */
  verifyHostname?: string;
  /** Trust anchors; none: OpenSSL's default store. */
  caFile?: string;
  /** Comma-separated ALPN protocols to offer. */
  alpn?: string;
  /** Upgrade a plaintext protocol first (`-starttls smtp`). */
  starttls?: 'smtp';
  /**
   * The suites to offer, in order, as an OpenSSL cipher string (Node's `tls.DEFAULT_CIPHERS`
   * form: TLS 1.3 suites go to `-ciphersuites`, the rest to `-cipher`); none: OpenSSL's defaults.
   */
  ciphers?: string;
}

export interface CertificateView {
  subject: string;
  issuer: string;
  serial: string;
  /** Upper-case hex pairs joined by colons, as OpenSSL and node:crypto print it. */
  fingerprint: string;
}

export interface SClientView {
  protocol: string;
  /** s_client names TLS 1.3 suites by their IANA names and older ones by OpenSSL's. */
  cipher: string;
  alpn: string | null;
  /** "X25519, 253 bits"; null when s_client printed none. */
  tempKey: string | null;
  verifyCode: number;
  /** "unable to get local issuer certificate"; "ok" when the code is 0. */
  verifyText: string;
  /** As sent, leaf first. */
  certificates: CertificateView[];
}

export async function sClientView(opts: SClientOptions): Promise<SClientView> {
  const args = ['s_client', '-connect', opts.connect, '-servername', opts.servername, '-showcerts'];
  if (opts.verifyHostname) args.push('-verify_hostname', opts.verifyHostname);
  if (opts.caFile) args.push('-CAfile', opts.caFile);
  if (opts.alpn) args.push('-alpn', opts.alpn);
  if (opts.starttls) args.push('-starttls', opts.starttls);
  if (opts.ciphers) {
    const parts = opts.ciphers.split(':');
    args.push('-ciphersuites', parts.filter((c) => c.startsWith('TLS_')).join(':'));
    args.push('-cipher', parts.filter((c) => !c.startsWith('TLS_')).join(':'));
  }
  // Empty input: s_client completes the handshake, prints, and closes at end of input.
  const { stdout } = await runWithInput('openssl', args, '');
  const field = (re: RegExp) => re.exec(stdout)?.[1]?.trim() ?? null;
  const pems = stdout.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certificates: CertificateView[] = [];
  for (const pem of pems) {
    const { stdout: x } = await runWithInput(
      'openssl',
      ['x509', '-noout', '-serial', '-fingerprint', '-sha256', '-subject', '-issuer'],
      pem,
    );
    const line = (key: string) => new RegExp(`^${key}=(.*)$`, 'im').exec(x)?.[1]?.trim() ?? '';
    certificates.push({
      subject: dn(line('subject')),
      issuer: dn(line('issuer')),
      serial: line('serial'),
      fingerprint: line('sha256 Fingerprint'),
    });
  }
  return {
    // "New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384" (the SSL-Session block may not be printed for TLS 1.3).
    protocol: field(/^New, ([^,]+), Cipher is/m) ?? '',
    cipher: field(/^New, [^,]+, Cipher is (\S+)/m) ?? '',
    alpn: field(/^ALPN protocol: (\S+)/m),
    tempKey: field(/^Server Temp Key: (.+)$/m),
    verifyCode: Number(field(/Verify return code: (\d+)/) ?? -1),
    verifyText: field(/Verify return code: \d+ \(([^)]*)\)/) ?? '',
    certificates,
  };
}

/** netdiag's certificate summaries (TlsEvidence's chain) in the shape of s_client's, to compare. */
export function asCertificateViews(
  certificates: readonly { subject: string; issuer: string; serial: string; fingerprint_sha256: string }[],
): CertificateView[] {
  return certificates.map((c) => ({
    subject: c.subject,
    issuer: c.issuer,
    serial: c.serial,
    fingerprint: c.fingerprint_sha256,
  }));
}

/** The IANA (RFC) name OpenSSL gives one of its cipher names, from `openssl ciphers -stdname`. */
export async function ianaCipherName(opensslName: string): Promise<string | undefined> {
  const { stdout } = await runWithInput('openssl', ['ciphers', '-stdname', 'ALL:@SECLEVEL=0'], '');
  for (const line of stdout.split('\n')) {
    const [iana, , name] = line.trim().split(/\s+/);
    if (name === opensslName) return iana;
  }
  return undefined;
}

/** OpenSSL 3 prints "CN = a, O = b"; the API prints "CN=a, O=b". */
function dn(text: string): string {
  return text.replace(/\s*=\s*/g, '=');
}

function runWithInput(cmd: string, args: string[], input: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: 15_000, encoding: 'utf8' }, (err, stdout) => {
      // s_client exits non-zero on some verify failures; its output is still what we compare.
      if (err && !stdout) reject(err);
      else resolve({ stdout });
    });
    // s_client may finish and exit before it reads its input: the closed pipe (EPIPE) says nothing
    // about the server, and unhandled it would crash the test run.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
