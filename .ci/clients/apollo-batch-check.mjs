// Runs README.md's batching Apollo Client setup (apollo-batch.mjs) against a
// running suregql: three queries of components that each need the category
// family go out as one POST of a JSON array, answered in order, and the
// batch costs one upstream call, reported by the answer that sent it.
// Usage: node apollo-batch-check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import { gql } from '@apollo/client';
import { createBatchingClient } from './apollo-batch.mjs';

const [endpoint] = process.argv.slice(2);

// Record what went over the wire.
const exchanges = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  exchanges.push({ request: JSON.parse(init.body), response: await res.clone().json() });
  return res;
};

const client = createBatchingClient(endpoint, 'demo-key');

const TREE = gql`
  query Tree {
    categories(rootsOnly: true, first: 100) {
      nodes { id name subcategories(first: 50) { nodes { id name } } }
    }
  }
`;
const ONE = gql`
  query One($id: ID!) {
    category(id: $id) { id name subcategories(first: 50) { nodes { id name } } }
  }
`;
const ALL = gql`
  query All {
    categories(first: 100) { totalCount nodes { id name } }
  }
`;

// A first request to learn an id (and warm nothing: each request has its
// own data layer).
const { data: first } = await client.query({ query: ALL });
const food = first.categories.nodes.find((c) => c.name === 'Food & Drink');
assert.ok(food, 'the demo family has Food & Drink');
exchanges.length = 0;

const [tree, one, all] = await Promise.all([
  client.query({ query: TREE, fetchPolicy: 'network-only' }),
  client.query({ query: ONE, variables: { id: food.id }, fetchPolicy: 'network-only' }),
  client.query({ query: ALL, fetchPolicy: 'network-only' }),
]);

assert.equal(exchanges.length, 1, `${exchanges.length} requests, want one batch`);
const [{ request, response }] = exchanges;
assert.ok(Array.isArray(request) && request.length === 3, 'the request is an array of 3 operations');
assert.ok(Array.isArray(response) && response.length === 3, 'the answer is an array of 3 answers');
assert.deepEqual(request.map((op) => op.operationName), ['Tree', 'One', 'All']);
// The first request read the family a moment ago: the demo server's
// freshness (on by default) may answer the tree from it (0 calls); either
// way, the others answer from what the tree read, at no call.
const calls = response.map((r) => r.extensions.upstream.calls);
assert.ok(calls[0] <= 1, `the tree cost ${calls[0]} calls, want at most 1`);
assert.deepEqual(calls.slice(1), [0, 0], 'the others answered from what the tree read');

assert.ok(tree.data.categories.nodes.some((c) => c.name === 'Food & Drink' && c.subcategories.nodes.length > 0));
assert.equal(one.data.category.name, 'Food & Drink');
assert.deepEqual(
  one.data.category.subcategories.nodes.map((c) => c.name),
  tree.data.categories.nodes.find((c) => c.name === 'Food & Drink').subcategories.nodes.map((c) => c.name),
);
assert.equal(all.data.categories.nodes.length, all.data.categories.totalCount);
console.log(`Apollo BatchHttpLink: 3 operations in one POST, ${calls[0]} upstream call(s), answers in order`);
