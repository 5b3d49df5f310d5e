// The chat list, paged forward with @connection from a Query fragment.
import { graphql } from 'relay-runtime';

export const chatListFragment = graphql`
  fragment ChatList_query on Query
  @refetchable(queryName: "ChatListPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
  ) {
    chats(first: $count, after: $cursor) @connection(key: "ChatList_chats") {
      edges {
        node {
          id
          ...ChatRow_chat
        }
      }
    }
  }
`;
