package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/limits/badinput"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
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
// ids: what its `... on Chat` reads of messages, and whether an element
// of a list answers its selection. The operation's other node fields were
// announced when it began (Planning).
func nodeRequest(ctx context.Context, ids []string) planner.NodeRequest {
	own := nodeAsk(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, ids)
	return planner.NodeRequest{IDs: ids, Chat: own.Chat, Summaries: own.Summaries}
}

// nodeAsk is what a node field with this selection asks of ids.
func nodeAsk(oc *graphql.OperationContext, sel ast.SelectionSet, ids []string) planner.NodeAsk {
	chat := graphql.CollectFields(oc, sel, []string{"Chat", "Node"})
	return planner.NodeAsk{
		IDs:       ids,
		Chat:      chatWantOf(oc, chat, ""),
		Summaries: summaryAnswers(oc, sel, chat),
	}
}

// summaryAnswers reports whether an element of a list answers a node's
// selection, whatever the kind it finds: it reads no chat's messages, and
// of a described resource's object only what its list sends (its hook).
func summaryAnswers(oc *graphql.OperationContext, sel ast.SelectionSet, chat []graphql.CollectedField) bool {
	for _, f := range chat {
		if f.Name == "messages" {
			return false
		}
	}
	for _, d := range describedResources {
		if !d.answersFromList(oc, graphql.CollectFields(oc, sel, []string{d.typeName(), "Node"})) {
			return false
		}
	}
	return true
}

// nodeFieldIDs returns the valid ids a node or nodes field with these
// arguments asks (none for a nodes field its resolver refuses whole).
func nodeFieldIDs(name string, args map[string]any) []string {
	var raw []any
	if id, ok := args["id"].(string); ok && name == "node" {
		raw = []any{id}
	}
	if name == "nodes" {
		switch v := args["ids"].(type) {
		case []any:
			raw = v
		case []string:
			for _, id := range v {
				raw = append(raw, id)
			}
		}
		if len(raw) > planner.MaxNodes {
			return nil
		}
	}
	var ids []string
	for _, v := range raw {
		if id, ok := v.(string); ok {
			if canon, err := canonicalID("id", id); err == nil {
				ids = append(ids, canon)
			}
		}
	}
	return ids
}

// categoryAnswered tells lookups waiting for the category root field
// being resolved that its answer is in, as soon as it is: deferred by
// those resolvers. Planning says so too when the field ends, however it
// ends; this only says it earlier, before the field's children resolve.
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
	case obj.ChatSummary != nil:
		return chatFromSummary(obj.ChatSummary), nil
	case obj.Spec != nil:
		if d := describedResources[obj.Spec]; d != nil {
			return d.node(obj), nil
		}
	}
	return nil, nil
}
