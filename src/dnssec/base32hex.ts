/**
 * Base 32 with the "extended hex" alphabet (RFC 4648 §7), without padding, as
 * NSEC3 owner names spell hashes (RFC 5155 §3.3). Node's Buffer has no base32.
 */
const ALPHABET = '0123456789abcdefghijklmnopqrstuv';

export function base32hexEncode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** The bytes, or undefined for text that is not unpadded base32hex (either case) of whole bytes. */
export function base32hexDecode(text: string): Buffer | undefined {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text.toLowerCase()) {
    const value = ALPHABET.indexOf(char);
    if (value < 0) return undefined;
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >>> bits) & 0xff);
    }
    buffer &= (1 << bits) - 1;
  }
  // Leftover bits must be padding: fewer than 5 and all zero (RFC 4648 §3.5 canonical encoding).
  if (bits >= 5 || buffer !== 0) return undefined;
  return Buffer.from(out);
}
