package facade

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"suregql/planner"
)

// sharedQueries lets identical queries of one API key that are in flight at
// the same moment share one execution: the first runs, the others wait for
// its answer. Identical means the same key, the same parsed document (the
// query cache hands one document to every request of the same text), the
// same operation name and the same variables.
//
// A waiting caller takes the answer only when it is one its own execution
// would have given, started a moment earlier: the execution ran to its end
// (its caller's context did not end first) and answered without any error
// (a failure may be transient, and the caller then tries for itself, as a
// caller of a failed coalesced GET does). Otherwise, and when its own
// context ends first, it executes the operation itself.
//
// Each caller keeps its own answer's extensions: its request id, and its
// own upstream calls (none for a caller answered by another's execution,
// as for a GET answered by another caller's: extensions.upstream.calls
// stays the count of the calls made for that request).
//
// A key's mutation unlists the key's executions in flight when it starts
// and when it ends, so that a query sent after a write never takes an
// answer read before it.
//
// Only queries without @defer are shared (a deferred answer comes in
// several parts); mutations and subscriptions never are. Entries live as
// long as their execution: the map holds at most one per request in
// flight.
type sharedQueries struct {
	mu       sync.Mutex
	inFlight map[queryIdentity]*sharedQuery
}

// queryIdentity is what two queries must share to share an execution.
type queryIdentity struct {
	apiKey    string
	doc       *ast.QueryDocument
	operation string
	variables string // JSON, with object keys sorted; "" for none
}

// sharedQuery is one execution others may wait for.
type sharedQuery struct {
	done chan struct{}
	// answer is set before done closes when waiters may take it; it is
	// never changed after (each waiter copies what it adds to).
	answer *graphql.Response
}

func newSharedQueries() *sharedQueries {
	return &sharedQueries{inFlight: map[queryIdentity]*sharedQuery{}}
}

// middleware is the innermost response middleware: it wraps the execution
// of the operation's fields.
func (s *sharedQueries) middleware(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	l := planner.From(ctx)
	if l == nil || l.KeyError() != nil || oc.Operation == nil || oc.Doc == nil {
		return next(ctx)
	}
	apiKey := l.Client().APIKey()
	switch oc.Operation.Operation {
	case ast.Query:
	case ast.Mutation:
		s.unlist(apiKey)
		defer s.unlist(apiKey)
		return next(ctx)
	default:
		return next(ctx)
	}
	if strings.Contains(oc.RawQuery, "defer") {
		return next(ctx)
	}
	id := queryIdentity{apiKey: apiKey, doc: oc.Doc, operation: oc.Operation.Name}
	if len(oc.Variables) > 0 {
		vars, err := json.Marshal(oc.Variables) // sorts object keys
		if err != nil {
			return next(ctx)
		}
		id.variables = string(vars)
	}

	q, joined := s.join(id)
	if !joined {
		return s.run(ctx, id, q, next)
	}
	select {
	case <-q.done:
		if q.answer != nil {
			return answerFor(q.answer)
		}
	case <-ctx.Done():
	}
	return next(ctx)
}

// join returns the execution of id in flight, or lists a new one (joined
// false) that the caller must run.
func (s *sharedQueries) join(id queryIdentity) (q *sharedQuery, joined bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.inFlight[id]; q != nil {
		return q, true
	}
	q = &sharedQuery{done: make(chan struct{})}
	s.inFlight[id] = q
	return q, false
}

// run executes the operation for its caller and for whoever joins it
// meanwhile.
func (s *sharedQueries) run(ctx context.Context, id queryIdentity, q *sharedQuery, next graphql.ResponseHandler) *graphql.Response {
	var resp *graphql.Response
	defer func() { // also on a panic: waiters then execute for themselves
		s.mu.Lock()
		if s.inFlight[id] == q {
			delete(s.inFlight, id)
		}
		s.mu.Unlock()
		if resp != nil && len(resp.Errors) == 0 && resp.HasNext == nil && ctx.Err() == nil {
			// A copy: the caller's outer middlewares add to resp.
			q.answer = answerFor(resp)
			q.answer.Errors = nil // none; and no backing array to append to
		}
		close(q.done)
	}()
	resp = next(ctx)
	return resp
}

// unlist stops apiKey's executions in flight from being joined; their
// callers still get their answers. The map holds one entry per query in
// flight, and mutations are rare.
func (s *sharedQueries) unlist(apiKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.inFlight {
		if id.apiKey == apiKey {
			delete(s.inFlight, id)
		}
	}
}

// answerFor returns a caller's own copy of a shared answer: the data and
// errors are shared (read-only), the extensions map is the caller's.
func answerFor(shared *graphql.Response) *graphql.Response {
	resp := *shared
	resp.Extensions = maps.Clone(shared.Extensions)
	return &resp
}
