/** Alt-Svc per RFC 7838 §3: HTTP/3 is "advertised" only from this header. */
import { describe, expect, it } from 'vitest';
import { isHttp3, parseAltSvc } from '../../../../src/features/inspect/alt-svc.js';

describe('parseAltSvc', () => {
  it('reads alternatives with their max-age (default 24 h, RFC 7838 §3.1)', () => {
    expect(parseAltSvc(['h3=":443"; ma=2592000, h3-29=":443"; ma="60", h2="alt.example:8443"'])).toEqual({
      clear: false,
      alternatives: [
        { protocol: 'h3', authority: ':443', max_age: 2592000 },
        { protocol: 'h3-29', authority: ':443', max_age: 60 },
        { protocol: 'h2', authority: 'alt.example:8443', max_age: 86400 },
      ],
    });
  });

  it('percent-decodes the protocol id', () => {
    expect(parseAltSvc(['w%3Dx%3Ay=":443"']).alternatives[0]?.protocol).toBe('w=x:y');
  });

  it('understands clear and skips malformed members', () => {
    expect(parseAltSvc(['clear'])).toEqual({ clear: true, alternatives: [] });
    expect(parseAltSvc(['h3=:443, =":443", h3="no-port", h3=":443"']).alternatives).toEqual([
      { protocol: 'h3', authority: ':443', max_age: 86400 },
    ]);
  });

  it('knows h3 and its drafts', () => {
    expect(['h3', 'h3-29', 'h3-Q050', 'h2', 'h3x'].map(isHttp3)).toEqual([true, true, false, false, false]);
  });
});
