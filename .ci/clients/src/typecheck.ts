// Type-checked by codegen-check.mjs (tsc --noEmit) against the generated
// types: it compiles only if they describe CategoryTree as selected.
import type { CategoryTreeQuery, CategoryTreeQueryVariables } from './gql/graphql';
import { CategoryTree } from './categoryTree';
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
