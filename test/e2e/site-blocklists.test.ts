/**
 * The site's Blocklists tool in a real browser (Debian's Chromium, as site-message.test.ts): the
 * box's input decides what is asked (an address as ?ip=, a domain as ?domain=), and the view held
 * to a judged answer (test/fixtures/blocklists/judged.json, served in place of the route): the
 * summary first, one cell per list, listings first, the listed cell red with its code's meaning,
 * its reason and its delisting link, the refused cell amber and never red, the error and broken
 * cells grey, the broken one saying it is not counted; the MX host's addresses each with its line
 * and its own grid; at desktop and phone width, with no sideways scroll on the phone.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, DESKTOP, launchChromium, PHONE, shot } from './browser.js';
import { type FixtureApp, startFixtureApp } from './fixture-app.js';

const found = chromiumFor('the Blocklists tool in a browser');

let browser: Browser;

describe.skipIf(!found)('the Blocklists tool in Chromium', () => {
  let fx: FixtureApp;
  beforeAll(async () => {
    browser = await launchChromium();
    fx = await startFixtureApp();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await fx?.close();
  });

  it('asks ?ip= for an address and ?domain= for a domain; without list servers every cell is a grey "no answer"', {
    timeout: 60_000,
  }, async () => {
    const context = await browser.newContext({ viewport: DESKTOP, baseURL: fx.url });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    const asked: Record<string, string>[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/blocklists') asked.push(Object.fromEntries(url.searchParams));
    });
    await page.goto('/?q=1.1.1.1&tool=blocklists');
    await page.locator('.bl-verdict').waitFor({ timeout: 30_000 });
    const cells = page.locator('.bl-cell');
    expect(await cells.count()).toBeGreaterThan(0);
    expect(
      await cells.evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('data-status')))]),
    ).toEqual(['error']);
    expect(await cells.first().getAttribute('class')).toContain('tone-muted');
    expect(await cells.first().locator('.bl-why').textContent()).toMatch(/^No answer, not counted: /);
    expect(await page.locator('.bl-verdict .badge').textContent()).toBe('No usable answer');

    await page.goto('/?q=sender.test&tool=blocklists');
    await page.locator('.bl-mx-host[data-host="mx.sender.test"]').waitFor({ timeout: 30_000 });
    expect(asked).toEqual([{ ip: '1.1.1.1' }, { domain: 'sender.test' }]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a judged answer: the summary first, listings first, listed red with reason and delisting link, refused never red, broken not counted; desktop and phone', {
    timeout: 60_000,
  }, async () => {
    const judged = readFileSync(new URL('../fixtures/blocklists/judged.json', import.meta.url), 'utf8');
    const summary = (JSON.parse(judged) as { summary: string }).summary;
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await browser.newContext({ viewport, baseURL: fx.url });
      await context.route('**/api/blocklists**', (route) =>
        route.fulfill({ status: 200, contentType: 'application/json', body: judged }),
      );
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(err.message));
      await page.goto('/?q=shop.example&tool=blocklists');
      const verdict = page.locator('.bl-verdict');
      await verdict.waitFor({ timeout: 30_000 });
      expect(await verdict.getAttribute('class')).toContain('tone-bad');
      expect(await verdict.locator('.bl-summary').textContent()).toBe(summary);

      const grid = page.locator('ul.bl-grid').first();
      const cells = grid.locator(':scope > .bl-cell');
      expect(await cells.evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))).toEqual([
        'listed',
        'refused',
        'error',
        'broken',
        'not_listed',
      ]);
      const verdictBox = await verdict.boundingBox();
      expect(verdictBox!.y).toBeLessThan((await cells.first().boundingBox())!.y);

      const listed = grid.locator('.bl-cell[data-status="listed"]');
      expect(await listed.getAttribute('class')).toContain('tone-bad');
      expect(await listed.locator('.bl-name').textContent()).toBe('Example DBL');
      expect(await listed.locator('.bl-status').textContent()).toBe('listed');
      expect(await listed.locator('.bl-why').textContent()).toBe('127.0.1.2: low-reputation (spam) domain');
      expect(await listed.locator('.bl-reason').textContent()).toBe(
        'Reason: https://dbl.example.org/query/shop.example spam domain',
      );
      expect(await listed.locator('a.bl-delist').getAttribute('href')).toBe('https://check.example.org/');
      const red = await listed
        .locator('.bl-status')
        .evaluate((e) => e.ownerDocument.defaultView!.getComputedStyle(e).color);

      const refused = grid.locator('.bl-cell[data-status="refused"]');
      expect(await refused.getAttribute('class')).toContain('tone-warn');
      expect(await refused.locator('.bl-why').textContent()).toMatch(
        /^The list declined to answer \(not a listing\)/,
      );
      expect(await refused.locator('a.bl-delist').count()).toBe(0);
      // Never drawn red: its border, word and background, each in the cell's computed style.
      const colours = [refused, listed].map((cell) =>
        cell.evaluate((e) => {
          const style = (el: typeof e) => el.ownerDocument.defaultView!.getComputedStyle(el);
          const word = e.querySelector('.bl-status') as typeof e;
          return [style(e).borderLeftColor, style(word).color, style(e).backgroundColor];
        }),
      );
      const [refusedColours = [], listedColours = []] = await Promise.all(colours);
      expect(refusedColours).toHaveLength(3);
      for (const [i, colour] of refusedColours.entries()) expect(colour).not.toBe(listedColours[i]);
      expect(refusedColours[1]).not.toBe(red);

      for (const status of ['error', 'broken']) {
        const cell = grid.locator(`.bl-cell[data-status="${status}"]`);
        expect(await cell.getAttribute('class')).toContain('tone-muted');
      }
      expect(await grid.locator('.bl-cell[data-status="broken"] .bl-why').textContent()).toMatch(
        /^Not counted: it lists 127\.0\.0\.1's test point INVALID/,
      );
      expect(await grid.locator('.bl-cell[data-status="not_listed"]').getAttribute('class')).toContain(
        'tone-ok',
      );

      const host = page.locator('.bl-mx-host[data-host="mx1.shop.example"]');
      const v4 = host.locator('.bl-mx-address[data-address="192.0.2.25"]');
      expect(await v4.locator('.bl-address-line .badge').textContent()).toBe(
        'listed on 1 of 2 usable lists: Example SpamCop',
      );
      expect(await v4.locator('.bl-cell[data-status="listed"] a.bl-delist').getAttribute('href')).toBe(
        'https://www.spamcop.example/bl.shtml',
      );
      expect(await host.locator('.bl-mx-address[data-address="2001:db8::25"] .bl-cell').count()).toBe(1);

      if (viewport === DESKTOP) {
        // A grid: the first cells side by side.
        const [a, b] = await Promise.all([cells.nth(0).boundingBox(), cells.nth(1).boundingBox()]);
        expect(Math.round(a!.y)).toBe(Math.round(b!.y));
      } else {
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
          PHONE.width,
        );
      }
      expect(await page.locator('#results').textContent()).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
      await shot(
        page,
        viewport === PHONE ? 'tool-blocklists-judged-phone.png' : 'tool-blocklists-judged.png',
      );
      expect(problems).toEqual([]);
      await context.close();
    }
  });
});
