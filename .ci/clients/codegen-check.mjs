// Runs README.md's GraphQL Code Generator setup (codegen.ts, with the
// documented query src/categoryTree.ts, the imports page src/imports.ts,
// the chats with their DateTime fields src/recentChats.ts and the mutation
// src/sendChatMessage.ts) against a running suregql in a
// temporary directory: generates the types from the server's introspection,
// type-checks src/typecheck.ts against them (tsc --noEmit), then compiles
// the typed documents and runs them through README.md's Apollo Client.
// Usage: node codegen-check.mjs http://127.0.0.1:8080/graphql
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gql } from '@apollo/client';
import { createClient } from './apollo.mjs';

const [endpoint] = process.argv.slice(2);
const here = fileURLToPath(new URL('.', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'suregql-codegen-'));

function run(command, args, env = {}) {
  const r = spawnSync(join(here, 'node_modules', '.bin', command), args, {
    cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000,
  });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error(`${command} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  }
}

try {
  for (const f of ['codegen.ts', 'tsconfig.json', 'src']) cpSync(join(here, f), join(dir, f), { recursive: true });
  symlinkSync(join(here, 'node_modules'), join(dir, 'node_modules'));

  run('graphql-codegen', ['--config', 'codegen.ts'], { SUREGQL_URL: endpoint });
  const generated = readFileSync(join(dir, 'src/gql/graphql.ts'), 'utf8');
  for (const t of ['CategoryTreeQuery', 'CategoryTreeQueryVariables', 'CategoryClassification',
    'ImportsPageQuery', 'ImportsPageQueryVariables',
    'RecentChatsQuery', 'RecentChatsQueryVariables',
    'SendChatMessageMutation', 'SendChatMessageMutationVariables', 'SendChatMessageInput']) {
    assert.match(generated, new RegExp(`^export type ${t} =`, 'm'), `graphql.ts has no type ${t}`);
  }
  // codegen.ts maps every custom scalar (strictScalars refuses one it
  // does not): DateTime fields are strings, not any or unknown.
  assert.match(generated, /^export type RecentChatsQuery = .*\bupdatedAt: string, lastMessageAt: string \| null\b/m,
    'graphql.ts: RecentChatsQuery does not type DateTime as string');
  console.log('codegen: generated src/gql/ from the server\'s introspection');

  // @ts-expect-error lines in typecheck.ts fail this if the types were any.
  run('tsc', ['-p', 'tsconfig.json']);
  console.log('codegen: tsc --noEmit type-checked src/typecheck.ts against the generated types');

  // The typed document, compiled to CommonJS, runs against the server.
  run('tsc', ['-p', 'tsconfig.json', '--noEmit', 'false', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--rootDir', 'src', '--outDir', 'out']);
  const { CategoryTree } = createRequire(join(dir, 'out', 'index.js'))('./categoryTree.js');
  const { data } = await createClient(endpoint, 'demo-key').query({ query: CategoryTree, variables: { first: 100 } });
  assert.equal(data.categories.nodes.length, data.categories.totalCount);
  assert.ok(data.categories.nodes.some((c) => c.subcategories.nodes.length > 0), 'no subcategories');
  console.log(`codegen: the generated CategoryTree document answered ${data.categories.totalCount} root categories`);

  // The imports page, as the large demo family (130 imports).
  const { ImportsPage } = createRequire(join(dir, 'out', 'index.js'))('./imports.js');
  const { data: imports } = await createClient(endpoint, 'large-family-key')
    .query({ query: ImportsPage, variables: { first: 25 } });
  assert.equal(imports.imports.edges.length, 25);
  assert.ok(imports.imports.totalCount > 100 && imports.imports.pageInfo.hasNextPage, `${imports.imports.totalCount} imports`);
  assert.ok(imports.imports.edges.every((e) => typeof e.node.statusDetail?.terminal === 'boolean'), 'an import without statusDetail.terminal');
  assert.equal(typeof imports.rateLimit.unlimited, 'boolean');
  console.log(`codegen: the generated ImportsPage document answered 25 of ${imports.imports.totalCount} imports`);

  // The typed mutation, with a blank message: answered in userErrors, and
  // nothing is sent to the chat.
  const { SendChatMessage } = createRequire(join(dir, 'out', 'index.js'))('./sendChatMessage.js');
  const demo = createClient(endpoint, 'demo-key');
  const { data: chats } = await demo.query({ query: gql`query FirstChat { chats(first: 1) { nodes { id } } }` });
  const chatId = chats.chats.nodes[0].id;
  const { data: sent } = await demo.mutate({
    mutation: SendChatMessage, variables: { input: { chatId, content: ' ', clientMutationId: 'blank' } },
  });
  assert.equal(sent.sendChatMessage.message, null);
  assert.equal(sent.sendChatMessage.clientMutationId, 'blank');
  assert.deepEqual(sent.sendChatMessage.userErrors.map((e) => [e.code, e.field]), [['BLANK', ['input', 'content']]]);
  console.log('codegen: the generated SendChatMessage mutation answered a blank message with a BLANK userError');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
