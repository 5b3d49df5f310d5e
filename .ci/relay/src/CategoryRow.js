// A category that can refetch itself (through Query.node) and page through
// its subcategories: @refetchable on a Category fragment needs the Node
// interface, @connection needs subcategories to be a Relay connection.
import { graphql } from 'relay-runtime';

export const categoryRowFragment = graphql`
  fragment CategoryRow_category on Category
  @refetchable(queryName: "CategoryRowPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 25 }
    cursor: { type: "String" }
  ) {
    id
    name
    classification
    color
    subcategoriesCount
    subcategories(first: $count, after: $cursor)
      @connection(key: "CategoryRow_subcategories") {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`;
