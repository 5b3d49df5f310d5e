// Opens the playground in headless Chromium as a new user would, runs the
// example query it opens with, and checks the answer and that every asset
// was served locally. Usage: node check.mjs http://127.0.0.1:8080/ [screenshot.png]
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  // Flags for a closed network: no background connections to Google's hosts.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('pageerror', (e) => failed.push(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForSelector('.graphiql-execute-button', { timeout: 30000 });
  await page.click('.graphiql-execute-button');
  await page.waitForFunction(
    () => document.querySelector('.result-window')?.innerText.includes('"totalCount": 22'),
    null, { timeout: 30000 });
  if (shot) await page.screenshot({ path: shot });
  if (failed.length > 0) throw new Error(`failed: ${failed.join(', ')}`);
  console.log('playground: the example query answered in the browser');
} finally {
  await browser.close();
}
