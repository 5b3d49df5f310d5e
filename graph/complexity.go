package graph

import (
	"context"
	"math"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// Complexity is the cost model of the schema, for graph.Config.Complexity:
// a field costs 1 plus what it selects, and a list costs what one item
// costs times the items it may return, as Shopify's and GitHub's public
// cost models count. A connection (categories, subcategories, chats,
// messages) returns its window: first or last, or the default page, at
// most restclient.MaxPerPage. Its nodes and edges are the list, so the
// connection multiplies everything it selects (totalCount and pageInfo
// too: a slight overestimate that keeps the model simple). Cycles of the
// schema (subcategories → parent → subcategories) multiply at each lap.
//
// The figure estimates what execution builds and marshals, one unit per
// value; the facade's complexity limit bounds it. It is not the upstream
// call budget, which RootCost and the planner count.
func Complexity() ComplexityRoot {
	var c ComplexityRoot
	c.Query.Categories = func(child int, first *int, _ *string, last *int, _ *string, _ *model.CategoryClassification, _ *bool, _ *string) int {
		return connectionCost(child, first, last, planner.DefaultCategoryPage)
	}
	c.Query.Chats = func(child int, first *int, _ *string, last *int, _ *string) int {
		return connectionCost(child, first, last, planner.DefaultChatPage)
	}
	c.Category.Subcategories = func(child int, first *int, _ *string, last *int, _ *string) int {
		return connectionCost(child, first, last, planner.DefaultCategoryPage)
	}
	c.Chat.Messages = func(child int, first *int, _ *string, last *int, _ *string) int {
		return connectionCost(child, first, last, planner.DefaultMessagePage)
	}
	c.Query.Nodes = func(child int, ids []string) int {
		return saturatingAdd(1, saturatingMul(min(len(ids), planner.MaxNodes), child))
	}
	c.Message.ToolCalls = func(child int) int {
		return saturatingAdd(1, saturatingMul(toolCallsPerMessage, child))
	}
	return c
}

// toolCallsPerMessage is the size assumed for a message's toolCalls, a
// list without paging: the assistant calls a few functions per answer.
const toolCallsPerMessage = 5

// connectionCost is 1 plus the window times what each item selects.
func connectionCost(child int, first, last *int, defaultPage int) int {
	window := defaultPage
	switch {
	case first != nil && last != nil:
		window = max(*first, *last) // refused by the resolver; counted as the larger
	case first != nil:
		window = *first
	case last != nil:
		window = *last
	}
	// Out of range, the resolver refuses the window; the estimate stays
	// within what a valid one may cost.
	window = min(max(window, 0), restclient.MaxPerPage)
	return saturatingAdd(1, saturatingMul(window, child))
}

// saturatingAdd and saturatingMul saturate at math.MaxInt: complexity must not wrap around
// into a small number. Both take non-negative operands.
func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func saturatingMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// NewSchema is NewExecutableSchema whose cost model (Complexity) also
// counts every list field of a described resource as a connection of its
// window (describedComplexity), read from the description, not from a
// function per field of cfg.Complexity.
func NewSchema(cfg Config) graphql.ExecutableSchema {
	return describedSchema{NewExecutableSchema(cfg)}
}

// describedSchema is an executable schema whose Complexity knows the
// described resources' list fields.
type describedSchema struct{ graphql.ExecutableSchema }

// Complexity implements graphql.ExecutableSchema.
func (s describedSchema) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if n, ok := describedComplexity(typeName, field, child, args); ok {
		return n, true
	}
	return s.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
}
