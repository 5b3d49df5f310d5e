// The page's query: the root categories and the chat list, each component
// reading its own fragment.
import { graphql } from 'relay-runtime';

export const appQuery = graphql`
  query AppQuery {
    categories(first: 25, rootsOnly: true) {
      nodes {
        id
        ...CategoryRow_category
      }
    }
    ...ChatList_query
  }
`;
