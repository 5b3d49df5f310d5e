/**
 * @generated SignedSource<<e249797881e3eeb4d1b16cedd1df6ccf>>
 * @lightSyntaxTransform
 */

/* eslint-disable */

'use strict';

import ChatRowRefetchQuery_graphql from './ChatRowRefetchQuery.graphql';

var node = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "refetch": {
      "connection": null,
      "fragmentPathInResult": [
        "node"
      ],
      "operation": ChatRowRefetchQuery_graphql,
      "identifierInfo": {
        "identifierField": "id",
        "identifierQueryVariableName": "id"
      }
    }
  },
  "name": "ChatRow_chat",
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "id",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "title",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "messageCount",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "lastMessageAt",
      "storageKey": null
    }
  ],
  "type": "Chat",
  "abstractKey": null
};

node.hash = "4165d7a040307f6f4f2fb2cb1ea55d35";

export default node;
