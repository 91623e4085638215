/**
 * Just enough DER (ITU-T X.690 §8.1, §10) for the two fields the ASN.1
 * library leaves opaque to us: the hash inside RSASSA-PSS parameters and the
 * OCTET STRING that wraps an embedded SCT list. Pure; throws RangeError on
 * anything malformed.
 */

export interface Tlv {
  /** The identifier octet (single-byte tags only; the fields read here never use high tag numbers). */
  tag: number;
  value: Buffer;
  /** Offset just past this element in the buffer it was read from. */
  end: number;
}

// Universal tags (X.690 §8.1.2, X.680 §8.4).
export const TAG_OCTET_STRING = 0x04;
export const TAG_OID = 0x06;
export const TAG_SEQUENCE = 0x30;

/** Reads the element starting at `offset` (definite lengths only, as DER requires, X.690 §10.1). */
export function readTlv(buf: Uint8Array, offset = 0): Tlv {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (offset + 2 > bytes.length) throw new RangeError('DER: truncated element');
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new RangeError('DER: high tag numbers are not supported');
  let length = bytes[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new RangeError('DER: unsupported length encoding');
    if (start + count > bytes.length) throw new RangeError('DER: truncated length');
    length = bytes.readUIntBE(start, count);
    start += count;
  }
  const end = start + length;
  if (end > bytes.length) throw new RangeError('DER: element runs past the end');
  return { tag, value: bytes.subarray(start, end), end };
}

/** The dotted form of an OBJECT IDENTIFIER's contents octets (X.690 §8.19). */
export function decodeOid(value: Uint8Array): string {
  if (value.length === 0) throw new RangeError('DER: empty OID');
  const arcs: bigint[] = [];
  let current = 0n;
  for (let i = 0; i < value.length; i++) {
    const byte = value[i]!;
    current = (current << 7n) | BigInt(byte & 0x7f);
    if ((byte & 0x80) === 0) {
      arcs.push(current);
      current = 0n;
    } else if (i === value.length - 1) {
      throw new RangeError('DER: truncated OID arc');
    }
  }
  const first = arcs[0]!;
  // The first subidentifier packs two arcs: 40 * X + Y, with X ≤ 2 (X.690 §8.19.4).
  const head = first < 80n ? [first / 40n, first % 40n] : [2n, first - 80n];
  return [...head, ...arcs.slice(1)].join('.');
}
