/**
 * Issue 31 §3: a process serving one local user (a CLI command in process, `mcp --stdio`) is
 * not a public client. Its limits bound a runaway loop, not an ordinary session; the
 * operator's RATE_LIMIT_* still decide when set.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_USER_LIMITS, openLocalApp } from '../../../src/cli/local.js';
import { TEST_UPSTREAM_ENV } from '../../../src/config/index.js';

async function tiersWith(env: Record<string, string | undefined>) {
  const local = await openLocalApp(
    { ...TEST_UPSTREAM_ENV, ...env },
    { relayLists: 'on-demand', features: ['dns'] },
  );
  try {
    return local.app.rateLimits.tiers().map((t) => [t.name, t.limit, t.window_seconds]);
  } finally {
    await local.close();
  }
}

describe('the in-process limits', () => {
  it('are a local user’s: 600 requests and 60 measurements a minute', async () => {
    expect(LOCAL_USER_LIMITS).toEqual({ RATE_LIMIT_GENERAL: '600/60', RATE_LIMIT_EXPENSIVE: '60/60' });
    expect(await tiersWith({})).toEqual([
      ['general', 600, 60],
      ['expensive', 60, 60],
    ]);
  });

  it('are the environment’s when it sets them', async () => {
    expect(await tiersWith({ RATE_LIMIT_GENERAL: '5/10', RATE_LIMIT_EXPENSIVE: '2/10' })).toEqual([
      ['general', 5, 10],
      ['expensive', 2, 10],
    ]);
  });
});
