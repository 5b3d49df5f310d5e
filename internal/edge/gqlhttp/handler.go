// Package gqlhttp serves GraphQL over HTTP (the GraphQL-over-HTTP
// specification, checked by the graphql-http audit in CI): it reads each
// request once (a GET's query string, a POST's JSON body or a batch of
// them), makes the request's caller from its X-Api-Key header, runs the
// operations on gqlgen's executor, lets identical requests of a caller in
// flight together share one execution, and writes the answers. What the
// executor runs (extensions, limits, middlewares) is assembled by package
// facade; nothing here knows the schema beyond its error codes.
package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
)

// Options configure Handler.
type Options struct {
	// Log receives one line per request refused before GraphQL read it.
	Log *slog.Logger
	// Metrics counts the requests refused by a limit; nil counts none.
	Metrics *metrics.Metrics
	// MaxBatch is the most operations of one batched POST; 1 turns
	// batching off.
	MaxBatch int
	// OperationTimeout is the deadline of one request (of all the
	// operations of a batch).
	OperationTimeout time.Duration
	// CORSOrigins are the origins whose pages may call the endpoint from a
	// browser ("*" for any); empty turns CORS off.
	CORSOrigins []string
	// CORSHeaders are request headers a page may send besides
	// DefaultCORSHeaders.
	CORSHeaders []string
	// Callers makes each request's caller from its X-Api-Key header.
	Callers *callerkey.Ring
	// Planners is what the planner of each request shares with the
	// others.
	Planners *planner.Shared
	// Waited are the response middlewares a request's answer passes when
	// it shares another's execution instead of running the executor: what
	// the executor's response middlewares give every answer.
	Waited []graphql.ResponseMiddleware
	// Documents are the trusted documents requests may name by id (see
	// Documents); nil holds none and lets any document run.
	Documents *Documents
	// RequestContext, when not nil, prepares each request's context once
	// its caller and planner are in it (per-request state of the
	// executor's extensions).
	RequestContext func(context.Context) context.Context
	// StreamKeepAlive is how often an open subscription stream (SSE,
	// WebSocket) says it is alive; 0 means DefaultStreamKeepAlive.
	StreamKeepAlive time.Duration
	// Deferrable reports whether the executor defers a field of an
	// object type when a @defer fragment selects it (gqlgen defers the
	// fields a resolver answers, and writes them null in the payload that
	// holds their object): a streamed answer's payloads leave those out.
	// nil leaves the payloads as the executor writes them.
	Deferrable func(object, field string) bool
	// MaxWebSockets bounds the WebSockets open at once; 0 means
	// DefaultMaxWebSockets.
	MaxWebSockets int
	// MaxWebSocketsPerAddress bounds those of one client address (an
	// IPv6 /64); 0 means DefaultMaxWebSocketsPerAddress, negative none.
	MaxWebSocketsPerAddress int
	// WebSocketIdleTimeout closes a WebSocket holding no operation this
	// long; 0 means DefaultWebSocketIdleTimeout, negative never.
	WebSocketIdleTimeout time.Duration
}

// Handler serves GraphQL over HTTP with exec. It adds the sharing of
// identical executions to exec as its innermost response middleware, the
// answering of a query's @defer in one piece when it is not streamed
// (deferSupport) as its last operation context mutator, and StreamEnds as
// its innermost operation and response interceptor: call it once exec has
// every other.
func Handler(exec *executor.Executor, opts Options) http.Handler {
	shares := newSharedQueries(Through(opts.Waited...))
	exec.AroundResponses(shares.middleware)
	defers := &deferSupport{deferrable: opts.Deferrable}
	exec.Use(defers)
	exec.Use(StreamEnds{})
	s := &server{exec: exec, opts: opts, shares: shares, defers: defers}
	var h http.Handler = s
	h = withDeadline(opts.OperationTimeout, h)
	// Subscriptions (SSE, WebSocket) stay open: no operation timeout.
	h = newStreams(exec, opts, h)
	h = cacheHeaders(http.MaxBytesHandler(h, maxBodyBytes))
	if len(opts.CORSOrigins) > 0 {
		// Outermost, so that a preflight is answered before the method
		// checks, and so that refusals (405, 415) carry the headers a page
		// needs to read them.
		h = allowCORS(opts.CORSOrigins, opts.CORSHeaders, h)
	}
	return h
}

// server answers the requests Handler lets through.
type server struct {
	exec   *executor.Executor
	opts   Options
	shares *sharedQueries
	defers *deferSupport
	get    transport.GET
}

// ServeHTTP serves one request: see overHTTP for what it answers, and
// postAnswer and getAnswer for how.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// As gqlgen's handler: a panic outside the resolvers (which
		// recover their own) is presented, not a dropped connection.
		if v := recover(); v != nil {
			var gqlErr *gqlerror.Error
			if !errors.As(s.exec.PresentRecoveredError(r.Context(), v), &gqlErr) {
				gqlErr = gqlerror.Errorf("internal error")
			}
			b, _ := json.Marshal(&graphql.Response{Errors: gqlerror.List{gqlErr}})
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(b)
		}
	}()
	ctx := graphql.StartOperationTrace(r.Context())
	caller := s.opts.Callers.Caller(r.Header.Get("X-Api-Key"))
	ctx = withCaller(ctx, s.opts.Planners, caller)
	if s.opts.RequestContext != nil {
		ctx = s.opts.RequestContext(ctx)
	}
	s.overHTTP(w, r.WithContext(ctx))
}

// Through returns what passes an answer through mws, outermost first, as
// the executor passes the answers it makes.
func Through(mws ...graphql.ResponseMiddleware) func(context.Context, graphql.ResponseHandler) *graphql.Response {
	return func(ctx context.Context, answer graphql.ResponseHandler) *graphql.Response {
		for _, m := range slices.Backward(mws) {
			inner := answer
			answer = func(ctx context.Context) *graphql.Response { return m(ctx, inner) }
		}
		return answer(ctx)
	}
}
