package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// RootCost returns the fewest upstream calls the root fields of the
// operation need before any nested field runs: the operation's "first
// level". Identical root fields (aliases) share their calls, and fields
// that fail local validation cost nothing. The facade refuses an operation
// whose first level alone exceeds the call budget, before any call.
//
// Each root field's arguments are decoded by the generated code, as for
// its resolver, and checked by the same functions (categoryFilter, the
// planner's Parse functions, canonicalID): the cost is that of the request
// the resolver will make.
func RootCost(ctx context.Context, oc *graphql.OperationContext) int {
	typeName := "Query"
	if oc.Operation.Operation == ast.Mutation {
		typeName = "Mutation"
	}
	var key string // set by the field's cost function
	es := NewExecutableSchema(Config{Complexity: rootCalls(&key)})
	seen := map[string]bool{}
	total := 0
	for i, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{typeName}) {
		key = f.Name
		args := f.ArgumentMap(oc.Variables)
		cost, described, ok := describedRootCost(f.Name, args)
		if ok {
			key = described
		} else {
			cost, ok = es.Complexity(ctx, typeName, f.Name, 0, args)
		}
		if !ok {
			continue // no upstream call (rateLimit is usually free), or arguments that fail
		}
		if typeName == "Mutation" {
			key = fmt.Sprint(i) // every mutation field runs
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		total += cost
	}
	return total
}

// rootCalls is the cost model of RootCost: each root field's upstream
// calls, with *key set to name the requests it makes, so that fields with
// equal keys (aliases, or the same request spelled differently) are
// counted once: they share their calls through the operation's memo.
func rootCalls(key *string) ComplexityRoot {
	var c ComplexityRoot
	c.Query.Categories = func(_ int, first *int, after *string, last *int, before *string, class *model.CategoryClassification, rootsOnly *bool, parentID *string) int {
		f, err := categoryFilter(class, rootsOnly, parentID)
		if err != nil {
			return 0
		}
		req, err := planner.ParseCategories(f, pageArgs(first, after, last, before))
		if err != nil {
			return 0
		}
		*key = fmt.Sprintf("categories %+v", req)
		return req.Calls(0, restclient.MaxPerPage)
	}
	c.Query.Chats = func(_ int, first *int, after *string, last *int, before *string) int {
		req, err := planner.ParseChats(pageArgs(first, after, last, before))
		if err != nil {
			return 0
		}
		*key = fmt.Sprintf("chats %+v", req)
		return req.Calls(restclient.ChatsPerPage, 0)
	}
	// Several lookups by id (category, node, nodes) may all be answered
	// by one page of the family: together they cost at least that one
	// call, and a node id is at least one lookup.
	c.Query.Category = func(_ int, id string) int { return byID(key, validIDs(id)) }
	c.Query.Node = func(_ int, id string) int { return byID(key, validIDs(id)) }
	c.Query.Nodes = func(_ int, ids []string) int {
		if len(ids) > planner.MaxNodes {
			return 0 // refused by the resolver
		}
		for _, id := range ids {
			if validIDs(id) == 1 {
				return byID(key, 1)
			}
		}
		return 0
	}
	c.Query.Chat = func(_ int, id string) int { return lookupCalls(key, "chat", id) }
	c.Mutation.SendChatMessage = func(_ int, in model.SendChatMessageInput) int {
		return validIDs(in.ChatID) * validTitle(in.Content)
	}
	c.Mutation.DeleteChat = func(_ int, in model.DeleteChatInput) int { return validIDs(in.ID) }
	c.Mutation.CreateCategory = func(_ int, in model.CreateCategoryInput) int {
		if in.ParentID != nil && validIDs(*in.ParentID) == 0 {
			return 0
		}
		return validTitle(in.Name)
	}
	c.Mutation.CreateChat = func(_ int, in model.CreateChatInput) int {
		return validTitle(in.Title)
	}
	c.Mutation.UpdateChat = func(_ int, in model.UpdateChatInput) int {
		return validIDs(in.ID) * validTitle(in.Title)
	}
	return c
}

// byID keys the lookups by id that share the family's first page; a
// field that makes no call keeps its own key, so that it does not hide
// one that does.
func byID(key *string, calls int) int {
	if calls > 0 {
		*key = "lookups by id"
	}
	return calls
}

// lookupCalls is one call for a valid id, keyed by it.
func lookupCalls(key *string, kind, id string) int {
	canon, err := canonicalID("id", id)
	if err != nil {
		return 0
	}
	*key = kind + " " + canon
	return 1
}

// validIDs is 1 for a valid id, 0 for one the resolver refuses.
func validIDs(id string) int {
	if _, err := canonicalID("id", id); err != nil {
		return 0
	}
	return 1
}

// validTitle is 1 for a title the resolver sends, 0 for a blank one.
func validTitle(title string) int {
	if strings.TrimSpace(title) == "" {
		return 0
	}
	return 1
}
