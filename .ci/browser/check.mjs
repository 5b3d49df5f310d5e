// Opens the playground in headless Chromium as a new user would, runs the
// example query it opens with, and checks the answer and that every asset
// was served locally. Then types an API key into the headers editor, runs
// again, and checks that the key was sent but kept nowhere: not in the
// address bar, not in the browser's storage, not after a reload.
// Usage: node check.mjs http://127.0.0.1:8080/ [screenshot.png]
import { chromium } from 'playwright-core';

const [url, shot] = process.argv.slice(2);
const typedKey = 'typed-key-0f6b3c1e9a';
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  // Flags for a closed network: no background connections to Google's hosts.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const failed = [];
  const sentKeys = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('pageerror', (e) => failed.push(`page error: ${e.message}`));
  // The page is served with a strict Content-Security-Policy: anything it
  // blocks (an inline script or style without its hash, an eval, a
  // request to another origin) is a failure, not a silent loss.
  page.on('console', (m) => {
    if (m.type() === 'error' && m.text().includes('Content Security Policy')) failed.push(`CSP: ${m.text()}`);
  });
  page.on('request', (r) => { if (r.headers()['x-api-key']) sentKeys.push(r.headers()['x-api-key']); });
  const served = await page.goto(url);
  const csp = (await served.allHeaders())['content-security-policy'] ?? '';
  if (!csp.includes("frame-ancestors 'none'") || csp.includes('unsafe-inline') || csp.includes('unsafe-eval')) {
    throw new Error(`the playground's Content-Security-Policy is not strict: "${csp}"`);
  }
  await page.waitForSelector('.graphiql-execute-button', { timeout: 30000 });
  await page.click('.graphiql-execute-button');
  await page.waitForFunction(
    () => document.querySelector('.result-window')?.innerText.includes('"totalCount": 22'),
    null, { timeout: 30000 });
  if (shot) await page.screenshot({ path: shot });
  if (failed.length > 0) throw new Error(`failed: ${failed.join(', ')}`);
  console.log('playground: the example query answered in the browser');
  // CI serves the demo upstream: the page says so, above the editor.
  const notice = page.locator('#notice');
  if (!(await notice.isVisible()) || !(await notice.innerText()).includes('Demo mode')) {
    throw new Error('the playground shows no demo-mode notice');
  }
  console.log('playground: the demo-mode notice is shown');
  // A dialog adds a <style> as it opens: it carries the page's nonce.
  await page.click('[aria-label="Open settings dialog"]');
  await page.waitForSelector('[role="dialog"]', { timeout: 30000 });
  await page.keyboard.press('Escape');
  await page.waitForSelector('[role="dialog"]', { state: 'detached', timeout: 30000 });
  if (failed.length > 0) throw new Error(`failed: ${failed.join(', ')}`);
  console.log('playground: runs under its Content-Security-Policy (no violation)');

  // Type a key into the headers editor, replacing the demo key, and run:
  // the facade refuses the unknown key.
  await page.locator('.graphiql-editor-tools button', { hasText: 'Headers' }).click();
  const headers = page.locator('.graphiql-editor-tool .CodeMirror:visible').first();
  await headers.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  // The editor closes brackets and quotes as they open and types over
  // them when they are typed: the text comes out as typed.
  await page.keyboard.type(`{"X-Api-Key": "${typedKey}"}`);
  await page.click('.graphiql-execute-button');
  await page.waitForFunction(
    () => document.querySelector('.result-window')?.innerText.includes('UNAUTHENTICATED'),
    null, { timeout: 30000 });
  if (!sentKeys.includes(typedKey)) throw new Error(`the typed key was not sent (sent: ${sentKeys})`);

  const kept = async () => page.evaluate((key) => {
    const where = [];
    if (location.href.includes(key)) where.push(`the URL ${location.href}`);
    for (const [name, store] of [['localStorage', localStorage], ['sessionStorage', sessionStorage]]) {
      for (let i = 0; i < store.length; i++) {
        const k = store.key(i);
        if (k.includes(key) || (store.getItem(k) ?? '').includes(key)) where.push(`${name}[${k}]`);
      }
    }
    return where;
  }, typedKey);
  let where = await kept();
  if (where.length > 0) throw new Error(`the typed key was kept in ${where.join(', ')}`);
  await page.reload();
  await page.waitForSelector('.graphiql-execute-button', { timeout: 30000 });
  where = await kept();
  const cookies = await page.context().cookies();
  if (cookies.some((c) => c.value.includes(typedKey))) where.push('a cookie');
  if (await page.evaluate((key) => document.body.innerText.includes(key), typedKey)) where.push('the page after a reload');
  if (where.length > 0) throw new Error(`the typed key was kept in ${where.join(', ')}`);
  console.log('playground: a typed API key is sent but kept nowhere (URL, storage, reload)');
} finally {
  await browser.close();
}
