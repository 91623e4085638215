import { readFileSync } from 'node:fs';
import * as packet from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import {
  answersQuestion,
  assertAnswer,
  decodeResponse,
  EDNS_UDP_PAYLOAD,
  encodeQuery,
  expectAnswer,
} from '../../../../src/providers/dns/wire.js';

const FIXTURES = new URL('../../../fixtures/dns/', import.meta.url);

function bin(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

/** Hex fixtures: whitespace-separated bytes; `hexdump` files also carry offset columns, dropped here. */
function hex(name: string, withOffsets = false): Buffer {
  const lines = readFileSync(new URL(name, FIXTURES), 'utf8').trim().split('\n');
  const tokens = lines.flatMap((line) =>
    line
      .trim()
      .split(/\s+/)
      .slice(withOffsets ? 1 : 0),
  );
  return Buffer.from(tokens.join(''), 'hex');
}

function failure(fn: () => unknown): ProviderError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error('expected a ProviderError');
}

/** A response built with dns-packet, for cases no captured fixture covers. */
function response(fields: Record<string, unknown>): Buffer {
  return packet.encode({
    type: 'response',
    id: 7,
    flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE,
    questions: [{ name: 'example.test', type: 'A', class: 'IN' }],
    ...fields,
  } as packet.Packet);
}

describe('encodeQuery', () => {
  it('matches the RFC 8484 example query for www.example.com A, plus our EDNS0 OPT record', () => {
    // Cloudflare's documented DoH query: id 0, RD, one question, no EDNS.
    const documented = hex('doh-wire-cloudflare-post-query-www.example.com.hex.txt');
    const ours = encodeQuery(0, { name: 'www.example.com', type: 'A' });

    // Header identical except ARCOUNT (bytes 10-11), which counts our OPT record.
    expect(ours.subarray(0, 10)).toEqual(documented.subarray(0, 10));
    expect(ours.readUInt16BE(10)).toBe(1);
    expect(ours.subarray(12, documented.length)).toEqual(documented.subarray(12));

    // RFC 6891 §6.1.2: root owner, type 41, class = payload size, TTL = ext-rcode|version|DO|Z, no options.
    const opt = ours.subarray(documented.length);
    expect(opt).toEqual(Buffer.from([0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00]));
    expect(opt.readUInt16BE(3)).toBe(EDNS_UDP_PAYLOAD);
  });

  it('encodes HTTPS, which dns-packet has no name for, as type 65', () => {
    const wire = encodeQuery(1, { name: 'example.test', type: 'HTTPS' });
    const decoded = packet.decode(wire);
    expect(decoded.questions?.[0]?.type).toBe('UNKNOWN_65');
  });
});

describe('decodeResponse with captured wire fixtures', () => {
  it('decodes the documented DoH POST answer (uncompressed owner name)', () => {
    const res = decodeResponse(hex('doh-wire-cloudflare-post-response-www.example.com.hex.txt'));
    expect(res.id).toBe(0);
    expect(res.question).toEqual({ name: 'www.example.com', type: 'A', class: 'IN' });
    expect(res.answer).toEqual({
      rcode: 'NOERROR',
      flags: { aa: false, tc: false, rd: true, ra: true, ad: false, cd: false },
      answers: [{ name: 'www.example.com', type: 'A', ttl: 128, data: { address: '192.0.2.1' } }],
      authorities: [],
      ede: [],
    });
  });

  it('decodes a captured DoH GET answer with a compression pointer', () => {
    const res = decodeResponse(hex('doh-wire-cloudflare-get-response-www.example.com.hexdump.txt', true));
    expect(res.id).toBe(0xabcd);
    expect(res.answer.answers).toEqual([
      { name: 'www.example.com', type: 'A', ttl: 2699, data: { address: '93.184.216.34' } },
    ]);
  });

  it('decodes a raw UDP answer and matches it to its raw query', () => {
    const query = packet.decode(bin('wire-query-hello.world.com-A.bin'));
    const res = decodeResponse(bin('wire-response-hello.world.com-A.bin'));
    expect(res.answer.rcode).toBe('NOERROR');
    expect(res.answer.answers).toEqual([
      { name: 'hello.world.com', type: 'A', ttl: 300, data: { address: '204.74.99.100' } },
    ]);
    expect(answersQuestion(res, query.id!, { name: 'hello.world.com', type: 'A' })).toBe(true);
    expect(answersQuestion(res, (query.id! + 1) & 0xffff, { name: 'hello.world.com', type: 'A' })).toBe(
      false,
    );
    expect(answersQuestion(res, query.id!, { name: 'hello.world.com', type: 'AAAA' })).toBe(false);
    expect(answersQuestion(res, query.id!, { name: 'other.world.com', type: 'A' })).toBe(false);
  });

  it.each(['wire-query-hello.world.com-A.bin', 'wire-query-example.com-A-edns-cookie.bin'])(
    'refuses a query (QR=0) as an answer: %s',
    (name) => {
      expect(failure(() => decodeResponse(bin(name))).kind).toBe('bad_response');
    },
  );

  it('refuses truncated and garbage bytes as bad_response', () => {
    const whole = bin('wire-response-hello.world.com-A.bin');
    expect(failure(() => decodeResponse(whole.subarray(0, 40))).kind).toBe('bad_response');
    expect(failure(() => decodeResponse(Buffer.from('not dns'))).kind).toBe('bad_response');
    expect(failure(() => decodeResponse(Buffer.alloc(0))).kind).toBe('bad_response');
  });
});

describe('rcodes, extended rcodes and EDE', () => {
  it('merges the OPT extended rcode into the header rcode (RFC 6891 §6.1.3)', () => {
    const wire = response({
      additionals: [
        { name: '.', type: 'OPT', udpPayloadSize: 1232, extendedRcode: 1, flags: 0, options: [] },
      ],
    });
    const res = decodeResponse(wire);
    expect(res.answer.rcode).toBe('BADVERS');
    const err = failure(() => assertAnswer(res.answer));
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toBe('BADVERS');
  });

  it('names rcodes it has no mnemonic for', () => {
    const wire = response({
      flags: 12,
      additionals: [
        { name: '.', type: 'OPT', udpPayloadSize: 1232, extendedRcode: 2, flags: 0, options: [] },
      ],
    });
    expect(decodeResponse(wire).answer.rcode).toBe('RCODE44');
  });

  it('parses Extended DNS Errors, with and without text, and strips a NUL terminator', () => {
    const ede = (code: number, text: string) => ({
      code: 15,
      data: Buffer.concat([Buffer.from([0, code]), Buffer.from(text)]),
    });
    const wire = response({
      flags: 2, // SERVFAIL
      additionals: [
        {
          name: '.',
          type: 'OPT',
          udpPayloadSize: 1232,
          flags: 0,
          options: [
            ede(6, 'signature invalid'),
            ede(22, ''),
            ede(9, 'no key\0'),
            { code: 10, data: Buffer.alloc(8) },
          ],
        },
      ],
    });
    const { answer } = decodeResponse(wire);
    expect(answer.rcode).toBe('SERVFAIL');
    expect(answer.ede).toEqual([
      { code: 6, text: 'signature invalid' },
      { code: 22 },
      { code: 9, text: 'no key' },
    ]);
    const err = failure(() => assertAnswer(answer));
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toBe(
      'SERVFAIL (EDE 6 DNSSEC Bogus: signature invalid; EDE 22 No Reachable Authority; EDE 9 DNSKEY Missing: no key)',
    );
  });

  it.each([
    ['FORMERR', 1],
    ['SERVFAIL', 2],
    ['NOTIMP', 4],
    ['REFUSED', 5],
  ])('treats %s as an operational failure', (name, code) => {
    const err = failure(() => assertAnswer(decodeResponse(response({ flags: code })).answer));
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toBe(name);
  });

  it.each([
    ['NOERROR', 0],
    ['NXDOMAIN', 3],
  ])('passes %s through as an answer', (name, code) => {
    expect(assertAnswer(decodeResponse(response({ flags: code })).answer).rcode).toBe(name);
  });
});

describe('expectAnswer (stream transports)', () => {
  const q = { name: 'example.test', type: 'A' } as const;

  it('fails a response to another id or question instead of trusting it', () => {
    expect(failure(() => expectAnswer(response({}), 8, q)).kind).toBe('bad_response');
    expect(failure(() => expectAnswer(response({}), 7, { name: 'example.test', type: 'MX' })).kind).toBe(
      'bad_response',
    );
    expect(expectAnswer(response({}), 7, q).rcode).toBe('NOERROR');
  });

  it('reports a refusal that omits the question by its rcode', () => {
    const err = failure(() => expectAnswer(response({ flags: 5, questions: [] }), 7, q));
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toBe('REFUSED');
  });

  it('matches the question name case-insensitively', () => {
    const wire = response({ questions: [{ name: 'EXAMPLE.Test', type: 'A', class: 'IN' }] });
    expect(expectAnswer(wire, 7, q).rcode).toBe('NOERROR');
  });
});
