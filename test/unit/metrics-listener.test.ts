import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { serveMetrics } from '../../src/metrics-listener.js';

async function listener(collect: () => Promise<string>) {
  const metrics = await serveMetrics({
    host: '127.0.0.1',
    port: 0,
    collect,
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    log: pino({ level: 'silent' }),
  });
  onTestFinished(() => metrics.close());
  return metrics;
}

describe('the metrics listener', () => {
  it('serves the exposition text at /metrics, uncached', async () => {
    const { url } = await listener(async () => 'netdiag_up 1\n');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe('netdiag_up 1\n');
  });

  it('answers anything else with JSON errors', async () => {
    const { url } = await listener(async () => '');
    const other = await fetch(new URL('/api/dns', url));
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: expect.any(String) });
    const post = await fetch(url, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 500 JSON, not a hang, when collecting fails', async () => {
    const { url } = await listener(async () => {
      throw new Error('Operation timed out.');
    });
    const res = await fetch(url);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'internal error' });
  });
});
