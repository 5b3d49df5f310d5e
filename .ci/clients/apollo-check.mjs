// Runs README.md's Apollo Client setup (apollo.mjs) against a running
// suregql: pages Query.categories with fetchMore until the end, twice with
// different filters, pages one category's subcategories, pages the large
// demo family's Query.imports, whole and filtered by status, and checks that
// Automatic Persisted Queries sent hashes only once the server knew them.
// Usage: node apollo-check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import { gql } from '@apollo/client';
import { createClient } from './apollo.mjs';

const [endpoint] = process.argv.slice(2);
const maxPages = 20; // a bound on every paging loop below

// Record what went over the wire, to check the APQ link's requests.
const exchanges = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const res = await realFetch(input, init);
  exchanges.push({ request: JSON.parse(init.body), response: await res.clone().json() });
  return res;
};

const client = createClient(endpoint, 'demo-key');

const CATEGORIES = gql`
  query Categories($first: Int!, $after: String, $rootsOnly: Boolean) {
    categories(first: $first, after: $after, rootsOnly: $rootsOnly) {
      totalCount
      edges { cursor node { id name subcategoriesCount } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

// pageAll watches query with variables, calls fetchMore until the last
// page, and returns the connection the cache merged and the watcher's
// last result. It uses client unless another is passed.
async function pageAll(query, variables, connectionOf, { using = client } = {}) {
  const observable = using.watchQuery({ query, variables });
  let last;
  let settleFirst;
  const first = new Promise((resolve, reject) => { settleFirst = { resolve, reject }; });
  const subscription = observable.subscribe((result) => {
    last = result;
    if (result.error) settleFirst.reject(result.error);
    else if (!result.loading && result.data) settleFirst.resolve(result);
  });
  try {
    let merged = connectionOf((await first).data);
    let pages = 1;
    while (merged.pageInfo.hasNextPage) {
      assert.ok(pages < maxPages, `more than ${maxPages} pages`);
      await observable.fetchMore({ variables: { after: merged.pageInfo.endCursor } });
      pages++;
      const cached = connectionOf(using.readQuery({ query, variables }));
      assert.ok(cached.edges.length > merged.edges.length, 'fetchMore added no edges to the cached list');
      merged = cached;
    }
    // The watcher sees the merged list too (it is told asynchronously).
    for (let i = 0; i < 100 && connectionOf(last?.data)?.edges.length !== merged.edges.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(connectionOf(last.data).edges.length, merged.edges.length, 'the watcher did not see the merged list');
    return { merged, pages };
  } finally {
    subscription.unsubscribe();
  }
}

function assertComplete(connection, what) {
  const ids = connection.edges.map((e) => e.node.id);
  assert.equal(new Set(ids).size, ids.length, `${what}: duplicate nodes`);
  assert.equal(ids.length, connection.totalCount, `${what}: ${ids.length} nodes, totalCount ${connection.totalCount}`);
  assert.equal(connection.pageInfo.hasNextPage, false, `${what}: hasNextPage after the last page`);
}

const all = await pageAll(CATEGORIES, { first: 10 }, (d) => d?.categories);
assertComplete(all.merged, 'categories');
assert.equal(all.pages, Math.ceil(all.merged.totalCount / 10));
console.log(`apollo: categories(first: 10): ${all.pages} pages, ${all.merged.totalCount} categories, no duplicates`);

// keyArgs: rootsOnly names another list, merged apart from the first one.
const roots = await pageAll(CATEGORIES, { first: 10, rootsOnly: true }, (d) => d?.categories);
assertComplete(roots.merged, 'categories(rootsOnly: true)');
assert.ok(roots.merged.totalCount < all.merged.totalCount, 'rootsOnly did not filter');
assert.equal(client.readQuery({ query: CATEGORIES, variables: { first: 10 } }).categories.edges.length,
  all.merged.totalCount, 'the rootsOnly pages changed the unfiltered list');
console.log(`apollo: categories(rootsOnly: true, first: 10): ${roots.pages} pages, ${roots.merged.totalCount} roots, kept apart`);

// Category.subcategories: a nested connection paged through category(id:).
const parent = roots.merged.edges.map((e) => e.node).sort((a, b) => b.subcategoriesCount - a.subcategoriesCount)[0];
assert.ok(parent.subcategoriesCount > 2, 'no category with more than 2 subcategories');
const SUBCATEGORIES = gql`
  query Subcategories($id: ID!, $first: Int!, $after: String) {
    category(id: $id) {
      id
      subcategories(first: $first, after: $after) {
        totalCount
        edges { cursor node { id name } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;
const subs = await pageAll(SUBCATEGORIES, { id: parent.id, first: 2 }, (d) => d?.category?.subcategories);
assertComplete(subs.merged, 'subcategories');
assert.equal(subs.merged.totalCount, parent.subcategoriesCount);
console.log(`apollo: ${parent.name}.subcategories(first: 2): ${subs.pages} pages, ${subs.merged.totalCount} subcategories`);

// Query.imports of the large demo family (130 imports, key
// large-family-key): paged whole, then filtered by status, a list the
// keyArgs keep apart from the first.
const large = createClient(endpoint, 'large-family-key');
const IMPORTS = gql`
  query Imports($first: Int!, $after: String, $status: String) {
    imports(first: $first, after: $after, status: $status) {
      totalCount
      edges {
        cursor
        node { id type status statusDetail { terminal } stats { rowsCount } }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
`;
const imports = await pageAll(IMPORTS, { first: 25 }, (d) => d?.imports, { using: large });
assertComplete(imports.merged, 'imports');
assert.equal(imports.pages, Math.ceil(imports.merged.totalCount / 25));
assert.ok(imports.merged.totalCount > 100, `large-family-key: ${imports.merged.totalCount} imports`);
const completeImports = await pageAll(IMPORTS, { first: 10, status: 'complete' }, (d) => d?.imports, { using: large });
assertComplete(completeImports.merged, 'imports(status: "complete")');
assert.ok(completeImports.merged.edges.every((e) => e.node.status === 'complete'), 'imports(status: "complete") holds another status');
assert.ok(completeImports.merged.totalCount < imports.merged.totalCount, 'status did not filter');
assert.equal(large.readQuery({ query: IMPORTS, variables: { first: 25 } }).imports.edges.length,
  imports.merged.totalCount, 'the status pages changed the unfiltered list');
console.log(`apollo: imports(first: 25): ${imports.pages} pages, ${imports.merged.totalCount} imports; status "complete": ${completeImports.pages} pages, ${completeImports.merged.totalCount}, kept apart`);

// APQ: each document's first request carried its hash alone, was answered
// PersistedQueryNotFound, and was sent again with its text; every later
// request of it carried the hash alone and was answered with data.
const byHash = new Map();
for (const { request, response } of exchanges) {
  const hash = request.extensions?.persistedQuery?.sha256Hash;
  assert.ok(hash, 'a request without a persisted-query hash');
  byHash.set(hash, [...(byHash.get(hash) ?? []), { request, response }]);
}
assert.equal(byHash.size, 3, 'expected three documents');
let hashOnly = 0;
for (const [hash, list] of byHash) {
  const [first, second, ...rest] = list;
  assert.equal(first.request.query, undefined, `${hash}: the first request sent the query text`);
  assert.equal(first.response.errors?.[0]?.extensions?.code, 'PERSISTED_QUERY_NOT_FOUND');
  assert.ok(second.request.query, `${hash}: the retry did not send the query text`);
  assert.ok(second.response.data && !second.response.errors, `${hash}: the retry failed`);
  assert.ok(rest.length > 0, `${hash}: no request after the retry`);
  for (const { request, response } of rest) {
    assert.equal(request.query, undefined, `${hash}: the text was sent again`);
    assert.ok(response.data && !response.errors, `${hash}: a hash-only request failed: ${JSON.stringify(response.errors)}`);
    hashOnly++;
  }
}
console.log(`apollo: persisted queries: ${exchanges.length} requests, ${hashOnly} sent as a hash alone and answered`);
