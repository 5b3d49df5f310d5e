// The chat loop's writes: start a chat (prepended to the chat list's
// connection), send it a message (the assistant's reply arrives later), and
// delete it (@deleteRecord removes it from the store and every connection).
import { graphql } from 'relay-runtime';

export const createChatMutation = graphql`
  mutation ChatActionsCreateMutation($input: CreateChatInput!, $connections: [ID!]!) {
    createChat(input: $input) {
      chat @prependNode(connections: $connections, edgeTypeName: "ChatEdge") {
        id
        ...ChatRow_chat
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`;

export const sendChatMessageMutation = graphql`
  mutation ChatActionsSendMessageMutation($input: SendChatMessageInput!) {
    sendChatMessage(input: $input) {
      message {
        id
        role
        content
        aiResponseStatus
      }
      userErrors {
        field
        message
        code
      }
      clientMutationId
      confirmedByRead
    }
  }
`;

export const deleteChatMutation = graphql`
  mutation ChatActionsDeleteMutation($input: DeleteChatInput!) {
    deleteChat(input: $input) {
      deletedChatId @deleteRecord
      userErrors {
        field
        message
        code
      }
      clientMutationId
    }
  }
`;
