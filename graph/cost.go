package graph

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"suregql/graph/loader"
	"suregql/paging"
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
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{typeName}) {
		args := f.ArgumentMap(oc.Variables)
		key := f.Name + canonicalArgs(args)
		if seen[key] {
			continue
		}
		seen[key] = true
		total += rootFieldCost(f.Name, args)
	}
	return total
}

func rootFieldCost(name string, args map[string]any) int {
	switch name {
	case "categories":
		var f loader.CategoryFilter
		if id, ok := args["parentId"].(string); ok {
			canon, err := restclient.CanonicalID("parentId", id)
			if err != nil {
				return 0
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
			return 0
		}
		return req.Calls(0, restclient.MaxPerPage)
	case "chats":
		req, err := paging.Parse(chatListName, connectionArgs(args), DefaultChatPage)
		if err != nil {
			return 0
		}
		return req.Calls(restclient.ChatsPerPage, 0)
	case "category", "chat", "import":
		if id, ok := args["id"].(string); ok {
			if _, err := restclient.CanonicalID("id", id); err == nil {
				return 1
			}
		}
		return 0
	case "createChat", "updateChat":
		in, _ := args["input"].(map[string]any)
		if title, _ := in["title"].(string); strings.TrimSpace(title) == "" {
			return 0
		}
		if id, ok := in["id"].(string); ok && name == "updateChat" {
			if _, err := restclient.CanonicalID("id", id); err != nil {
				return 0
			}
		}
		return 1
	}
	return 0 // rateLimit is usually free; introspection always is
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

// canonicalArgs renders arguments in a stable order, to recognise
// identical fields.
func canonicalArgs(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%v", k, args[k])
	}
	return b.String()
}
