// Runs README.md's urql setup (urql.mjs) against a running suregql: pages
// Query.chats of the large demo family, Query.categories with and without a
// filter, and Chat.messages of a long demo chat through graphcache's
// relayPagination, and checks the merged lists.
// Usage: node urql-check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import { gql } from '@urql/core';
import { createClient } from './urql.mjs';

const [endpoint] = process.argv.slice(2);
const maxPages = 20; // a bound on every paging loop below

// pageAll asks query for the next page until the last one; graphcache
// answers each page's query with all the pages so far.
async function pageAll(client, query, variables, connectionOf) {
  let merged;
  let pages = 0;
  do {
    assert.ok(pages < maxPages, `more than ${maxPages} pages`);
    const after = merged?.pageInfo.endCursor;
    const result = await client.query(query, { ...variables, after }).toPromise();
    assert.ifError(result.error);
    pages++;
    const connection = connectionOf(result.data);
    if (merged) assert.ok(connection.edges.length > merged.edges.length, 'the next page added no edges to the list');
    merged = connection;
  } while (merged.pageInfo.hasNextPage);
  return { merged, pages };
}

function assertComplete(connection, what) {
  const ids = connection.edges.map((e) => e.node.id);
  assert.equal(new Set(ids).size, ids.length, `${what}: duplicate nodes`);
  assert.equal(ids.length, connection.totalCount, `${what}: ${ids.length} nodes, totalCount ${connection.totalCount}`);
  assert.equal(connection.pageInfo.hasNextPage, false, `${what}: hasNextPage after the last page`);
}

const CHATS = gql`
  query Chats($first: Int!, $after: String) {
    chats(first: $first, after: $after) {
      totalCount
      edges { cursor node { id title messageCount } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const large = createClient(endpoint, 'large-family-key');
const chats = await pageAll(large, CHATS, { first: 50 }, (d) => d.chats);
assertComplete(chats.merged, 'chats');
assert.equal(chats.pages, Math.ceil(chats.merged.totalCount / 50));
console.log(`urql: chats(first: 50): ${chats.pages} pages, ${chats.merged.totalCount} chats, no duplicates`);

// Query.categories: the filters name separate lists.
const demo = createClient(endpoint, 'demo-key');
const CATEGORIES = gql`
  query Categories($first: Int!, $after: String, $rootsOnly: Boolean) {
    categories(first: $first, after: $after, rootsOnly: $rootsOnly) {
      totalCount
      edges { cursor node { id name } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const all = await pageAll(demo, CATEGORIES, { first: 10 }, (d) => d.categories);
assertComplete(all.merged, 'categories');
const roots = await pageAll(demo, CATEGORIES, { first: 10, rootsOnly: true }, (d) => d.categories);
assertComplete(roots.merged, 'categories(rootsOnly: true)');
assert.ok(roots.merged.totalCount < all.merged.totalCount, 'rootsOnly did not filter');
console.log(`urql: categories(first: 10): ${all.pages} pages, ${all.merged.totalCount} categories; rootsOnly: ${roots.pages} pages, ${roots.merged.totalCount} roots`);

// Chat.messages: a nested connection paged through chat(id:).
const demoChats = await demo.query(CHATS, { first: 20 }).toPromise();
assert.ifError(demoChats.error);
const longest = demoChats.data.chats.edges.map((e) => e.node).sort((a, b) => b.messageCount - a.messageCount)[0];
assert.ok(longest.messageCount > 50, 'no demo chat with more than 50 messages');
const MESSAGES = gql`
  query Messages($id: ID!, $first: Int!, $after: String) {
    chat(id: $id) {
      id
      messages(first: $first, after: $after) {
        totalCount
        edges { cursor node { id } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;
const messages = await pageAll(demo, MESSAGES, { id: longest.id, first: 50 }, (d) => d.chat.messages);
assertComplete(messages.merged, 'messages');
assert.equal(messages.merged.totalCount, longest.messageCount);
console.log(`urql: "${longest.title}".messages(first: 50): ${messages.pages} pages, ${messages.merged.totalCount} messages`);
