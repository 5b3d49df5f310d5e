import { graphql } from './gql';

// CategoryTree is typed by the generated code: CategoryTreeQuery for its
// data, CategoryTreeQueryVariables for its variables.
export const CategoryTree = graphql(`
  query CategoryTree($first: Int!) {
    categories(rootsOnly: true, first: $first) {
      totalCount
      nodes {
        id
        name
        classification
        subcategories(first: 50) { nodes { id name } }
      }
    }
  }
`);
