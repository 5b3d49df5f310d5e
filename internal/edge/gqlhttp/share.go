package gqlhttp

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/planning/planner"
)

// sharedQueries lets identical requests of one API key that are in flight
// at the same moment share one execution: the first runs the operation,
// the others wait for its answer and skip the whole of GraphQL (parsing,
// validation, the limits, execution). Identical means the same key and
// the same POST body, or the same GET query string, byte for byte.
//
// A waiting caller takes the answer only when it is one its own execution
// would have given, started a moment earlier: the operation is a query,
// its execution ran to its end (its caller's context did
// not end first), and it answered without errors or with errors that the
// same request gets every time (see deterministicCodes). After any other
// failure (a transient one: the upstream unavailable, a rate limit) the
// caller tries for itself, with what its own deadline has left, as a
// caller of a failed coalesced GET does; and so it does at once when the
// operation turns out to be no shareable query (a mutation), and
// when its own context ends first.
//
// Each caller keeps its own answer's extensions, log line, metrics and
// span, and passes the response-size limit: its request id, and its own
// upstream calls (none for a caller answered by another's execution, as
// for a GET answered by another caller's: extensions.upstream.calls stays
// the count of the calls made for that request).
//
// A key's mutation unlists the key's executions in flight when it starts
// and when it ends, so that a query sent after a write never takes an
// answer read before it.
//
// Entries live as long as their execution: the map holds at most one per
// request in flight, and its key holds the request (at most maxBodyBytes).
type sharedQueries struct {
	// answered passes a waiter's answer through what every answer of an
	// operation carries (request id, cost report, log line, metrics, the
	// response-size limit): the waiter skips the executor, whose response
	// middlewares give them to the others.
	answered func(context.Context, graphql.ResponseHandler) *graphql.Response

	mu sync.Mutex
	// inFlight holds the executions others may join, by API key: a
	// mutation unlists its key's at once.
	inFlight map[string]map[requestIdentity]*sharedQuery
}

// sharedRequest is a request as the sharing sees it: its identity, its
// headers, and, for a POST, its decoded parameters (a GET's are read from
// its query string only for a waiter, which names them in its log line).
type sharedRequest struct {
	id     requestIdentity
	header http.Header
	params *graphql.RawParams // nil for a GET
}

// requestIdentity is what two requests must share to share an execution.
// The answer's media type is not part of it: a shared answer reads the
// same in both.
type requestIdentity struct {
	caller  string // the caller's keyed id (callerID), never its key
	method  string
	request string // a POST's body, a GET's query string
}

// sharedQuery is one execution others may wait for.
type sharedQuery struct {
	id   requestIdentity
	done chan struct{}
	once sync.Once // closes done
	// published is set before done closes when waiters may take the
	// answer; it is never changed after (each waiter copies what it adds
	// to).
	published *sharedAnswer
}

// sharedAnswer is what a leader publishes: its answer, and the operation
// it answered, which the waiters' log lines, metrics and spans name.
type sharedAnswer struct {
	answer    *graphql.Response
	operation *ast.OperationDefinition
	doc       *ast.QueryDocument
}

// deterministicCodes are the error codes a query's answer may carry and
// still be shared: what the same request, sent a moment later, is answered
// every time (the caller's input, the key's rights, an id the upstream
// does not know), unlike a transient failure that a second try may not
// meet.
var deterministicCodes = map[string]bool{
	graph.CodeBadUserInput:     true,
	graph.CodeNotFound:         true,
	graph.CodeUnauthenticated:  true,
	graph.CodeForbidden:        true,
	graph.CodeUpstreamRejected: true,
	// The server's version lacks what was asked: so it will a moment later.
	graph.CodeUnsupportedByUpstream: true,
}

type leaderKey struct{}

// newSharedQueries returns an empty sharedQueries whose waiters' answers
// pass through answered.
func newSharedQueries(answered func(context.Context, graphql.ResponseHandler) *graphql.Response) *sharedQueries {
	return &sharedQueries{answered: answered, inFlight: map[string]map[requestIdentity]*sharedQuery{}}
}

// answer answers req: when an identical request is in flight, with its
// answer, made the caller's own; otherwise, or when that answer cannot be
// shared, with exec's (nil when exec wrote the answer itself). A nil
// sharedQueries always runs exec.
func (s *sharedQueries) answer(ctx context.Context, req sharedRequest, exec graphql.ResponseHandler) *graphql.Response {
	if s == nil || req.id.caller == "" {
		return exec(ctx)
	}
	q, joined := s.join(req.id)
	if !joined {
		defer s.finish(q, nil) // also on a panic: waiters then execute for themselves
		return exec(context.WithValue(ctx, leaderKey{}, q))
	}
	select {
	case <-q.done:
		if a := q.published; a != nil {
			return s.answered(waitedContext(ctx, req, a), graphql.OneShot(answerFor(a.answer)))
		}
	case <-ctx.Done():
	}
	return exec(ctx)
}

// waitedContext returns the context a waiter's answer passes the response
// middlewares in: an operation context naming the operation a answers,
// started when the waiter's request arrived.
func waitedContext(ctx context.Context, req sharedRequest, a *sharedAnswer) context.Context {
	var query, operationName string
	if req.params != nil {
		query, operationName = req.params.Query, req.params.OperationName
	} else if values, err := url.ParseQuery(req.id.request); err == nil {
		query, operationName = values.Get("query"), values.Get("operationName")
	}
	return graphql.WithOperationContext(ctx, &graphql.OperationContext{
		RawQuery: query, OperationName: operationName, Headers: req.header,
		Doc: a.doc, Operation: a.operation,
		Stats: graphql.Stats{OperationStart: graphql.GetStartTime(ctx)},
	})
}

// middleware is the innermost response middleware: it wraps the execution
// of the operation's fields, and tells a leader's waiters, as soon as it
// knows, whether they may take its answer. (A query with @defer is shared
// as any other: a leader's answer is never streamed, so it runs without
// its @defer, see oneRead.)
func (s *sharedQueries) middleware(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	q, _ := ctx.Value(leaderKey{}).(*sharedQuery) // nil: not a leader
	if !graphql.HasOperationContext(ctx) {
		s.release(q)
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	switch {
	case oc.Operation == nil:
		s.release(q)
		return next(ctx)
	case oc.Operation.Operation == ast.Mutation:
		s.release(q)
		if id := CallerID(ctx); id != "" {
			s.unlist(id)
			defer s.unlist(id)
		}
		return next(ctx)
	case q == nil:
		return next(ctx)
	case oc.Operation.Operation != ast.Query:
		s.release(q)
		return next(ctx)
	}
	resp := next(ctx)
	// An answer read stale is not shared: each waiter reads for itself
	// (from the cache, at no call) and reports its own staleness.
	if _, _, stale := planner.OperationStale(ctx); shareable(resp) && ctx.Err() == nil && !stale {
		// A copy: the caller's outer middlewares add to resp.
		s.finish(q, &sharedAnswer{answer: answerFor(resp), operation: oc.Operation, doc: oc.Doc})
	} else {
		s.release(q)
	}
	return resp
}

// shareable reports whether resp, a query's whole answer, is one others
// may take: no error but deterministic ones.
func shareable(resp *graphql.Response) bool {
	if resp == nil || resp.HasNext != nil {
		return false
	}
	for _, err := range resp.Errors {
		if code, _ := err.Extensions["code"].(string); !deterministicCodes[code] {
			return false
		}
	}
	return true
}

// join returns the execution of id in flight, or lists a new one (joined
// false) that the caller must run.
func (s *sharedQueries) join(id requestIdentity) (q *sharedQuery, joined bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.inFlight[id.caller]
	if q := byKey[id]; q != nil {
		return q, true
	}
	if byKey == nil {
		byKey = map[requestIdentity]*sharedQuery{}
		s.inFlight[id.caller] = byKey
	}
	q = &sharedQuery{id: id, done: make(chan struct{})}
	byKey[id] = q
	return q, false
}

// release wakes q's waiters (q nil: none) to execute for themselves.
func (s *sharedQueries) release(q *sharedQuery) {
	if q != nil {
		s.finish(q, nil)
	}
}

// finish unlists q and wakes its waiters, with a (nil: none they may take)
// when it is the first to finish it.
func (s *sharedQueries) finish(q *sharedQuery, a *sharedAnswer) {
	q.once.Do(func() {
		s.mu.Lock()
		if byKey := s.inFlight[q.id.caller]; byKey[q.id] == q {
			delete(byKey, q.id)
			if len(byKey) == 0 {
				delete(s.inFlight, q.id.caller)
			}
		}
		s.mu.Unlock()
		q.published = a
		close(q.done)
	})
}

// unlist stops the executions in flight of the caller with this id from
// being joined; their callers still get their answers.
func (s *sharedQueries) unlist(caller string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, caller)
}

// answerFor returns a caller's own copy of a shared answer: the data and
// errors are shared (read-only), the extensions map and the list of
// errors (an append reallocates it) are the caller's.
func answerFor(shared *graphql.Response) *graphql.Response {
	resp := *shared
	resp.Extensions = maps.Clone(shared.Extensions)
	resp.Errors = slices.Clip(shared.Errors)
	return &resp
}
