import { describe, expect, it } from 'vitest';
import { readCodes } from '../../../../src/features/blocklists/check.js';

const ZEN = {
  codes: { '127.0.0.2': 'SBL', '127.0.0.4': 'XBL', '127.0.0.10': 'PBL' },
  refusalCodes: { '127.255.255.254': 'query via a public resolver', '127.255.255.255': 'too many queries' },
  bitmask: false,
};
const MULTI = {
  codes: { '127.0.0.2': 'black', '127.0.0.4': 'grey', '127.0.0.8': 'red' },
  refusalCodes: { '127.0.0.1': 'query refused' },
  bitmask: true,
};

describe('readCodes', () => {
  it('a refusal code is a refusal with the list’s words, even beside a listing code', () => {
    expect(readCodes(ZEN, ['127.255.255.254'])).toEqual({
      kind: 'refused',
      meaning: 'query via a public resolver',
    });
    expect(readCodes(ZEN, ['127.0.0.2', '127.255.255.255'])).toMatchObject({ kind: 'refused' });
  });

  it('an undocumented 127.255.255.x is a refusal too, never a listing', () => {
    expect(readCodes(ZEN, ['127.255.255.252'])).toMatchObject({
      kind: 'refused',
      meaning: expect.stringMatching(/does not document/),
    });
  });

  it('codes are listings with their meanings, an unknown 127.x code said so', () => {
    expect(readCodes(ZEN, ['127.0.0.2', '127.0.0.10'])).toEqual({ kind: 'listed', meaning: 'SBL; PBL' });
    expect(readCodes(ZEN, ['127.0.0.7'])).toEqual({
      kind: 'listed',
      meaning: 'code 127.0.0.7, which the list does not document',
    });
  });

  it('an answer outside 127.0.0.0/8 is no answer (a resolver rewriting NXDOMAIN, a hijack)', () => {
    expect(readCodes(ZEN, ['93.184.215.14'])).toMatchObject({
      kind: 'error',
      meaning: expect.stringMatching(/RFC 5782/),
    });
  });

  it('a bitmask list reads each bit (SURBL, URIBL multi); bit 1 alone is its refusal', () => {
    expect(readCodes(MULTI, ['127.0.0.6'])).toEqual({ kind: 'listed', meaning: 'black; grey' });
    expect(readCodes(MULTI, ['127.0.0.1'])).toEqual({ kind: 'refused', meaning: 'query refused' });
  });
});
