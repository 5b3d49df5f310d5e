// The imports list, paged forward with @connection from a Query fragment;
// status and type name separate lists (the connection's filters).
import { graphql } from 'relay-runtime';

export const importListFragment = graphql`
  fragment ImportList_query on Query
  @refetchable(queryName: "ImportListPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 25 }
    cursor: { type: "String" }
    status: { type: "String" }
    type: { type: "String" }
  ) {
    imports(first: $count, after: $cursor, status: $status, type: $type)
      @connection(key: "ImportList_imports", filters: ["status", "type"]) {
      totalCount
      edges {
        node {
          id
          type
          status
          statusDetail {
            terminal
            publishable
          }
          stats {
            rowsCount
          }
        }
      }
    }
  }
`;
