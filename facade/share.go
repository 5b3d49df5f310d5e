package facade

import (
	"context"
	"maps"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"suregql/planner"
)

// sharedQueries lets identical requests of one API key that are in flight
// at the same moment share one execution: the first runs the operation,
// the others wait for its answer and skip the whole of GraphQL (parsing,
// validation, the limits, execution). Identical means the same key and
// the same POST body, or the same GET query string, byte for byte.
//
// A waiting caller takes the answer only when it is one its own execution
// would have given, started a moment earlier: the operation is a query
// without @defer, its execution ran to its end (its caller's context did
// not end first) and it answered without any error (a failure may be
// transient, and the caller then tries for itself, as a caller of a failed
// coalesced GET does). Otherwise, and when its own context ends first, it
// executes the operation itself.
//
// Each caller keeps its own answer's extensions, log line, metrics and
// span: its request id, and its own upstream calls (none for a caller
// answered by another's execution, as for a GET answered by another
// caller's: extensions.upstream.calls stays the count of the calls made
// for that request).
//
// A key's mutation unlists the key's executions in flight when it starts
// and when it ends, so that a query sent after a write never takes an
// answer read before it.
//
// Entries live as long as their execution: the map holds at most one per
// request in flight, and its key holds the request (at most maxBodyBytes).
type sharedQueries struct {
	mu       sync.Mutex
	inFlight map[requestIdentity]*sharedQuery
}

// requestIdentity is what two requests must share to share an execution.
// The answer's media type is not part of it: an answer that is shared has
// data and no errors, and reads the same in both.
type requestIdentity struct {
	apiKey  string
	method  string
	request string // a POST's body, a GET's query string
}

// sharedQuery is one execution others may wait for.
type sharedQuery struct {
	id   requestIdentity
	done chan struct{}
	once sync.Once // closes done
	// answer is set before done closes when waiters may take it; it is
	// never changed after (each waiter copies what it adds to). operation
	// and doc are what the waiters' log lines, metrics and spans name.
	answer    *graphql.Response
	operation *ast.OperationDefinition
	doc       *ast.QueryDocument
}

// sharedAnswer is what a waiter is handed: the leader's answer and the
// operation it answered.
type sharedAnswer struct {
	answer    *graphql.Response
	operation *ast.OperationDefinition
	doc       *ast.QueryDocument
}

type leaderKey struct{}

func newSharedQueries() *sharedQueries {
	return &sharedQueries{inFlight: map[requestIdentity]*sharedQuery{}}
}

// answer answers the request id: when an identical one is in flight, with
// its answer passed through own (which adds what is the caller's own);
// otherwise, or when that answer cannot be shared, with exec's. A nil
// sharedQueries always runs exec.
func (s *sharedQueries) answer(ctx context.Context, id requestIdentity, exec graphql.ResponseHandler,
	own func(context.Context, sharedAnswer) *graphql.Response,
) *graphql.Response {
	if s == nil || id.apiKey == "" {
		return exec(ctx)
	}
	q, joined := s.join(id)
	if !joined {
		defer s.finish(q, nil) // also on a panic: waiters then execute for themselves
		return exec(context.WithValue(ctx, leaderKey{}, q))
	}
	select {
	case <-q.done:
		if q.answer != nil {
			return own(ctx, sharedAnswer{answer: answerFor(q.answer), operation: q.operation, doc: q.doc})
		}
	case <-ctx.Done():
	}
	return exec(ctx)
}

// middleware is the innermost response middleware: it wraps the execution
// of the operation's fields, and publishes a leader's answer to its
// waiters when they may take it.
func (s *sharedQueries) middleware(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	q, _ := ctx.Value(leaderKey{}).(*sharedQuery)
	if oc.Operation == nil {
		return next(ctx)
	}
	switch oc.Operation.Operation {
	case ast.Query:
	case ast.Mutation:
		if l := planner.From(ctx); l != nil && l.KeyError() == nil {
			apiKey := l.Client().APIKey()
			s.unlist(apiKey)
			defer s.unlist(apiKey)
		}
		return next(ctx)
	default:
		return next(ctx)
	}
	if q == nil || strings.Contains(oc.RawQuery, "defer") {
		return next(ctx)
	}
	resp := next(ctx)
	if resp != nil && len(resp.Errors) == 0 && resp.HasNext == nil && ctx.Err() == nil {
		// A copy: the caller's outer middlewares add to resp.
		shared := answerFor(resp)
		shared.Errors = nil // none; and no backing array to append to
		s.finish(q, &sharedAnswer{answer: shared, operation: oc.Operation, doc: oc.Doc})
	}
	return resp
}

// join returns the execution of id in flight, or lists a new one (joined
// false) that the caller must run.
func (s *sharedQueries) join(id requestIdentity) (q *sharedQuery, joined bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.inFlight[id]; q != nil {
		return q, true
	}
	q = &sharedQuery{id: id, done: make(chan struct{})}
	s.inFlight[id] = q
	return q, false
}

// finish unlists q and wakes its waiters, with a (nil: none they may take)
// when it is the first to finish it.
func (s *sharedQueries) finish(q *sharedQuery, a *sharedAnswer) {
	q.once.Do(func() {
		s.mu.Lock()
		if s.inFlight[q.id] == q {
			delete(s.inFlight, q.id)
		}
		s.mu.Unlock()
		if a != nil {
			q.answer, q.operation, q.doc = a.answer, a.operation, a.doc
		}
		close(q.done)
	})
}

// unlist stops apiKey's executions in flight from being joined; their
// callers still get their answers. The map holds one entry per request
// in flight, and mutations are rare.
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
