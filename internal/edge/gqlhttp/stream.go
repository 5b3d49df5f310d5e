package gqlhttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
)

// DefaultStreamKeepAlive is how often an open stream says it is alive: a
// graphql-transport-ws ping (answered by the client's pong) and an SSE
// comment, so that proxies keep idle subscriptions open.
const DefaultStreamKeepAlive = 15 * time.Second

// StreamWriteTimeout is how long one write of a stream (SSE, WebSocket) may wait for
// the client to read: a subscriber that stops reading (its connection
// open, its window full) is let go then, and its subscription released,
// rather than held for as long as the peer keeps the connection.
const StreamWriteTimeout = 30 * time.Second

// DefaultWebSocketIdleTimeout is how long a WebSocket may hold no
// operation before it is closed (Options.WebSocketIdleTimeout).
const DefaultWebSocketIdleTimeout = 30 * time.Second

// streams serves the requests that stay open: graphql-sse (distinct
// connections mode: a POST asking for text/event-stream) and graphql-ws
// (a WebSocket upgrade, subprotocol graphql-transport-ws, see wsconn.go),
// with gqlgen's transports on the same executor as the other requests
// (same limits, extensions, metrics and traces), without the operation
// timeout. The caller is made once, as for a POST: from X-Api-Key, or for
// a WebSocket (whose browsers cannot set headers) from the
// connection_init payload.
type streams struct {
	exec  *executor.Executor
	opts  Options
	sse   transport.SSE
	ws    transport.Websocket
	conns *wsLimits
	idle  time.Duration // WebSocketIdleTimeout; 0: never
	other http.Handler  // every request that is not a stream
}

func newStreams(exec *executor.Executor, opts Options, other http.Handler) *streams {
	keepAlive := opts.StreamKeepAlive
	if keepAlive <= 0 {
		keepAlive = DefaultStreamKeepAlive
	}
	s := &streams{
		exec: exec, opts: opts, other: other, sse: transport.SSE{KeepAlivePingInterval: keepAlive},
		conns: newWSLimits(opts.MaxWebSockets, opts.MaxWebSocketsPerAddress, opts.Metrics),
	}
	switch {
	case opts.WebSocketIdleTimeout == 0:
		s.idle = DefaultWebSocketIdleTimeout
	case opts.WebSocketIdleTimeout > 0:
		s.idle = opts.WebSocketIdleTimeout
	}
	s.ws = transport.Websocket{
		Implementation: wsAccept{transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{
			// The origin is checked in serveWS, against the CORS origins.
			InsecureSkipVerify: true,
			// First, before the legacy graphql-ws gqlgen adds: a client
			// offering both speaks this one (serveWS refuses a client
			// that does not offer it).
			Subprotocols: []string{subprotocolTransportWS},
		}}},
		InitFunc:         s.initWS,
		InitTimeout:      10 * time.Second,
		PayloadReadLimit: &wsReadLimit,
		// A ping every interval, whose pong must come within two: a
		// client that stops reading is let go.
		PingPongInterval: keepAlive,
	}
	return s
}

// isWebSocket reports whether r asks for a WebSocket.
func isWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// isSSE reports whether r is a graphql-sse request.
func isSSE(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func (s *streams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case isWebSocket(r):
		s.serveWS(w, r)
	case isSSE(r):
		s.serveSSE(w, r)
	default:
		s.other.ServeHTTP(w, r)
	}
}

// withStreamCaller returns ctx with the caller of key and marks it as a
// stream's: each of its operations gets a planner of its own
// (PlannerPerOperation).
func (s *streams) withStreamCaller(ctx context.Context, key string) context.Context {
	caller := s.opts.Callers.Caller(key)
	ctx = context.WithValue(ctx, streamKey{}, s.opts.Planners)
	ctx = withCaller(ctx, s.opts.Planners, caller)
	if s.opts.RequestContext != nil {
		ctx = s.opts.RequestContext(ctx)
	}
	return ctx
}

type streamKey struct{}

// wsReadLimit bounds a WebSocket message as the body of a POST is bounded.
var wsReadLimit = int64(maxBodyBytes)

// StreamEnds is the extension that tells a subscriber why its stream
// ended, when its resolver left a reason in the operation's
// graph.StreamEnd (its key revoked, its chat gone) rather than letting it
// read as a subscription completed: over a WebSocket an error message
// (graphql-transport-ws's, which ends the operation: no complete
// follows), over SSE a last next event carrying the error, then complete;
// the error presented as every error is (extensions.code). Register it
// innermost: Handler does.
type StreamEnds struct{}

var (
	_ graphql.OperationInterceptor = StreamEnds{}
	_ graphql.ResponseInterceptor  = StreamEnds{}
)

// ExtensionName names the extension to gqlgen.
func (StreamEnds) ExtensionName() string { return "StreamEnds" }

// Validate accepts every schema.
func (StreamEnds) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation gives a subscription a StreamEnd.
func (StreamEnds) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
		ctx, _ = graph.WithStreamEnd(ctx)
	}
	return next(ctx)
}

// InterceptResponse tells, after the stream's last event, why it ended.
func (StreamEnds) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	end := graph.StreamEndFrom(ctx)
	if resp != nil || end == nil {
		return resp
	}
	err := end.Take()
	if err == nil || ctx.Err() != nil {
		return nil
	}
	graphql.AddError(ctx, err) // presented, as a field's error is
	errs := graphql.GetErrors(ctx)
	if _, ws := ctx.Value(wsConnKey{}).(*wsConn); ws {
		for _, e := range errs {
			transport.AddSubscriptionError(ctx, e)
		}
		return nil
	}
	return &graphql.Response{Errors: errs}
}

// PlannerPerOperation gives each operation of a stream (a WebSocket runs
// many) a planner of its own: its own memo and budget, as each POST has.
// Register it before any middleware that reads the planner.
func PlannerPerOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	shared, ok := ctx.Value(streamKey{}).(*planner.Shared)
	if !ok {
		return next(ctx)
	}
	if c, ok := ctx.Value(callerCtxKey{}).(callerkey.Caller); ok {
		ctx = withCaller(ctx, shared, c)
	}
	return next(ctx)
}

func (s *streams) serveSSE(w http.ResponseWriter, r *http.Request) {
	refused := refusedRequest{w: w, ctx: r.Context(), log: s.opts.Log}
	req, ok := readPost(r, refused, s.opts.Metrics, 1, s.opts.Documents)
	if !ok {
		return
	}
	if req.batch != nil {
		refused.answer(http.StatusBadRequest, graph.CodeBadRequest, "a text/event-stream request carries one operation, not a batch")
		return
	}
	// gqlgen's transport reads the body again: the parameters as read
	// (a trusted document's id resolved to its text).
	body, err := json.Marshal(req.params)
	if err != nil {
		panic(err) // recovered as the other requests' are; parameters just decoded encode
	}
	openEnded(w)
	sw := &stalledWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
	defer sw.rc.SetWriteDeadline(time.Time{}) //nolint:errcheck // the connection's next request sets its own
	// gqlgen's keep-alive goroutine stops only when the request's context
	// ends, which net/http does after the handler returned: a ping it
	// wrote meanwhile would write to a finished response (a nil pointer in
	// net/http, in a goroutine no handler recovers). Its context ends with
	// Do, and the writer refuses anything once Do returned.
	ctx, stop := context.WithCancel(r.Context())
	defer sw.finish()
	defer stop()
	w = sw
	ctx = graphql.StartOperationTrace(ctx)
	ctx = s.withStreamCaller(ctx, r.Header.Get("X-Api-Key"))
	r = r.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Type", mediaJSON)
	s.sse.Do(w, r, s.exec)
}

func (s *streams) serveWS(w http.ResponseWriter, r *http.Request) {
	refused := refusedRequest{w: w, ctx: r.Context(), log: s.opts.Log}
	if !s.originAllowed(r) {
		refused.answer(http.StatusForbidden, graph.CodeForbidden, "pages of this origin may not open a WebSocket to this server (-cors-origins)")
		return
	}
	// A refused upgrade closes its connection: a client refused would
	// otherwise hold it, idle, for the server's idle timeout.
	if !offersSubprotocol(r, subprotocolTransportWS) {
		w.Header().Set("Connection", "close")
		refused.answer(http.StatusBadRequest, graph.CodeBadRequest,
			"this server speaks the graphql-transport-ws subprotocol (the graphql-ws library's); offer it (the legacy graphql-ws subprotocol is not served)")
		return
	}
	release, limit := s.conns.acquire(clientAddress(r))
	if limit != nil {
		w.Header().Set("Connection", "close")
		limit.answer(refused)
		return
	}
	defer release()
	openEnded(w)
	c := newWSConn(s.opts.Documents, r.Header.Get("X-Api-Key"), s.idle)
	defer c.finish()
	ctx := context.WithValue(r.Context(), wsConnKey{}, c)
	ctx = s.withStreamCaller(ctx, c.headerKey)
	s.ws.Do(stalledHijacker{w}, r.WithContext(ctx), s.exec)
}

// initWS makes the caller of a WebSocket from its key (wsConn's
// connectionKey: the upgrade request's header, or connection_init's
// payload, whose browsers cannot set headers), or refuses the
// connection_init with the close code and reason the protocol asks.
func (s *streams) initWS(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	if c == nil {
		return ctx, nil, nil
	}
	key, refused := c.connectionKey()
	if refused != nil {
		ctx = transport.WithWebsocketCloseCode(ctx, refused.code)
		ctx = transport.AppendCloseReason(ctx, refused.reason)
		return ctx, nil, errors.New(refused.reason)
	}
	if key != c.headerKey {
		ctx = s.withStreamCaller(ctx, key)
	}
	return ctx, nil, nil
}

// originAllowed reports whether a WebSocket may be opened from r's
// Origin: none (not a browser), the server's own, or one of the CORS
// origins ("*": any). Browsers do not apply CORS to WebSockets: this is
// the check that keeps other sites' pages out.
func (s *streams) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if u, err := url.Parse(origin); err == nil && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.Contains(s.opts.CORSOrigins, "*") || slices.Contains(s.opts.CORSOrigins, origin)
}

// openEnded lifts the server's read and write deadlines (sized for one
// answer) off a stream's connection, which stays open as long as its
// subscriptions; the keep-alives find a dead peer instead.
func openEnded(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// stalledWriter arms a write deadline (StreamWriteTimeout) before each
// write and flush of an SSE stream. A write that times out fails the
// connection, and net/http cancels the request's context: the
// subscription ends and is released.
//
// Once finished (the handler is returning), it writes nothing more.
type stalledWriter struct {
	http.ResponseWriter
	rc *http.ResponseController

	mu       sync.Mutex
	finished bool
}

func (w *stalledWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return 0, errStreamFinished
	}
	w.arm()
	return w.ResponseWriter.Write(b)
}

func (w *stalledWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return
	}
	w.arm()
	_ = w.rc.Flush()
}

// errStreamFinished is what a write after the stream's handler returned
// gets.
var errStreamFinished = errors.New("the stream's answer is finished")

// finish makes w write nothing more, once a write in progress is done.
func (w *stalledWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finished = true
}

func (w *stalledWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *stalledWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout)) }

// stalledHijacker hands the WebSocket library a connection whose every
// write arms a write deadline (StreamWriteTimeout): a client that stops
// reading fails its connection then, and its subscriptions are released.
type stalledHijacker struct{ http.ResponseWriter }

func (w stalledHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	sc := stalledConn{c}
	// The hijacked writer is a new one over c, empty: the same over sc.
	brw.Writer = bufio.NewWriterSize(sc, brw.Writer.Size())
	return sc, brw, nil
}

func (w stalledHijacker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type stalledConn struct{ net.Conn }

func (c stalledConn) Write(b []byte) (int, error) {
	_ = c.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
	n, err := c.Conn.Write(b)
	if err != nil {
		// gqlgen only reports a failed write: closing the connection
		// ends its read loop, and with it the operations.
		_ = c.Close()
	}
	return n, err
}
