// Runs the operations relay-compiler generated from src/ against a running
// suregql, as Relay would send them: the page's query, a Category and a
// Chat refetched through Query.node, and both connections paged with the
// cursors they answered.
// Usage: node check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import AppQuery from './src/__generated__/AppQuery.graphql.js';
import CategoryRowPaginationQuery from './src/__generated__/CategoryRowPaginationQuery.graphql.js';
import ChatRowRefetchQuery from './src/__generated__/ChatRowRefetchQuery.graphql.js';
import ChatListPaginationQuery from './src/__generated__/ChatListPaginationQuery.graphql.js';

const [endpoint] = process.argv.slice(2);

async function run(request, variables) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': 'demo-key' },
    body: JSON.stringify({ query: request.params.text, variables }),
  });
  const body = await res.json();
  assert.equal(body.errors, undefined, `${request.params.name}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

const app = await run(AppQuery, {});
const root = app.categories.nodes.find((c) => c.subcategoriesCount > 1);
assert.ok(root, 'a root category with subcategories');
const chat = app.chats.edges[0]?.node;
assert.ok(chat, 'a chat');

// A category refetched by id, its subcategories paged by the connection.
const first = await run(CategoryRowPaginationQuery, { id: root.id, count: 1 });
assert.equal(first.node.__typename, 'Category');
assert.equal(first.node.name, root.name);
assert.equal(first.node.subcategories.edges.length, 1);
assert.ok(first.node.subcategories.pageInfo.hasNextPage);
const next = await run(CategoryRowPaginationQuery, {
  id: root.id, count: 1, cursor: first.node.subcategories.pageInfo.endCursor,
});
assert.notEqual(next.node.subcategories.edges[0].node.id, first.node.subcategories.edges[0].node.id);

// A chat refetched by id.
const refetched = await run(ChatRowRefetchQuery, { id: chat.id });
assert.equal(refetched.node.__typename, 'Chat');
assert.equal(refetched.node.title, chat.title);

// The chat list paged from the end cursor of its first page.
const page1 = await run(ChatListPaginationQuery, { count: 1 });
const page2 = await run(ChatListPaginationQuery, { count: 1, cursor: page1.chats.pageInfo.endCursor });
assert.notEqual(page2.chats.edges[0].node.id, page1.chats.edges[0].node.id);

console.log(`relay: category ${root.name} refetched by id with its subcategories paged, chat ${chat.title} refetched by id, chats paged`);
