import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';

// createDeferClient returns an Apollo Client for suregql at uri (…/graphql)
// that sends apiKey as X-Api-Key and reads @defer answers: Apollo Client 4
// refuses a @defer query without an incrementalHandler, and suregql answers
// in the deferSpec=20220824 format that Defer20220824Handler reads.
export function createDeferClient(uri, apiKey) {
  return new ApolloClient({
    cache: new InMemoryCache(),
    link: new HttpLink({ uri, headers: { 'X-Api-Key': apiKey } }),
    incrementalHandler: new Defer20220824Handler(),
  });
}

// The newest chat's title at once; its last messages when their call is in.
export const CHAT = gql`
  query Chat {
    chats(first: 1) {
      nodes {
        id
        title
        ... @defer(label: "messages") {
          messages(last: 20) { nodes { id role content } }
        }
      }
    }
  }
`;

// watchChat calls onResult with each state of the answer: first the title,
// without its messages and loading true (the deferred part is on its way),
// then with the messages and loading false.
export function watchChat(client, onResult) {
  return client.watchQuery({ query: CHAT }).subscribe(onResult);
}
