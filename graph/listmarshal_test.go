package graph

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// selectionOf returns the selection of the field at path (response keys)
// in the only operation of query, validated against the schema.
func selectionOf(t *testing.T, query string, path ...string) ast.SelectionSet {
	t.Helper()
	doc, errs := gqlparser.LoadQueryWithRules(NewExecutableSchema(Config{}).Schema(), query, nil) // nil: the default rules
	if errs != nil {
		t.Fatalf("query %q: %v", query, errs)
	}
	sel := doc.Operations[0].SelectionSet
	for _, name := range path {
		var next ast.SelectionSet
		for _, s := range sel {
			if f, ok := s.(*ast.Field); ok && f.Alias == name {
				next = f.SelectionSet
			}
		}
		if next == nil {
			t.Fatalf("query %q: no field %q on the path %v", query, name, path)
		}
		sel = next
	}
	return sel
}

func TestReachesResolver(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		list        []string // path of the list field
		want        bool
	}{
		{"plain fields", `{ categories { nodes { id name color } } }`, []string{"categories", "nodes"}, false},
		{"a resolver", `{ categories { nodes { id parent { name } } } }`, []string{"categories", "nodes"}, true},
		{"a resolver below a plain object", `{ categories { edges { cursor node { subcategories { totalCount } } } } }`, []string{"categories", "edges"}, true},
		{"plain object below", `{ categories { edges { cursor node { name } } } }`, []string{"categories", "edges"}, false},
		{"a resolver in a fragment", `{ categories { nodes { ...F } } } fragment F on Category { name parent { id } }`, []string{"categories", "nodes"}, true},
		{"plain fragment", `{ categories { nodes { ...F } } } fragment F on Category { name }`, []string{"categories", "nodes"}, false},
		{"a resolver in an inline fragment", `{ categories { nodes { ... on Category { subcategories { totalCount } } } } }`, []string{"categories", "nodes"}, true},
		{"chats with messages", `{ chats { nodes { title messages { nodes { content } } } } }`, []string{"chats", "nodes"}, true},
		{"messages of a chat", `{ chats { nodes { title messages { nodes { content toolCalls { functionName } } } } } }`, []string{"chats", "nodes", "messages", "nodes"}, false},
		{"lastMessageAt", `{ chats { nodes { lastMessageAt } } }`, []string{"chats", "nodes"}, true},
		{"typename only", `{ chats { nodes { __typename } } }`, []string{"chats", "nodes"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reachesResolver(selectionOf(t, tc.query, tc.list...)); got != tc.want {
				t.Errorf("reachesResolver = %t, want %t", got, tc.want)
			}
		})
	}
}

// marshalIn marshals a list of n elements with marshalList under an
// operation of query, marshalling element i with elem, and returns the
// JSON and the errors.
func marshalIn(t *testing.T, query string, list []string, n int, elem func(ctx context.Context, i int) graphql.Marshaler) (string, []string) {
	t.Helper()
	sel := selectionOf(t, query, list...)
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "nodes"}}})
	var b bytes.Buffer
	if ret := marshalList(ctx, sel, n, 0, false, elem); ret == nil {
		b.WriteString("null")
	} else {
		ret.MarshalGQL(&b)
	}
	var errs []string
	for _, e := range graphql.GetErrors(ctx) {
		errs = append(errs, e.Path.String()+": "+e.Message)
	}
	return b.String(), errs
}

func TestMarshalList_InOrderKeepsPathsAndPanics(t *testing.T) {
	const plain = `{ categories { nodes { id } } }`
	list := []string{"categories", "nodes"}
	t.Run("each element has its index", func(t *testing.T) {
		got, errs := marshalIn(t, plain, list, 3, func(ctx context.Context, i int) graphql.Marshaler {
			return graphql.MarshalString(graphql.GetPath(ctx).String())
		})
		if want := `["nodes[0]","nodes[1]","nodes[2]"]`; got != want || errs != nil {
			t.Errorf("got %s (errors %q), want %s and none", got, errs, want)
		}
	})
	t.Run("errors of several elements keep their own paths", func(t *testing.T) {
		_, errs := marshalIn(t, plain, list, 3, func(ctx context.Context, i int) graphql.Marshaler {
			if i > 0 {
				graphql.AddErrorf(ctx, "element %d failed", i)
			}
			return graphql.MarshalInt(i)
		})
		if want := []string{"nodes[1]: element 1 failed", "nodes[2]: element 2 failed"}; strings.Join(errs, "|") != strings.Join(want, "|") {
			t.Errorf("errors %q, want %q", errs, want)
		}
	})
	t.Run("a panic nulls the list with an error at the element", func(t *testing.T) {
		got, errs := marshalIn(t, plain, list, 3, func(_ context.Context, i int) graphql.Marshaler {
			if i == 1 {
				panic("boom")
			}
			return graphql.MarshalInt(i)
		})
		if got != "null" || len(errs) != 1 || !strings.HasPrefix(errs[0], "nodes[1]: ") {
			t.Errorf("got %s with errors %q, want null and one error at nodes[1]", got, errs)
		}
	})
}

func TestMarshalList_ConcurrentWhenResolversAreSelected(t *testing.T) {
	// Each element waits for all the others to have started: this only
	// finishes when the elements run at the same time, as sibling
	// resolvers must for their loader calls to be batched. In order, the
	// first would wait forever: synctest reports that deadlock.
	synctest.Test(t, func(t *testing.T) {
		const n = 4
		started := make(chan struct{}, n)
		all := make(chan struct{})
		go func() {
			for range n {
				<-started
			}
			close(all)
		}()
		got, errs := marshalIn(t, `{ categories { nodes { parent { id } } } }`, []string{"categories", "nodes"}, n,
			func(_ context.Context, i int) graphql.Marshaler {
				started <- struct{}{}
				<-all
				return graphql.MarshalInt(i)
			})
		if want := "[0,1,2,3]"; got != want || errs != nil {
			t.Errorf("got %s (errors %q), want %s and none", got, errs, want)
		}
	})
}
