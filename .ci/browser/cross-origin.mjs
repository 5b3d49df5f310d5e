// Calls the facade from a page of another origin in headless Chromium, as
// a browser app with OpenTelemetry, Sentry and Apollo Client in it would:
// a cross-origin POST with their headers (traceparent among them) and the
// API key, which the browser sends only after the facade's preflight
// allows them. Checks the answer and that the page can read its
// X-Request-Id; then that a header the facade does not allow is refused
// by the browser, so the first call did pass CORS for real.
// Usage: node cross-origin.mjs http://127.0.0.1:8080/graphql http://127.0.0.1:5173
// (the facade started with -cors-origins set to the second argument; this
// script serves the page there).
import http from 'node:http';
import { chromium } from 'playwright-core';

const [endpoint, pageOrigin] = process.argv.slice(2);
const page = new URL(pageOrigin);
if (page.origin === new URL(endpoint).origin) throw new Error('the page must be of another origin than the facade');

// The app's page: a static page of its own origin.
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><title>an app on another origin</title><p>app</p>');
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(page.port), page.hostname, resolve);
});

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const tab = await browser.newPage();
  const sent = [];
  tab.on('request', (r) => { if (r.url() === endpoint) sent.push(r.headers()); });
  await tab.goto(`${page.origin}/`);
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const call = (extra) => tab.evaluate(async ({ endpoint, headers }) => {
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Api-Key': 'demo-key', ...headers },
        body: JSON.stringify({ query: '{ categories(first: 1) { totalCount } }' }),
      });
      return { origin: location.origin, status: res.status, requestId: res.headers.get('X-Request-Id'), body: await res.json() };
    } catch (e) {
      return { origin: location.origin, error: String(e) };
    }
  }, { endpoint, headers: extra });

  const got = await call({
    traceparent, tracestate: 'app=1', baggage: 'session=ci',
    'sentry-trace': '4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
    'apollographql-client-name': 'ci-app', 'apollographql-client-version': '1.0.0',
  });
  if (got.error) throw new Error(`the cross-origin POST from ${got.origin} failed: ${got.error}`);
  if (got.status !== 200 || typeof got.body?.data?.categories?.totalCount !== 'number') {
    throw new Error(`the cross-origin POST answered ${got.status}: ${JSON.stringify(got.body)}`);
  }
  if (!got.requestId || got.requestId !== got.body.extensions?.requestId) {
    throw new Error(`the page read X-Request-Id ${JSON.stringify(got.requestId)}, the answer says ${got.body.extensions?.requestId}`);
  }
  if (!sent.some((h) => h.traceparent === traceparent)) throw new Error('the browser did not send the traceparent header');
  console.log(`cross-origin: a page of ${got.origin} posted with traceparent and X-Api-Key, read the answer and X-Request-Id ${got.requestId}`);

  const refused = await call({ 'x-not-allowed': '1' });
  if (!refused.error) throw new Error(`a header the facade does not allow passed CORS: ${refused.status}`);
  console.log('cross-origin: a header the facade does not allow is refused by the browser');
} finally {
  await browser.close();
  server.close();
}
