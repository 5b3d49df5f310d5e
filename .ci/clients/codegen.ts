import type { CodegenConfig } from '@graphql-codegen/cli';

// The running facade answers introspection without an API key; the SDL
// `go run ./cmd/printschema` prints (every schema file, merged) works as well.
const config: CodegenConfig = {
  schema: process.env.SUREGQL_URL ?? 'http://localhost:8080/graphql',
  documents: ['src/**/*.ts', '!src/gql/**'],
  generates: {
    'src/gql/': {
      preset: 'client',
      config: {
        // suregql's custom scalars, as they travel in JSON: DateTime is an
        // RFC 3339 string ("2026-11-22T05:00:00Z"), JSON any JSON value,
        // SafeInt a JSON number within ±(2^53−1) (money's minor units).
        // strictScalars fails the generation if the schema gains another.
        scalars: { DateTime: 'string', JSON: 'unknown', SafeInt: 'number' },
        strictScalars: true,
      },
    },
  },
};

export default config;
