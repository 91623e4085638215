/** The shared RIPEstat envelope: URL with sourceapp, status and data_call_status checks. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../src/errors.js';
import { checkRipestatEnvelope, ripestatDataUrl } from '../../../../src/providers/ripestat-data.js';
import { thrownBy } from '../../../expect-error.js';
import { fixture } from '../../../fakes/https-upstream.js';

describe('ripestatDataUrl', () => {
  it('keeps a path prefix of the base and always sends sourceapp', () => {
    const url = new URL(
      ripestatDataUrl('https://stat.example/ripe/', 'prefix-overview', { resource: '2001:db8::1' }),
    );
    expect(url.pathname).toBe('/ripe/data/prefix-overview/data.json');
    expect(url.searchParams.get('resource')).toBe('2001:db8::1');
    expect(url.searchParams.get('sourceapp')).toBe('netdiag');
  });
});

describe('checkRipestatEnvelope', () => {
  it('returns data and messages of a real answer', () => {
    const answer = checkRipestatEnvelope(fixture('ripestat/prefix-overview.json'), 'prefix-overview');
    expect(answer.data.resource).toBe('193.0.0.0/21');
    expect(answer.messages[0]).toMatchObject({ level: 'warning' });
  });

  it('accepts "supported - based on 2.1" (as-overview) and deprecated calls', () => {
    expect(() => checkRipestatEnvelope(fixture('ripestat/as-overview.json'), 'as-overview')).not.toThrow();
    const deprecated = {
      ...(fixture('ripestat/network-info.json') as object),
      data_call_status: 'deprecated - use x',
    };
    expect(() => checkRipestatEnvelope(deprecated, 'network-info')).not.toThrow();
  });

  it.each([
    [
      { status: 'error', messages: [['error', 'Invalid resource']], data: {} },
      'upstream_error',
      /Invalid resource/,
    ],
    [{ status: 'ok', data_call_status: 'development', data: {} }, 'upstream_error', /development/],
    [{ status: 'ok', data_call_status: 'supported' }, 'bad_response', /without a data object/],
    [[1, 2], 'bad_response', /not an object/],
  ])('rejects %j as an operational failure', (body, kind, message) => {
    const caught = thrownBy(() => checkRipestatEnvelope(body, 'x'), ProviderError);
    expect(caught.kind).toBe(kind);
    expect(caught.message).toMatch(message);
  });
});
