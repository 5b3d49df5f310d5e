import type { CodegenConfig } from '@graphql-codegen/cli';

// The running facade answers introspection without an API key; a path to
// suregql's schema.graphqls works as well.
const config: CodegenConfig = {
  schema: process.env.SUREGQL_URL ?? 'http://localhost:8080/graphql',
  documents: ['src/**/*.ts', '!src/gql/**'],
  generates: {
    'src/gql/': { preset: 'client' },
  },
};

export default config;
