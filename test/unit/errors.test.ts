import { describe, expect, it } from 'vitest';
import {
  AppError,
  isUpstreamFailed,
  noProviderData,
  ProviderError,
  tooManyRequests,
  upstreamFailed,
} from '../../src/errors.js';

describe('isUpstreamFailed', () => {
  it('tells "every provider failed" by its code, whoever built it', () => {
    expect(isUpstreamFailed(upstreamFailed('dns', []))).toBe(true);
    expect(isUpstreamFailed(new AppError(502, 'upstream_failed', 'example.com:443: handshake failed'))).toBe(
      true,
    );
  });

  it('is false for every other error, whatever its status', () => {
    expect(isUpstreamFailed(noProviderData('ip-geo', []))).toBe(false);
    expect(isUpstreamFailed(tooManyRequests(1, 'general'))).toBe(false);
    expect(isUpstreamFailed(new AppError(503, 'unavailable', 'overloaded'))).toBe(false);
    expect(isUpstreamFailed(new ProviderError('timeout', 'no answer'))).toBe(false);
    expect(isUpstreamFailed(Object.assign(new Error('502'), { statusCode: 502 }))).toBe(false);
  });
});
