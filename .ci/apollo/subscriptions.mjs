import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';

// createLiveClient returns an Apollo Client for suregql at uri (…/graphql):
// queries and mutations over HTTP, subscriptions over one WebSocket
// (graphql-transport-ws). A browser cannot set a WebSocket's headers: the
// key goes in connection_init's payload. webSocketImpl is needed only
// where there is no global WebSocket (Node before 22: the ws package).
export function createLiveClient(uri, apiKey, webSocketImpl) {
  const http = new HttpLink({ uri, headers: { 'X-Api-Key': apiKey } });
  const ws = new GraphQLWsLink(
    createClient({
      url: uri.replace(/^http/, 'ws'),
      connectionParams: { 'X-Api-Key': apiKey },
      webSocketImpl,
    }),
  );
  const isSubscription = ({ query }) => {
    const def = getMainDefinition(query);
    return def.kind === 'OperationDefinition' && def.operation === 'subscription';
  };
  return new ApolloClient({
    cache: new InMemoryCache(),
    link: ApolloLink.split(isSubscription, ws, http),
  });
}
