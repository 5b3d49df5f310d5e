package graph

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"suregql/paging"
	"suregql/planner"
	"suregql/restclient"
)

// RootCost returns the fewest upstream calls the root fields of the
// operation need before any nested field runs: the operation's "first
// level". Identical root fields (aliases) share their calls, and fields
// that fail local validation cost nothing. The facade refuses an operation
// whose first level alone exceeds the call budget, before any call.
func RootCost(oc *graphql.OperationContext) int {
	typeName := "Query"
	if oc.Operation.Operation == ast.Mutation {
		typeName = "Mutation"
	}
	seen := map[string]bool{}
	total := 0
	for i, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{typeName}) {
		cost, key := rootField(f.Name, f.ArgumentMap(oc.Variables))
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

func rootFieldCost(name string, args map[string]any) int {
	cost, _ := rootField(name, args)
	return cost
}

// rootField returns what a root field costs and a key naming the upstream
// requests it makes: fields with equal keys (aliases, or the same request
// spelled differently) share their calls through the operation's memo.
func rootField(name string, args map[string]any) (cost int, key string) {
	switch name {
	case "categories":
		return categoriesField(name, args)
	case "chats":
		req, err := paging.Parse(chatListName, connectionArgs(args), DefaultChatPage)
		if err != nil {
			return 0, name
		}
		return req.Calls(restclient.ChatsPerPage, 0), fmt.Sprintf("%s %+v", name, req)
	case "category":
		// Several lookups by id may all be answered by one page of the
		// family: together they cost at least that one call.
		if id, ok := args["id"].(string); ok {
			if _, err := restclient.CanonicalID("id", id); err == nil {
				return 1, name
			}
		}
		return 0, name
	case "chat", "import":
		if id, ok := args["id"].(string); ok {
			if canon, err := restclient.CanonicalID("id", id); err == nil {
				return 1, name + " " + canon
			}
		}
		return 0, name
	case "createChat", "updateChat":
		in, _ := args["input"].(map[string]any)
		if title, _ := in["title"].(string); strings.TrimSpace(title) == "" {
			return 0, name
		}
		if id, ok := in["id"].(string); ok && name == "updateChat" {
			if _, err := restclient.CanonicalID("id", id); err != nil {
				return 0, name
			}
		}
		return 1, name
	}
	return 0, name // rateLimit is usually free; introspection always is
}

// categoriesField is rootField for the categories list: its filter and
// page decide the list it reads and how many calls that takes.
func categoriesField(name string, args map[string]any) (cost int, key string) {
	var f planner.CategoryFilter
	if id, ok := args["parentId"].(string); ok {
		canon, err := restclient.CanonicalID("parentId", id)
		if err != nil {
			return 0, name
		}
		f.ParentID = canon
	}
	if c, ok := args["classification"]; ok && c != nil {
		f.Classification = strings.ToLower(fmt.Sprint(c))
	}
	if r, ok := args["rootsOnly"].(bool); ok {
		f.RootsOnly = r
	}
	req, err := paging.Parse(f.List(), connectionArgs(args), DefaultCategoryPage)
	if err != nil {
		return 0, name
	}
	return req.Calls(0, restclient.MaxPerPage), fmt.Sprintf("%s %+v", name, req)
}

// connectionArgs reads first/after/last/before as the resolvers will see
// them.
func connectionArgs(args map[string]any) paging.Args {
	var a paging.Args
	a.First, a.Last = intArg(args["first"]), intArg(args["last"])
	if s, ok := args["after"].(string); ok {
		a.After = &s
	}
	if s, ok := args["before"].(string); ok {
		a.Before = &s
	}
	return a
}

func intArg(v any) *int {
	var n int
	switch x := v.(type) {
	case int:
		n = x
	case int64:
		n = int(x)
	case float64:
		n = int(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return nil
		}
		n = int(i)
	default:
		return nil
	}
	return &n
}
