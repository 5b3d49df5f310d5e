import { Client, fetchExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';

// createClient returns an urql client for suregql at url (…/graphql) that
// sends apiKey as X-Api-Key on every request.
export function createClient(url, apiKey) {
  return new Client({
    url,
    fetchOptions: { headers: { 'X-Api-Key': apiKey } },
    exchanges: [
      cacheExchange({
        // A query that passes `after` reads every page fetched so far.
        resolvers: {
          Query: { categories: relayPagination(), chats: relayPagination() },
          Category: { subcategories: relayPagination() },
          Chat: { messages: relayPagination() },
        },
      }),
      fetchExchange,
    ],
  });
}
