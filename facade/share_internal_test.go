package facade

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"suregql/planner"
	"suregql/restclient"
)

// shareEnv runs operations through one sharedQueries with a fake
// execution that waits for release, and counts the executions.
type shareEnv struct {
	t          *testing.T
	s          *sharedQueries
	shared     *planner.Shared
	release    chan struct{}
	executions atomic.Int64
	// answer is what an execution answers.
	answer func() *graphql.Response
}

func newShareEnv(t *testing.T) *shareEnv {
	t.Helper()
	client, err := restclient.New("http://sure.test")
	if err != nil {
		t.Fatal(err)
	}
	return &shareEnv{
		t: t, s: newSharedQueries(), shared: &planner.Shared{Upstream: client}, release: make(chan struct{}),
		answer: func() *graphql.Response { return &graphql.Response{Data: json.RawMessage(`{"n":1}`)} },
	}
}

// op describes one request.
type op struct {
	key  string
	doc  *ast.QueryDocument
	kind ast.Operation
	vars map[string]any
	ctx  context.Context // nil: the test's
}

var (
	docA = &ast.QueryDocument{}
	docB = &ast.QueryDocument{}
)

func query(key string, doc *ast.QueryDocument, vars map[string]any) op {
	return op{key: key, doc: doc, kind: ast.Query, vars: vars}
}

// send runs o through the middleware on a goroutine; the answer arrives
// on the channel.
func (e *shareEnv) send(o op) <-chan *graphql.Response {
	ctx := o.ctx
	if ctx == nil {
		ctx = e.t.Context()
	}
	ctx = planner.WithPlanner(ctx, planner.New(e.shared, o.key))
	ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{
		RawQuery: "{ categories { nodes { id } } }", Doc: o.doc, Variables: o.vars,
		Operation: &ast.OperationDefinition{Operation: o.kind},
	})
	out := make(chan *graphql.Response, 1)
	go func() {
		out <- e.s.middleware(ctx, func(ctx context.Context) *graphql.Response {
			e.executions.Add(1)
			select {
			case <-e.release:
			case <-ctx.Done():
			}
			return e.answer()
		})
	}()
	return out
}

func TestSharedQueries(t *testing.T) {
	for _, tc := range []struct {
		name string
		// first is sent first; then (once it executes) the others.
		first          op
		others         []op
		wantExecutions int64
	}{
		{
			name:           "identical queries of a key run once",
			first:          query("k1", docA, map[string]any{"id": "x", "n": 1}),
			others:         []op{query("k1", docA, map[string]any{"n": 1, "id": "x"}), query("k1", docA, map[string]any{"id": "x", "n": 1})},
			wantExecutions: 1,
		},
		{
			name:           "other keys never share",
			first:          query("k1", docA, nil),
			others:         []op{query("k2", docA, nil), query("k3", docA, nil)},
			wantExecutions: 3,
		},
		{
			name:           "other documents or variables never share",
			first:          query("k1", docA, map[string]any{"id": "x"}),
			others:         []op{query("k1", docB, map[string]any{"id": "x"}), query("k1", docA, map[string]any{"id": "y"})},
			wantExecutions: 3,
		},
		{
			name:           "mutations never share",
			first:          op{key: "k1", doc: docA, kind: ast.Mutation},
			others:         []op{{key: "k1", doc: docA, kind: ast.Mutation}},
			wantExecutions: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newShareEnv(t)
				answers := []<-chan *graphql.Response{e.send(tc.first)}
				synctest.Wait()
				for _, o := range tc.others {
					answers = append(answers, e.send(o))
				}
				synctest.Wait()
				close(e.release)
				seen := map[*graphql.Response]bool{}
				for i, ch := range answers {
					resp := <-ch
					if resp == nil || string(resp.Data) != `{"n":1}` {
						t.Fatalf("answer %d = %+v, want the data", i, resp)
					}
					if seen[resp] {
						t.Errorf("answer %d is another caller's *Response, want each caller its own", i)
					}
					seen[resp] = true
				}
				if got := e.executions.Load(); got != tc.wantExecutions {
					t.Errorf("executions = %d, want %d", got, tc.wantExecutions)
				}
			})
		})
	}
}

func TestSharedQueries_WaitersExecuteThemselves(t *testing.T) {
	t.Run("after an answer with errors", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newShareEnv(t)
			e.answer = func() *graphql.Response {
				return &graphql.Response{Data: json.RawMessage(`{"n":null}`), Errors: gqlerror.List{gqlerror.Errorf("upstream unavailable")}}
			}
			first := e.send(query("k1", docA, nil))
			synctest.Wait()
			second := e.send(query("k1", docA, nil))
			synctest.Wait()
			close(e.release)
			<-first
			<-second
			if got := e.executions.Load(); got != 2 {
				t.Errorf("executions = %d, want 2: a failure is not shared", got)
			}
		})
	})
	t.Run("after the first caller's context ended", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newShareEnv(t)
			ctx, cancel := context.WithCancel(t.Context())
			o := query("k1", docA, nil)
			o.ctx = ctx
			first := e.send(o)
			synctest.Wait()
			second := e.send(query("k1", docA, nil))
			synctest.Wait()
			cancel() // the first client went away: its execution stops
			<-first
			synctest.Wait()
			close(e.release)
			if resp := <-second; resp == nil || string(resp.Data) != `{"n":1}` {
				t.Errorf("second answer = %+v, want its own execution's data", resp)
			}
			if got := e.executions.Load(); got != 2 {
				t.Errorf("executions = %d, want 2", got)
			}
		})
	})
	t.Run("a query after the key's mutation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newShareEnv(t)
			before := e.send(query("k1", docA, nil))
			synctest.Wait()
			mutation := e.send(op{key: "k1", doc: docB, kind: ast.Mutation})
			synctest.Wait()
			after := e.send(query("k1", docA, nil)) // must not take the answer read before the write
			synctest.Wait()
			close(e.release)
			for _, ch := range []<-chan *graphql.Response{before, mutation, after} {
				<-ch
			}
			if got := e.executions.Load(); got != 3 {
				t.Errorf("executions = %d, want 3", got)
			}
		})
	})
}

func TestSharedQueries_AnswersAreEachCallersOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newShareEnv(t)
		e.answer = func() *graphql.Response {
			return &graphql.Response{Data: json.RawMessage(`{"n":1}`), Extensions: map[string]any{"x": 1}}
		}
		first := e.send(query("k1", docA, nil))
		synctest.Wait()
		second := e.send(query("k1", docA, nil))
		synctest.Wait()
		close(e.release)
		a, b := <-first, <-second
		a.Extensions["requestId"] = "a" // what an outer middleware does
		if _, ok := b.Extensions["requestId"]; ok || b.Extensions["x"] != 1 {
			t.Errorf("second caller's extensions = %v, want its own copy of {x: 1}", b.Extensions)
		}
	})
}
