// Package requestid gives every HTTP request an id that the caller
// receives (the X-Request-Id response header) and that every log line
// written for the request carries, so that an answer and its log lines can
// be found together.
//
// An id a client or a proxy in front sent in X-Request-Id is kept when it
// is sane (1 to 128 characters of A–Z, a–z, 0–9 and ._:-), so that one id
// follows a request across services; anything else is replaced by a new
// random UUID, so that what lands in the logs is never arbitrary text.
//
// When the request is traced, its log lines also carry the trace's and
// the span's ids (LogHandler), so that a line leads to its trace.
package requestid

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

// LogKey is the attribute under which log lines carry the id.
const LogKey = "requestId"

// Attributes under which log lines carry the trace and the span of their
// context (32 and 16 hex digits), as OpenTelemetry's log data model names
// them.
const (
	LogTraceID = "trace_id"
	LogSpanID  = "span_id"
)

// MaxLen is the longest id kept from a request.
const MaxLen = 128

type ctxKey struct{}

// Valid reports whether id may be kept as it was sent: 1 to MaxLen
// characters of A–Z, a–z, 0–9, '.', '_', ':' and '-'.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the id ctx carries, or "".
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Middleware gives each request its id: the X-Request-Id it came with when
// Valid, else a new UUID. The id is set on the response's X-Request-Id
// header before next runs, and carried by the request's context.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !Valid(id) {
			id = uuid.NewString()
		}
		w.Header()[Header] = []string{id} // Header is canonical: no Set needed
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), id)))
	})
}

// LogHandler returns a handler that adds the request id of the record's
// context (LogKey) to every record it passes on to h, so that whatever logs
// with a request's context (InfoContext, WarnContext…) names the request;
// and, when the context holds a span (the request is traced), the trace's
// and the span's ids (LogTraceID, LogSpanID). Records logged without such
// a context pass unchanged. Wrapping a handler twice adds the ids once. (Under a group opened with WithGroup the id lands
// in that group; the facade opens none.)
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(logHandler); ok {
		return h
	}
	return logHandler{h}
}

type logHandler struct{ next slog.Handler }

func (h logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	id := FromContext(ctx)
	sc := trace.SpanContextFromContext(ctx)
	if id == "" && !sc.IsValid() {
		return h.next.Handle(ctx, r)
	}
	r = r.Clone()
	if id != "" {
		r.AddAttrs(slog.String(LogKey, id))
	}
	if sc.IsValid() {
		r.AddAttrs(slog.String(LogTraceID, sc.TraceID().String()), slog.String(LogSpanID, sc.SpanID().String()))
	}
	return h.next.Handle(ctx, r)
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.next.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.next.WithGroup(name)}
}
