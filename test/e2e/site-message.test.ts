/**
 * The site's Message tool in a real browser (Debian's Chromium, as test/e2e/site.test.ts): the
 * paste box, who connected folded away, Check; the message sent as text/plain and never put in
 * the page's URL, its history or its storage. And the view held to a judged answer
 * (test/fixtures/message/judged.json, served in place of the route, as the TLS scan's judged
 * answer is): the verdict first, four method cards side by side, a failed DKIM signature with
 * its reason, the hops as a timeline with the largest delay emphasised, an untrusted
 * Authentication-Results header and a trusted one that disagrees; at desktop and phone width.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasShared } from '../shared-data.js';
import { chromiumFor, DESKTOP, launchChromium, PHONE, shot } from './browser.js';
import { type FixtureApp, SPF_SENDER, startFixtureApp } from './fixture-app.js';

const found = chromiumFor('the Message tool in a browser');

/** A word the message carries and nothing else on the page: where it shows up, the message leaked. */
const MARKER = 'Zebrafinch4417';
const MESSAGE = [
  'From: Alice <alice@sender.test>',
  'To: bob@receiver.test',
  `Subject: ${MARKER} figures`,
  'Message-ID: <1@sender.test>',
  '',
  `Hello Bob, ${MARKER}.`,
  '',
].join('\n');

let browser: Browser;

describe.skipIf(!found || !hasShared)('the Message tool in Chromium', () => {
  let fx: FixtureApp;
  beforeAll(async () => {
    browser = await launchChromium();
    fx = await startFixtureApp();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await fx?.close();
  });

  it('pastes a message and checks it: sent as text/plain with who connected in the query, never in the URL, history or storage', {
    timeout: 60_000,
  }, async () => {
    const context = await browser.newContext({ viewport: DESKTOP, baseURL: fx.url });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    const urls: string[] = [];
    page.on('framenavigated', (frame) => urls.push(frame.url()));
    const posts: { url: string; type: string | undefined; body: string | null }[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/message')
        posts.push({ url: r.url(), type: r.headers()['content-type'], body: r.postData() });
    });
    await page.goto('/');
    await page.getByRole('button', { name: 'Message', exact: true }).click();
    const box = page.getByLabel('Message: paste it whole');
    expect(await box.evaluate((el) => el.tagName)).toBe('TEXTAREA');
    // Who connected is folded away until asked for.
    const envelope = page.locator('details.message-envelope');
    expect(await envelope.getAttribute('open')).toBeNull();
    await box.fill(MESSAGE);
    await envelope.locator('summary').click();
    await page.getByLabel('Connecting IP').fill('198.51.100.7');
    await page.getByLabel('MAIL FROM').fill(SPF_SENDER);
    await page.getByRole('button', { name: 'Check', exact: true }).click();

    const verdict = page.locator('.msg-verdict');
    await verdict.waitFor({ timeout: 30_000 });
    expect(
      await page.locator('.msg-card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-method'))),
    ).toEqual(['DKIM', 'ARC', 'SPF', 'DMARC']);
    expect(await page.locator('.msg-card[data-method="SPF"] .msg-result').textContent()).toBe('pass');
    expect(await page.locator('.msg-card[data-method="SPF"]').getAttribute('class')).toContain('tone-ok');
    expect(await page.locator('.msg-envelope-why').textContent()).toBe(
      'The request named the connecting address.',
    );

    expect(posts).toHaveLength(1);
    expect(posts[0]?.type).toMatch(/^text\/plain/);
    expect(posts[0]?.body).toBe(MESSAGE);
    const query = new URL(posts[0]!.url).searchParams;
    expect(Object.fromEntries(query)).toEqual({ ip: '198.51.100.7', mail_from: SPF_SENDER });

    // The address bar names the tool and nothing else; no entry ever held the message.
    expect(new URL(page.url()).search).toBe('?tool=message');
    for (const url of urls) expect(decodeURIComponent(url)).not.toContain(MARKER);
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    expect(stored).not.toContain(MARKER);
    expect(await page.title()).toBe('Message · netdiag');
    // The copy-as-curl names a file, not the message.
    expect(await page.getByRole('button', { name: 'Copy as curl' }).getAttribute('title')).toContain(
      '--data-binary @message.eml',
    );
    // Back and forward again: the tool stays, with no message in any URL.
    await page.goBack();
    await page.goForward();
    expect(new URL(page.url()).search).toBe('?tool=message');
    for (const url of urls) expect(decodeURIComponent(url)).not.toContain(MARKER);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a judged answer: the verdict first, four cards side by side, a failed signature, the hops with their delays, untrusted and disagreeing Authentication-Results; desktop and phone', {
    timeout: 60_000,
  }, async () => {
    const judged = readFileSync(new URL('../fixtures/message/judged.json', import.meta.url), 'utf8');
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await browser.newContext({ viewport, baseURL: fx.url });
      await context.route('**/api/message**', (route) =>
        route.fulfill({ status: 200, contentType: 'application/json', body: judged }),
      );
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(err.message));
      await page.goto('/?tool=message');
      await page.getByLabel('Message: paste it whole').fill(MESSAGE);
      await page.getByRole('button', { name: 'Check', exact: true }).click();

      const verdict = page.locator('.msg-verdict');
      await verdict.waitFor({ timeout: 30_000 });
      expect(await verdict.getAttribute('data-status')).toBe('not_authenticated');
      expect(await verdict.getAttribute('class')).toContain('tone-bad');
      expect(await verdict.locator('.badge').textContent()).toBe('Not authenticated');
      expect(await verdict.textContent()).toContain(
        'sender.example is not authenticated: DMARC fails (p=reject).',
      );

      const cards = page.locator('.msg-card');
      const tones = await cards.evaluateAll((els) =>
        els.map((e) => [e.getAttribute('data-method'), e.className.match(/tone-(\w+)/)?.[1]]),
      );
      expect(tones).toEqual([
        ['DKIM', 'ok'],
        ['ARC', 'ok'],
        ['SPF', 'ok'],
        ['DMARC', 'bad'],
      ]);
      expect(await cards.first().locator('.msg-why').textContent()).toBe(
        'Signed by list.example (s=lists), not aligned with From (1 other signature too).',
      );
      const boxes = await Promise.all([0, 1, 2, 3].map((i) => cards.nth(i).boundingBox()));
      const verdictBox = await verdict.boundingBox();
      expect(verdictBox!.y).toBeLessThan(boxes[0]!.y);
      if (viewport === DESKTOP) {
        // Side by side: one row.
        expect(new Set(boxes.map((b) => Math.round(b!.y))).size).toBe(1);
      }

      const failed = page.locator('tr.msg-signature[data-result="fail"]');
      expect(await failed.locator('td[data-label="Domain"]').textContent()).toBe('sender.example');
      expect(await failed.locator('td[data-label="Result"] .badge').getAttribute('class')).toContain(
        'badge-bad',
      );
      expect(await failed.locator('.msg-reason').textContent()).toContain('the body hash does not match');
      expect(await failed.locator('td[data-label="Body hash"]').textContent()).toBe('mismatch');
      expect(await failed.locator('td[data-label="Key"]').textContent()).toBe('ed25519 256 bits');

      const hops = page.locator('li.msg-hop');
      expect(await hops.count()).toBe(4);
      expect(await hops.evaluateAll((els) => els.map((e) => e.getAttribute('data-index')))).toEqual([
        '0',
        '1',
        '2',
        '3',
      ]);
      const slow = page.locator('li.msg-hop.msg-slow');
      expect(await slow.count()).toBe(1);
      expect(await slow.getAttribute('data-index')).toBe('1');
      expect(await slow.locator('.msg-delay strong').textContent()).toBe('+6 min');
      expect(await slow.locator('.msg-hop-path').textContent()).toBe(
        'mail.list.example [192.0.2.25] → mx.receiver.example',
      );
      expect(await slow.locator('.msg-hop-facts').textContent()).toContain(
        'ESMTPS · TLSv1.3 TLS_AES_256_GCM_SHA384 · 2026-11-28 10:04 UTC',
      );
      expect(await hops.nth(0).locator('.msg-delay').textContent()).toBe('+4 s after the hop below');
      expect(await hops.nth(3).locator('.msg-delay').count()).toBe(0);

      const untrusted = page.locator('.msg-ar-header[data-trusted="false"]');
      expect(await untrusted.locator('.badge').first().textContent()).toBe('not trusted');
      expect(await untrusted.textContent()).toContain('dmarc=pass');
      const disagreeing = page.locator('.msg-ar-header.msg-disagrees');
      expect(await disagreeing.getAttribute('data-trusted')).toBe('true');
      expect(await disagreeing.locator('.msg-disagreement').textContent()).toContain(
        'dkim=pass for sender.example, where netdiag finds fail',
      );
      expect(await page.locator('.msg-findings li').count()).toBe(4);
      // The DNS lookups are folded until asked for.
      const lookups = page.locator('details.msg-lookups');
      expect(await lookups.getAttribute('open')).toBeNull();
      expect(await lookups.locator('summary').textContent()).toBe('DNS lookups (5)');
      expect(await page.locator('#results').textContent()).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
      expect(new URL(page.url()).search).toBe('?tool=message');
      if (viewport === PHONE) {
        await lookups.locator('summary').click();
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
          PHONE.width,
        );
      }
      await shot(page, viewport === PHONE ? 'tool-message-judged-phone.png' : 'tool-message-judged.png');
      expect(problems).toEqual([]);
      await context.close();
    }
  });
});
