/**
 * Under event-loop saturation the service sheds load with a quick 503 and
 * Retry-After, while health still answers and the shedding is counted.
 */
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../helper.js';

function blockEventLoop(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Busy-wait on purpose: this is the saturation being simulated.
  }
}

async function waitForSample(ms: number) {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('load shedding', () => {
  it('answers 503 {error} with Retry-After when the event loop is saturated, but keeps health and counts it', async () => {
    const app = await buildTestApp({ config: { loadShedEventLoopDelayMs: 200 }, loadSampleIntervalMs: 20 });
    // Samples taken while the app (or a busy machine) was starting must age out first.
    let healthy = false;
    for (let i = 0; i < 100 && !healthy; i++) {
      await waitForSample(20);
      healthy = (await app.inject('/api/providers')).statusCode === 200;
    }
    expect(healthy).toBe(true);

    // Saturate, let the overdue sampling timer run, ask at once (the sample after would look calm
    // again); sampling is timer-driven, so allow a few rounds on a busy machine.
    let shed = await app.inject('/api/providers');
    for (let i = 0; i < 5 && shed.statusCode !== 503; i++) {
      blockEventLoop(600);
      await waitForSample(1);
      shed = await app.inject('/api/providers');
    }
    expect(shed.statusCode).toBe(503);
    expect(shed.json()).toMatchObject({ error: expect.stringMatching(/overloaded/), code: 'unavailable' });
    expect(shed.headers['retry-after']).toBe('5');
    expect(shed.headers['cache-control']).toBe('no-store');
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    expect(await app.ctx.metrics.registry.metrics()).toMatch(/netdiag_load_shed_total [1-9]/);
  });

  it('is off when LOAD_SHED_EVENT_LOOP_DELAY_MS is 0', async () => {
    const app = await buildTestApp({ config: { loadShedEventLoopDelayMs: 0 }, loadSampleIntervalMs: 20 });
    blockEventLoop(200);
    await waitForSample(25);
    expect((await app.inject('/api/providers')).statusCode).toBe(200);
  });
});
