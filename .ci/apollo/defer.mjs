// Runs README.md's Apollo Client @defer snippet (defer-client.mjs) against a
// running suregql: the answer must come in parts over multipart/mixed, the
// first without the deferred messages (the key absent, not null), a later
// one with them, and the client's last result must hold the chat with its
// messages, complete.
// Usage: node defer.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import { createDeferClient, watchChat } from './defer-client.mjs';

const [endpoint] = process.argv.slice(2);
assert.ok(endpoint, 'usage: node defer.mjs <endpoint>');

// Keep what went over the wire: the request's Accept and the answer's parts.
const exchanges = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  exchanges.push({ accept: new Headers(init.headers).get('accept'), contentType: res.headers.get('content-type'), body: res.clone().text() });
  return res;
};

const client = createDeferClient(endpoint, 'demo-key');
const results = [];
let subscription;
const last = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`no complete result in 30 s; results: ${JSON.stringify(results)}`)), 30_000);
  subscription = watchChat(client, (result) => {
    results.push(result);
    if (result.error) {
      clearTimeout(timer);
      reject(result.error);
    } else if (!result.loading) {
      clearTimeout(timer);
      resolve(result);
    }
  });
});

// The wire: one request, asking for multipart/mixed, answered in parts.
assert.equal(exchanges.length, 1, 'one request');
const [{ accept, contentType, body }] = exchanges;
assert.match(accept, /multipart\/mixed;\s*deferSpec=20220824/, `Accept: ${accept}`);
assert.match(contentType, /^multipart\/mixed;.*deferSpec=20220824/, `Content-Type: ${contentType}`);
const boundary = /boundary="?([^";]+)"?/.exec(contentType)[1];
const text = await body; // read whole before the watcher stops (which aborts the request)
subscription.unsubscribe();
const parts = text
  .split(`\r\n--${boundary}`)
  .map((p) => p.replace(new RegExp(`^(--${boundary})?\\r\\n`), ''))
  .filter((p) => p.includes('\r\n\r\n'))
  .map((p) => JSON.parse(p.slice(p.indexOf('\r\n\r\n') + 4)));
assert.ok(parts.length >= 2, `${parts.length} part(s): ${JSON.stringify(parts)}`);
const [initial, ...later] = parts;
assert.equal(initial.hasNext, true, 'the initial payload says more follows');
const chat = initial.data.chats.nodes[0];
assert.ok(chat.title, 'the initial payload has the chat title');
// Incremental delivery leaves a deferred fragment's fields out of the
// payload that holds their object: not null ("failed or empty"), absent.
assert.ok(!('messages' in chat), `the initial payload leaves the deferred messages out: ${JSON.stringify(chat)}`);
const delivered = later.flatMap((p) => p.incremental ?? []).find((i) => i.label === 'messages');
assert.ok(delivered?.data?.messages?.nodes?.length > 0, `a later payload delivers the messages: ${JSON.stringify(later)}`);
assert.deepEqual(delivered.path, ['chats', 'nodes', 0]);
assert.equal(later.at(-1).hasNext, false, 'the last payload ends the answer');

// The client: its last result is the chat with its messages, complete.
const node = last.data.chats.nodes[0];
assert.equal(last.dataState, 'complete');
assert.equal(node.title, chat.title);
assert.equal(node.messages.nodes.length, delivered.data.messages.nodes.length);
const early = results.filter((r) => r.loading && r.data?.chats);
console.log(`@defer: ${parts.length} parts; the client saw ${early.length} result(s) with the title before the messages, then ${node.messages.nodes.length} messages of "${node.title}"`);
