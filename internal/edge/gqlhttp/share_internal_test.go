package gqlhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
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
	e := &shareEnv{
		t: t, shared: &planner.Shared{Upstream: client}, release: make(chan struct{}),
		answer: func() *graphql.Response { return &graphql.Response{Data: json.RawMessage(`{"n":1}`)} },
	}
	// A waiter's answer passes here: it names the leader's operation.
	e.s = newSharedQueries(func(ctx context.Context, answer graphql.ResponseHandler) *graphql.Response {
		if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Name != "Op" {
			t.Errorf("a waiter's answer names operation %+v, want the leader's", op)
		}
		return answer(ctx)
	})
	return e
}

// op describes one request.
type op struct {
	key  string
	body string
	kind ast.Operation
	ctx  context.Context // nil: the test's
}

const (
	bodyA = `{"query":"{ categories { nodes { id } } }"}`
	bodyB = `{"query":"{ categories { nodes { name } } }"}`
)

func query(key, body string) op { return op{key: key, body: body, kind: ast.Query} }

// send answers o on a goroutine, through sharedQueries as postTransport
// does: an execution passes through the middleware. The answer arrives on
// the channel.
func (e *shareEnv) send(o op) <-chan *graphql.Response {
	ctx := o.ctx
	if ctx == nil {
		ctx = e.t.Context()
	}
	ctx = withCaller(ctx, e.shared, testRing.Caller(o.key))
	ctx = graphql.StartOperationTrace(ctx) // as gqlgen's handler does
	exec := func(ctx context.Context) *graphql.Response {
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{
			RawQuery: "{ categories { nodes { id } } }", Doc: &ast.QueryDocument{},
			Operation: &ast.OperationDefinition{Operation: o.kind, Name: "Op"},
		})
		return e.s.middleware(ctx, func(ctx context.Context) *graphql.Response {
			e.executions.Add(1)
			select {
			case <-e.release:
			case <-ctx.Done():
			}
			return e.answer()
		})
	}
	out := make(chan *graphql.Response, 1)
	go func() {
		out <- e.s.answer(ctx, sharedRequest{id: requestIdentity{caller: idOf(o.key), method: http.MethodPost, request: o.body}}, exec)
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
			first:          query("k1", bodyA),
			others:         []op{query("k1", bodyA), query("k1", bodyA)},
			wantExecutions: 1,
		},
		{
			name:           "other keys never share",
			first:          query("k1", bodyA),
			others:         []op{query("k2", bodyA), query("k3", bodyA)},
			wantExecutions: 3,
		},
		{
			name:           "other bodies never share",
			first:          query("k1", bodyA),
			others:         []op{query("k1", bodyB), query("k1", bodyA+" ")},
			wantExecutions: 3,
		},
		{
			name:           "mutations never share",
			first:          op{key: "k1", body: bodyA, kind: ast.Mutation},
			others:         []op{{key: "k1", body: bodyA, kind: ast.Mutation}},
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
			first := e.send(query("k1", bodyA))
			synctest.Wait()
			second := e.send(query("k1", bodyA))
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
			o := query("k1", bodyA)
			o.ctx = ctx
			first := e.send(o)
			synctest.Wait()
			second := e.send(query("k1", bodyA))
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
			before := e.send(query("k1", bodyA))
			synctest.Wait()
			mutation := e.send(op{key: "k1", body: bodyB, kind: ast.Mutation})
			synctest.Wait()
			after := e.send(query("k1", bodyA)) // must not take the answer read before the write
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
		first := e.send(query("k1", bodyA))
		synctest.Wait()
		second := e.send(query("k1", bodyA))
		synctest.Wait()
		close(e.release)
		a, b := <-first, <-second
		a.Extensions["requestId"] = "a" // what an outer middleware does
		if _, ok := b.Extensions["requestId"]; ok || b.Extensions["x"] != 1 {
			t.Errorf("second caller's extensions = %v, want its own copy of {x: 1}", b.Extensions)
		}
	})
}

// TestSharedQueries_OverHTTP sends identical POSTs, or GETs, of one key
// through the whole handler while the first waits on the upstream: one
// execution and one call answer them all, and each answer is still its
// caller's own, with its request id, its own count of calls, its log line
// and its place in the metrics.
// testRing makes the callers of the tests, as the edge's ring does.
var testRing = callerkey.NewRing(nil, false)

// idOf is the identity the edge gives a request made with apiKey.
func idOf(apiKey string) string {
	c := testRing.Caller(apiKey)
	if c.Err != nil {
		return ""
	}
	return c.Key.ID()
}
