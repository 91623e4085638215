/**
 * The browser every e2e file drives: Debian's Chromium through playwright-core, launched
 * headless the same way, the viewports the views are held to, and screenshots into
 * test-results/. Without Chromium the files skip, saying what they would have shown.
 *
 *   const found = chromiumFor('the Message tool');
 *   beforeAll(async () => { browser = await launchChromium(); });
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1200, height: 900 };
const OUT = join(process.cwd(), 'test-results');

/** Whether Chromium is there; when not, says which tests skip and how to get it. */
export function chromiumFor(what: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found)
    console.warn(
      `e2e: skipping ${what}: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
    );
  return found;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, name), fullPage: true });
}
