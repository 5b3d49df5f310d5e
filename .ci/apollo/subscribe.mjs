// Runs README.md's subscription snippet (subscriptions.mjs) against the
// demo server at the endpoint given (…/graphql): a chat is created, a
// chatMessageAdded subscription opened over graphql-ws, a message sent
// through the facade, and the assistant's reply (with its content and
// model) must arrive within 30 seconds. Exits non-zero otherwise.
import { gql } from '@apollo/client';
import WebSocket from 'ws';

import { createLiveClient } from './subscriptions.mjs';

const [endpoint] = process.argv.slice(2);
if (!endpoint) {
  console.error('usage: node subscribe.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}
const client = createLiveClient(endpoint, 'demo-key', WebSocket);

const created = await client.mutate({
  mutation: gql`mutation { createChat(input: { title: "CI subscription" }) { chat { id } } }`,
});
const chatId = created.data.createChat.chat.id;

const question = 'What did I spend on groceries?';
const reply = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('no reply pushed within 30 s')), 30_000);
  const sub = client
    .subscribe({
      query: gql`subscription ($id: ID!) { chatMessageAdded(chatId: $id) { id role content model } }`,
      variables: { id: chatId },
    })
    .subscribe({
      next({ data, error }) {
        if (error) {
          clearTimeout(timer);
          reject(error);
          return;
        }
        const m = data?.chatMessageAdded;
        console.log(`pushed: ${m.role} ${JSON.stringify(m.content).slice(0, 60)}`);
        if (m.role === 'assistant') {
          clearTimeout(timer);
          sub.unsubscribe();
          resolve(m);
        }
      },
      error(err) {
        clearTimeout(timer);
        reject(err);
      },
    });
  // The subscription reads the chat as it is first; the message is sent
  // once it has had the time to (the reply comes seconds later anyway).
  setTimeout(() => {
    client
      .mutate({
        mutation: gql`mutation ($id: ID!, $c: String!) { sendChatMessage(input: { chatId: $id, content: $c }) { message { id } } }`,
        variables: { id: chatId, c: question },
      })
      .catch(reject);
  }, 500);
});
if (!reply.content.includes(question) || !reply.model) {
  console.error('the reply lacks its content or model:', reply);
  process.exit(1);
}
console.log('apollo subscription: the assistant reply was pushed over graphql-ws');
client.stop();
process.exit(0);
