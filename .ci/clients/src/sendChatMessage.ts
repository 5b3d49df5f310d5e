import { graphql } from './gql';

// SendChatMessage is typed by the generated code: SendChatMessageMutation for
// its data, SendChatMessageMutationVariables for its input.
export const SendChatMessage = graphql(`
  mutation SendChatMessage($input: SendChatMessageInput!) {
    sendChatMessage(input: $input) {
      message { id role content aiResponseStatus }
      userErrors { field message code }
      clientMutationId
    }
  }
`);
