import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors.js';
import { parseDnsQuestion } from '../../../../src/features/dns/dns-target.js';
import { InvalidNameError } from '../../../../src/net/names.js';

describe('parseDnsQuestion', () => {
  it('keys what it remembers by type as well as target: a name valid for SRV stays refused for A', () => {
    expect(parseDnsQuestion('_sip._tcp.Example.TEST.', 'SRV')).toEqual({
      name: '_sip._tcp.example.test',
      type: 'SRV',
    });
    for (let i = 0; i < 2; i++) {
      expect(() => parseDnsQuestion('_sip._tcp.Example.TEST.', 'A')).toThrow(AppError);
    }
    expect(parseDnsQuestion('_sip._tcp.Example.TEST.', 'SRV').type).toBe('SRV');
  });

  it('refuses the same bad input every time, not only the first', () => {
    for (let i = 0; i < 3; i++) {
      expect(() => parseDnsQuestion('localhost', 'A')).toThrow(/localhost/);
      expect(() => parseDnsQuestion('10.0.0.1', 'PTR')).toThrow(/not a public address/);
    }
  });

  it('hands out questions that cannot be changed under the next caller', () => {
    const question = parseDnsQuestion('1.1.1.1', 'PTR');
    expect(question).toEqual({ name: '1.1.1.1.in-addr.arpa', type: 'PTR', address: '1.1.1.1' });
    expect(Object.isFrozen(question)).toBe(true);
    expect(parseDnsQuestion('1.1.1.1', 'PTR')).toBe(question);
  });

  it('adds the record-type hint to the `_` refusal, found by its reason rather than its wording', () => {
    expect(() => parseDnsQuestion('_sip._tcp.example.test', 'A')).toThrow(
      expect.objectContaining({
        reason: 'underscore',
        message: expect.stringMatching(/^target .*\(allowed for SRV, TXT and CNAME lookups\)$/),
      }),
    );
    expect(() => parseDnsQuestion('-a.example.test', 'A')).toThrow(
      expect.objectContaining({ reason: 'invalid_label', message: expect.not.stringMatching(/allowed for/) }),
    );
    expect(() => parseDnsQuestion('-a.example.test', 'A')).toThrow(InvalidNameError);
  });
});
