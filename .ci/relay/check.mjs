// Runs the operations relay-compiler generated from src/ against a running
// suregql started with relay-compiler's manifest (-persisted-documents
// persisted-documents.json -allow-arbitrary-documents=false), as Relay
// sends persisted queries: {"doc_id": id, "variables": …}, the text never
// sent (relay.config.json's persistConfig leaves it out of the
// artifacts). Then it checks that a document sent as text and an unknown
// id are refused. The operations: the page's query, a Category and a
// Chat refetched through Query.node, the chat, subcategory and import
// connections paged with the cursors they answered, and the mutations of
// the chat loop (create, send a message, delete) and of createCategory.
// Usage: node check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import AppQuery from './src/__generated__/AppQuery.graphql.js';
import CategoryRowPaginationQuery from './src/__generated__/CategoryRowPaginationQuery.graphql.js';
import ChatRowRefetchQuery from './src/__generated__/ChatRowRefetchQuery.graphql.js';
import ChatListPaginationQuery from './src/__generated__/ChatListPaginationQuery.graphql.js';
import ImportListPaginationQuery from './src/__generated__/ImportListPaginationQuery.graphql.js';
import ChatActionsCreateMutation from './src/__generated__/ChatActionsCreateMutation.graphql.js';
import ChatActionsSendMessageMutation from './src/__generated__/ChatActionsSendMessageMutation.graphql.js';
import ChatActionsDeleteMutation from './src/__generated__/ChatActionsDeleteMutation.graphql.js';
import CategoryCreateMutation from './src/__generated__/CategoryCreateMutation.graphql.js';

const [endpoint] = process.argv.slice(2);
const maxPages = 20; // a bound on every paging loop below

// post sends a request body as key and returns the status and the answer.
async function post(request, key = 'demo-key') {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Api-Key': key },
    body: JSON.stringify(request),
  });
  return { status: res.status, body: await res.json() };
}

// run sends a generated operation by its persisted id with variables, as
// key (demo-key unless said), and returns its data; any error fails the
// check.
async function run(request, variables, key = 'demo-key') {
  assert.equal(request.params.text, null, `${request.params.name}: the artifact holds its text; relay.config.json's persistConfig is off`);
  assert.match(request.params.id ?? '', /^[0-9a-f]{64}$/, `${request.params.name}: no SHA-256 id`);
  const { body } = await post({ doc_id: request.params.id, variables }, key);
  assert.equal(body.errors, undefined, `${request.params.name} ${JSON.stringify(variables)}: ${JSON.stringify(body.errors)}`);
  return body.data;
}

const app = await run(AppQuery, {});
const root = app.categories.nodes.find((c) => c.subcategoriesCount > 1);
assert.ok(root, 'a root category with subcategories');
const chat = app.chats.edges[0]?.node;
assert.ok(chat, 'a chat');

// Today's Sure (the demo plays v0.7.1) sends no classification: none is invented.
for (const c of app.categories.nodes) {
  assert.equal(c.classification, null, `category ${c.name}: classification ${c.classification}, the upstream sent none`);
}
// The rate limit: numbers unless the server limits nothing.
const { rateLimit } = app;
assert.equal(typeof rateLimit.unlimited, 'boolean', `rateLimit.unlimited: ${JSON.stringify(rateLimit)}`);
if (rateLimit.unlimited) {
  assert.equal(rateLimit.limit, null, `an unlimited key with a limit: ${JSON.stringify(rateLimit)}`);
} else {
  assert.ok(Number.isInteger(rateLimit.limit) && rateLimit.limit > 0, `rateLimit.limit: ${JSON.stringify(rateLimit)}`);
}
// The demo family's imports, in the page's query.
assert.equal(app.imports.edges.length, app.imports.totalCount, 'demo-key: the first page holds every import');
assert.ok(app.imports.totalCount > 0, 'demo-key has imports');

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

// The imports of the large demo family (key large-family-key), paged forward
// with the end cursor of each page until the last, for the whole list and
// for one status (a list of its own: the connection's filters).
async function pageImports(variables) {
  const imports = [];
  let cursor;
  let totalCount;
  let pages = 0;
  for (;;) {
    assert.ok(pages < maxPages, `more than ${maxPages} pages`);
    const { imports: page } = await run(ImportListPaginationQuery, { ...variables, cursor }, 'large-family-key');
    pages++;
    totalCount ??= page.totalCount;
    assert.equal(page.totalCount, totalCount, 'totalCount changed while paging');
    assert.ok(page.edges.length > 0, `page ${pages} is empty`);
    for (const { cursor: edgeCursor, node } of page.edges) {
      assert.ok(edgeCursor, `import ${node.id} without a cursor`);
      assert.ok(node.type && node.status, `import ${node.id}: type ${node.type}, status ${node.status}`);
      assert.equal(typeof node.statusDetail?.terminal, 'boolean', `import ${node.id}: statusDetail ${JSON.stringify(node.statusDetail)}`);
      assert.ok(Number.isInteger(node.stats?.rowsCount), `import ${node.id}: stats ${JSON.stringify(node.stats)}`);
      imports.push(node);
    }
    if (!page.pageInfo.hasNextPage) break;
    cursor = page.pageInfo.endCursor;
  }
  const ids = imports.map((i) => i.id);
  assert.equal(new Set(ids).size, ids.length, 'imports: duplicate nodes');
  assert.equal(ids.length, totalCount, `imports: ${ids.length} nodes, totalCount ${totalCount}`);
  assert.equal(pages, Math.ceil(totalCount / variables.count), `imports: ${pages} pages of ${variables.count} for ${totalCount}`);
  return { imports, pages };
}
const allImports = await pageImports({ count: 25 });
assert.ok(allImports.imports.length > 100, `large-family-key: ${allImports.imports.length} imports`);
const complete = await pageImports({ count: 10, status: 'complete' });
assert.ok(complete.imports.every((i) => i.status === 'complete' && i.statusDetail.terminal), 'imports(status: "complete") holds another status');
assert.ok(complete.imports.length < allImports.imports.length, 'imports(status: "complete") did not filter');

// The chat loop: a new chat, a message sent to it (the assistant's reply
// comes later: its status is pending), a blank message refused as a
// userError, then the chat deleted (twice: the second is NOT_FOUND).
const title = `relay check ${Date.now()}`;
const { createChat } = await run(ChatActionsCreateMutation, { input: { title } });
assert.deepEqual(createChat.userErrors, []);
assert.equal(createChat.chat.title, title);
const chatId = createChat.chat.id;

const content = `How much did I spend on groceries? (${title})`;
const { sendChatMessage: sent } = await run(ChatActionsSendMessageMutation, {
  input: { chatId, content, clientMutationId: 'send-1' },
});
assert.deepEqual(sent.userErrors, []);
assert.equal(sent.clientMutationId, 'send-1');
assert.equal(sent.confirmedByRead, false);
assert.ok(sent.message.id, 'the sent message has no id');
assert.equal(sent.message.role, 'user');
assert.equal(sent.message.content, content);
assert.equal(sent.message.aiResponseStatus, 'pending');
const { sendChatMessage: blank } = await run(ChatActionsSendMessageMutation, { input: { chatId, content: ' ' } });
assert.equal(blank.message, null);
assert.equal(blank.userErrors[0]?.code, 'BLANK', `a blank message: ${JSON.stringify(blank.userErrors)}`);
// The next read sees the message (the refetch selects messageCount).
assert.ok((await run(ChatRowRefetchQuery, { id: chatId })).node.messageCount >= 1, 'the chat does not count the message sent');

const { deleteChat } = await run(ChatActionsDeleteMutation, { input: { id: chatId, clientMutationId: 'delete-1' } });
assert.deepEqual(deleteChat.userErrors, []);
assert.equal(deleteChat.deletedChatId, chatId);
assert.equal(deleteChat.clientMutationId, 'delete-1');
const { deleteChat: again } = await run(ChatActionsDeleteMutation, { input: { id: chatId } });
assert.equal(again.deletedChatId, null);
assert.equal(again.userErrors[0]?.code, 'NOT_FOUND', `deleting it again: ${JSON.stringify(again.userErrors)}`);
assert.equal((await run(ChatRowRefetchQuery, { id: chatId })).node, null, 'Query.node still answers the deleted chat');
const chatsAfter = await run(ChatListPaginationQuery, { count: 100 });
assert.ok(!chatsAfter.chats.edges.some((e) => e.node.id === chatId), 'chats still lists the deleted chat');

// createCategory (Sure v0.7.1, which the demo plays): a new name is created
// and read back by id; the same name again is a TAKEN userError.
const name = `Relay check ${Date.now()}`;
const { createCategory: created } = await run(CategoryCreateMutation, { input: { name, clientMutationId: 'category-1' } });
assert.deepEqual(created.userErrors, []);
assert.equal(created.clientMutationId, 'category-1');
assert.equal(created.category.name, name);
assert.equal(created.category.classification, null);
assert.equal(created.category.subcategoriesCount, 0);
const createdNode = await run(CategoryRowPaginationQuery, { id: created.category.id });
assert.equal(createdNode.node?.name, name, 'the new category is not read back by id');
const { createCategory: taken } = await run(CategoryCreateMutation, { input: { name } });
assert.equal(taken.category, null);
assert.equal(taken.userErrors.length, 1, `a taken name: ${JSON.stringify(taken.userErrors)}`);
assert.equal(taken.userErrors[0].code, 'TAKEN', `a taken name: ${JSON.stringify(taken.userErrors)}`);
assert.deepEqual(taken.userErrors[0].field, ['input', 'name']);

console.log(`relay: category ${root.name} refetched by id with its subcategories paged, chat ${chat.title} refetched by id, chats paged`);
console.log(`relay: imports paged forward: ${allImports.imports.length} in ${allImports.pages} pages, ${complete.imports.length} complete in ${complete.pages} pages; rateLimit unlimited: ${rateLimit.unlimited}, no classification invented`);
console.log(`relay: chat created, message sent (aiResponseStatus pending), blank message BLANK, chat deleted (again: NOT_FOUND); category "${name}" created, again: TAKEN`);

// Only the manifest's documents run: a document sent as text (even one of
// the manifest's) and an unknown id are refused before any work.
const arbitrary = await post({ query: '{ rateLimit { limit } }' });
assert.equal(arbitrary.status, 400, JSON.stringify(arbitrary));
assert.equal(arbitrary.body.errors?.[0]?.extensions?.code, 'PERSISTED_DOCUMENT_REQUIRED', JSON.stringify(arbitrary.body));
const unknown = await post({ doc_id: '0'.repeat(64) });
assert.equal(unknown.status, 400, JSON.stringify(unknown));
assert.equal(unknown.body.errors?.[0]?.extensions?.code, 'PERSISTED_DOCUMENT_NOT_FOUND', JSON.stringify(unknown.body));
assert.equal(unknown.body.data, undefined);
console.log('relay: every operation sent by its persisted id (doc_id); a document sent as text: PERSISTED_DOCUMENT_REQUIRED, an unknown id: PERSISTED_DOCUMENT_NOT_FOUND');
