import { ApolloClient, InMemoryCache } from '@apollo/client';
import { BatchHttpLink } from '@apollo/client/link/batch-http';

// createBatchingClient returns an Apollo Client for suregql at uri (…/graphql)
// that sends the operations asked for within 20 ms as one batched POST.
export function createBatchingClient(uri, apiKey) {
  return new ApolloClient({
    cache: new InMemoryCache(),
    link: new BatchHttpLink({
      uri,
      headers: { 'X-Api-Key': apiKey },
      batchMax: 10, // at most the server's -max-batch
      batchInterval: 20, // ms to gather the operations of one render
    }),
  });
}
