package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"suregql/badinput"
	"suregql/graph/model"
	"suregql/planner"
	"suregql/restclient"
)

// nodeIDs checks the ids of Query.nodes: at most planner.MaxNodes, each a
// UUID. A junk id is refused on its own (its element answers null with a
// BAD_USER_INPUT error at its index); too many ids refuse the field.
func nodeIDs(ids []string) (valid []string, bad []error, err error) {
	if len(ids) > planner.MaxNodes {
		return nil, nil, badinput.New("ids", fmt.Sprintf("at most %d ids, got %d", planner.MaxNodes, len(ids)))
	}
	valid, bad = make([]string, len(ids)), make([]error, len(ids))
	for i, id := range ids {
		valid[i], bad[i] = canonicalID("ids", id)
	}
	return valid, bad, nil
}

// nodeRequest is what the node field being resolved asks the planner for
// ids: what its `... on Chat` reads of messages, and the operation's root
// fields that hand out categories (whose answers may hold the ids).
func nodeRequest(ctx context.Context, ids []string) planner.NodeRequest {
	oc := graphql.GetOperationContext(ctx)
	req := planner.NodeRequest{IDs: ids, Chat: chatWantOf(oc, graphql.CollectFieldsCtx(ctx, []string{"Chat", "Node"}), "")}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		// A deferred field may answer after node: not waited for.
		if (f.Name == "categories" || f.Name == "category") && !f.IsDeferred() {
			req.CategoryProducers = append(req.CategoryProducers, f.Alias)
		}
	}
	return req
}

// categoryAnswered tells node fields waiting for the category root field
// being resolved that its answer is in. Deferred by those resolvers, so
// that it runs however they end.
func categoryAnswered(ctx context.Context) {
	if p, fc := planner.From(ctx), graphql.GetFieldContext(ctx); p != nil && fc != nil {
		p.RootFieldAnswered(fc.Field.Alias)
	}
}

// nodeFromObject maps what the planner found for a node id; an id nobody
// has is null without an error, as Relay's node field answers it.
func nodeFromObject(ctx context.Context, p *planner.Planner, obj planner.Object, err error) (model.Node, error) {
	var nf *planner.NotFoundError
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, err
	case obj.Category != nil:
		fields := graphql.CollectFieldsCtx(ctx, []string{"Category", "Node"})
		p.Expect([]*restclient.Category{obj.Category}, categoryWant(graphql.GetOperationContext(ctx), fields))
		return categoryFromREST(obj.Category), nil
	case obj.Chat != nil:
		return chatFromShow(obj.Chat, p.MessagePage(obj.Chat)), nil
	case obj.Import != nil:
		return importFromREST(obj.Import), nil
	}
	return nil, nil
}
