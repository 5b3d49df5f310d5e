// Creates a category (Sure v0.7.1 and later); a taken name is a userError.
import { graphql } from 'relay-runtime';

export const createCategoryMutation = graphql`
  mutation CategoryCreateMutation($input: CreateCategoryInput!) {
    createCategory(input: $input) {
      category {
        id
        ...CategoryRow_category
      }
      userErrors {
        field
        message
        code
      }
      clientMutationId
    }
  }
`;
