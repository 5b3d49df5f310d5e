import { graphql } from './gql';
import type { RecentChatsQuery } from './gql/graphql';

// DateTime fields are typed string (codegen.ts's scalars): an RFC 3339
// timestamp, which Date parses and which sorts as text.
export const RecentChats = graphql(`
  query RecentChats {
    chats(first: 10) {
      nodes { id title updatedAt lastMessageAt }
    }
  }
`);

export function lastActive(data: RecentChatsQuery): { title: string; at: Date }[] {
  return (data.chats?.nodes ?? [])
    .map((c) => ({ title: c.title, at: new Date(c.lastMessageAt ?? c.updatedAt) }))
    .sort((a, b) => b.at.getTime() - a.at.getTime());
}
