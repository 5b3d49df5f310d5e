// The page's query: the root categories, the chat list, the imports list and
// the key's rate limit, each component reading its own fragment.
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
    ...ImportList_query
    ...RateLimitBadge_query
  }
`;
