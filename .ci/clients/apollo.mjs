import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { relayStylePagination } from '@apollo/client/utilities';
import { sha256 } from 'crypto-hash';

// createClient returns an Apollo Client for suregql at uri (…/graphql) that
// sends apiKey as X-Api-Key on every request.
export function createClient(uri, apiKey) {
  return new ApolloClient({
    cache: new InMemoryCache({
      typePolicies: {
        Query: {
          fields: {
            // One list per filter; first/after/last/before page through it.
            categories: relayStylePagination(['classification', 'rootsOnly', 'parentId']),
            chats: relayStylePagination(),
            imports: relayStylePagination(['status', 'type']),
          },
        },
        Category: { fields: { subcategories: relayStylePagination() } },
        Chat: { fields: { messages: relayStylePagination() } },
      },
    }),
    link: ApolloLink.from([
      // Automatic Persisted Queries: a query's SHA-256 hash, not its text,
      // once the server has seen the text.
      new PersistedQueryLink({ sha256 }),
      new HttpLink({ uri, headers: { 'X-Api-Key': apiKey } }),
    ]),
  });
}
