// Type-checked by codegen-check.mjs (tsc --noEmit) against the generated
// types: it compiles only if they describe CategoryTree, ImportsPage,
// RecentChats and SendChatMessage as selected, with DateTime a string.
import type {
  CategoryClassification,
  CategoryTreeQuery,
  CategoryTreeQueryVariables,
  ImportsPageQuery,
  ImportsPageQueryVariables,
  RecentChatsQuery,
  RecentChatsQueryVariables,
  SendChatMessageMutation,
  SendChatMessageMutationVariables,
} from './gql/graphql';
import { CategoryTree } from './categoryTree';
import { ImportsPage } from './imports';
import { RecentChats } from './recentChats';
import { SendChatMessage } from './sendChatMessage';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';

export const document: TypedDocumentNode<CategoryTreeQuery, CategoryTreeQueryVariables> = CategoryTree;
export const variables: CategoryTreeQueryVariables = { first: 10 };

export function names(data: CategoryTreeQuery): string[] {
  return (data.categories?.nodes ?? []).flatMap((c) => [c.name, ...(c.subcategories?.nodes.map((s) => s.name) ?? [])]);
}

export function expenses(data: CategoryTreeQuery): number {
  return (data.categories?.nodes ?? []).filter((c) => c.classification === 'EXPENSE').length;
}

export function transfers(data: CategoryTreeQuery): number {
  // @ts-expect-error: TRANSFER is no CategoryClassification
  return (data.categories?.nodes ?? []).filter((c) => c.classification === 'TRANSFER').length;
}

// @ts-expect-error: first is required (Int!)
export const missingFirst: CategoryTreeQueryVariables = {};

export function unselected(data: CategoryTreeQuery): unknown {
  // @ts-expect-error: color was not selected
  return data.categories?.nodes[0]?.color;
}

// Today's Sure sends no classification: the field is nullable.
export function classificationOf(data: CategoryTreeQuery): CategoryClassification | null | undefined {
  return data.categories?.nodes[0]?.classification;
}

export function classificationRequired(data: CategoryTreeQuery): CategoryClassification {
  // @ts-expect-error: classification is nullable (CategoryClassification, not CategoryClassification!)
  return data.categories!.nodes[0]!.classification;
}

// ImportsPage: the imports connection and the rate limit, as selected.
export const importsDocument: TypedDocumentNode<ImportsPageQuery, ImportsPageQueryVariables> = ImportsPage;
export const importsVariables: ImportsPageQueryVariables = { first: 25, after: null, status: 'complete' };

// @ts-expect-error: first is required (Int!)
export const importsWithoutFirst: ImportsPageQueryVariables = { status: 'complete' };

export function terminalImports(data: ImportsPageQuery): string[] {
  return (data.imports?.edges ?? [])
    .filter((e) => e.node.statusDetail?.terminal === true)
    .map((e) => `${e.cursor} ${e.node.id} ${e.node.type} ${e.node.status} ${e.node.stats?.rowsCount}`);
}

export function invalidRows(data: ImportsPageQuery): number | null | undefined {
  return data.imports?.edges[0]?.node.stats?.invalidRowsCount;
}

export function invalidRowsRequired(data: ImportsPageQuery): number {
  // @ts-expect-error: invalidRowsCount is nullable (older servers do not send it)
  return data.imports!.edges[0]!.node.stats!.invalidRowsCount;
}

export function publishableRequired(data: ImportsPageQuery): boolean {
  // @ts-expect-error: each statusDetail flag is nullable
  return data.imports!.edges[0]!.node.statusDetail!.publishable;
}

export function unselectedImportField(data: ImportsPageQuery): unknown {
  // @ts-expect-error: configuration was not selected
  return data.imports?.edges[0]?.node.configuration;
}

export function unlimited(data: ImportsPageQuery): boolean {
  return data.rateLimit!.unlimited;
}

export function limitRequired(data: ImportsPageQuery): number {
  // @ts-expect-error: limit is nullable (null when the server limits nothing)
  return data.rateLimit!.limit;
}

// SendChatMessage: a mutation with its input type.
export const sendDocument: TypedDocumentNode<SendChatMessageMutation, SendChatMessageMutationVariables> = SendChatMessage;
export const sendVariables: SendChatMessageMutationVariables = { input: { chatId: 'a-chat-id', content: 'Hello', model: null } };

// @ts-expect-error: input.chatId is required (ID!)
export const sendWithoutChat: SendChatMessageMutationVariables = { input: { content: 'Hello' } };

export function pending(data: SendChatMessageMutation): boolean {
  return data.sendChatMessage?.message?.aiResponseStatus === 'pending';
}

export function userErrorCodes(data: SendChatMessageMutation): string[] {
  return (data.sendChatMessage?.userErrors ?? []).map((e) => `${e.code} ${e.field?.join('.')}: ${e.message}`);
}

export function unselectedMessageField(data: SendChatMessageMutation): unknown {
  // @ts-expect-error: model was not selected
  return data.sendChatMessage?.message?.model;
}

// RecentChats: DateTime fields are strings (codegen.ts maps every custom
// scalar), so Date parses them and they compare as text.
export const recentDocument: TypedDocumentNode<RecentChatsQuery, RecentChatsQueryVariables> = RecentChats;

export function updatedAt(data: RecentChatsQuery): string {
  return data.chats!.nodes[0]!.updatedAt;
}

export function lastMessageAt(data: RecentChatsQuery): string | null | undefined {
  return data.chats?.nodes[0]?.lastMessageAt;
}

export function updatedAtAsNumber(data: RecentChatsQuery): number {
  // @ts-expect-error: DateTime is a string, not a number (nor any)
  return data.chats!.nodes[0]!.updatedAt;
}

export function lastMessageAtRequired(data: RecentChatsQuery): string {
  // @ts-expect-error: lastMessageAt is nullable (a chat without messages)
  return data.chats!.nodes[0]!.lastMessageAt;
}
