/**
 * The RateLimit member written by hand is the structured field structured-headers
 * serializes (draft-ietf-httpapi-ratelimit-headers over RFC 9651), for any budget.
 */
import fc from 'fast-check';
import { serializeList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { rateLimitItem } from '../../../src/rate-limit/client-limits.js';

describe('RateLimit header members', () => {
  it('equal structured-headers serialization', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('general' as const, 'expensive' as const),
        fc.nat({ max: 1e9 }),
        fc.nat({ max: 86_400 }),
        (group, r, t) => {
          const expected = serializeList([
            [
              group,
              new Map([
                ['r', r],
                ['t', t],
              ]),
            ],
          ]);
          expect(rateLimitItem(group, r, t)).toBe(expected);
        },
      ),
    );
  });
});
