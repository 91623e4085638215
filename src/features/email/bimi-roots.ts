/**
 * The Mark Verifying Authority roots a VMC must chain to: the bundled, dated
 * list (data/mark-verifying-authorities.pem; data/README.md says where it
 * comes from and how to update it) plus the operator's BIMI_VMC_ROOTS_FILE.
 * Read on first use, once: most checks never meet a VMC.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CertificateParseError, type ParsedCertificate, parseCertificate } from '../tls/certificate.js';

/** Kept beside this module in src/ and dist/ alike (scripts/build.ts copies it). */
export const BUNDLED_MARK_ROOTS_FILE = fileURLToPath(
  new URL('./data/mark-verifying-authorities.pem', import.meta.url),
);

export interface MarkRoot {
  cert: ParsedCertificate;
  /** Marks issued (the leaf's notBefore) after this time are not trusted; null: no cut-off. */
  distrustAfter: Date | null;
}

/** The roots, read when first asked for. */
export type MarkRoots = () => readonly MarkRoot[];

export interface PemBlock {
  der: Buffer;
  /** The text between the previous block (or the start) and this one: its comment lines. */
  preamble: string;
}

/** The CERTIFICATE blocks of a PEM text (RFC 7468 §2), with the text before each. */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  const pattern = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;
  let end = 0;
  for (const match of text.matchAll(pattern)) {
    blocks.push({
      der: Buffer.from(match[1]!.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64'),
      preamble: text.slice(end, match.index),
    });
    end = match.index + match[0].length;
  }
  return blocks;
}

/**
 * The roots in a PEM bundle. A block that is not a certificate, a `# SHA-256:`
 * line that does not match its certificate, or a bad `# Distrust-After:` time
 * throws, naming `source`: a list that cannot be read as written must not be
 * half used.
 */
export function parseMarkRoots(text: string, source: string): MarkRoot[] {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) throw new Error(`${source}: no certificate`);
  return blocks.map(({ der, preamble }, i) => {
    let cert: ParsedCertificate;
    try {
      cert = parseCertificate(der);
    } catch (err) {
      if (err instanceof CertificateParseError)
        throw new Error(`${source}: certificate ${i + 1}: ${err.message}`);
      throw err;
    }
    const fingerprint = /^#\s*SHA-256:\s*(\S+)/im.exec(preamble)?.[1];
    if (fingerprint !== undefined && fingerprint.toUpperCase() !== cert.fingerprintSha256) {
      throw new Error(
        `${source}: certificate ${i + 1} (${cert.subject}) has SHA-256 ${cert.fingerprintSha256}`,
      );
    }
    const cutOff = /^#\s*Distrust-After:\s*(\S+)/im.exec(preamble)?.[1];
    const distrustAfter = cutOff === undefined ? null : new Date(cutOff);
    if (distrustAfter !== null && Number.isNaN(distrustAfter.getTime())) {
      throw new Error(`${source}: certificate ${i + 1}: Distrust-After "${cutOff}" is not a time`);
    }
    return { cert, distrustAfter };
  });
}

/** The bundled roots plus those in `extraFile`, read on the first call and kept. */
export function markRootsLoader(extraFile?: string): MarkRoots {
  let roots: readonly MarkRoot[] | undefined;
  const read = (file: string) => parseMarkRoots(readFileSync(file, 'utf8'), file);
  return () => {
    roots ??= Object.freeze([...read(BUNDLED_MARK_ROOTS_FILE), ...(extraFile ? read(extraFile) : [])]);
    return roots;
  };
}

/** The bundled list alone, shared by every caller that configures nothing else. */
export const bundledMarkRoots: MarkRoots = markRootsLoader();
