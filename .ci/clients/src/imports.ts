import { graphql } from './gql';

// ImportsPage is typed by the generated code: ImportsPageQuery for its data
// (a page of the imports connection and the key's rate limit),
// ImportsPageQueryVariables for its variables.
export const ImportsPage = graphql(`
  query ImportsPage($first: Int!, $after: String, $status: String, $type: String) {
    imports(first: $first, after: $after, status: $status, type: $type) {
      totalCount
      edges {
        cursor
        node {
          id
          type
          status
          statusDetail { terminal publishable }
          stats { rowsCount invalidRowsCount }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
    rateLimit { unlimited limit }
  }
`);
