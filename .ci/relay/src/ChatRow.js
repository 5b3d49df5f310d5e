// A chat that can refetch itself through Query.node.
import { graphql } from 'relay-runtime';

export const chatRowFragment = graphql`
  fragment ChatRow_chat on Chat @refetchable(queryName: "ChatRowRefetchQuery") {
    id
    title
    messageCount
    lastMessageAt
  }
`;
