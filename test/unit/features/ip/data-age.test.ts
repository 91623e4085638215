import { describe, expect, it } from 'vitest';
import { buildTime, dataAge, GEO_DATA_MAX_AGE_DAYS } from '../../../../src/providers/ip/data-age.js';

describe('dataAge', () => {
  const built = '2026-06-05T13:42:02.000Z'; // the bundled DB-IP files' build_epoch
  const at = (iso: string) => Date.parse(iso);

  it('counts whole days by the clock it is given, stale past 60', () => {
    expect(GEO_DATA_MAX_AGE_DAYS).toBe(60);
    expect(dataAge(built, at('2026-06-06T13:42:01Z'))).toEqual({
      built_at: built,
      age_days: 0,
      stale: false,
    });
    expect(dataAge(built, at('2026-08-04T13:42:02Z'))).toMatchObject({ age_days: 60, stale: false });
    expect(dataAge(built, at('2026-08-05T13:42:02Z'))).toMatchObject({ age_days: 61, stale: true });
  });

  it('never answers a negative age (a clock behind the build)', () => {
    expect(dataAge(built, at('2026-01-01T00:00:00Z'))).toMatchObject({ age_days: 0, stale: false });
  });
});

describe('buildTime', () => {
  it('reads an MMDB build_epoch, and none for an epoch of 0', () => {
    expect(buildTime(new Date(1_780_666_922_000))).toBe('2026-06-05T13:42:02.000Z');
    expect(buildTime(new Date(0))).toBeNull();
  });

  it("reads RIPEstat's times, which are UTC whether or not they say so", () => {
    expect(buildTime('2025-06-10T20:45:38')).toBe('2025-06-10T20:45:38.000Z');
    expect(buildTime('2025-06-10T20:45:38+00:00')).toBe('2025-06-10T20:45:38.000Z');
    expect(buildTime('2025-06-10T22:45:38+02:00')).toBe('2025-06-10T20:45:38.000Z');
  });

  it('answers null for nothing to read', () => {
    expect(buildTime(undefined)).toBeNull();
    expect(buildTime(null)).toBeNull();
    expect(buildTime('soon')).toBeNull();
  });
});
