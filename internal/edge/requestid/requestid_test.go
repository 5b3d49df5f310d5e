package requestid_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/suregql/suregql/internal/edge/requestid"
)

func TestValid(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"", false},
		{"a", true},
		{"0f6b3c1e-9a2d-4c1e-8b7a-1d2e3f4a5b6c", true},
		{"Root=1-67891233-abcdef012345678912345678", false}, // '=' is not kept
		{"svc.web:42_abc-DEF", true},
		{strings.Repeat("x", requestid.MaxLen), true},
		{strings.Repeat("x", requestid.MaxLen+1), false},
		{"with space", false},
		{"line\nbreak", false},
		{`quote"`, false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := requestid.Valid(tt.id); got != tt.want {
			t.Errorf("Valid(%q) = %t, want %t", tt.id, got, tt.want)
		}
	}
}

func TestMiddleware(t *testing.T) {
	tests := []struct {
		name     string
		incoming []string
		keep     bool
	}{
		{name: "none", keep: false},
		{name: "sane", incoming: []string{"client-7.a:b_c"}, keep: true},
		{name: "too long", incoming: []string{strings.Repeat("a", 129)}, keep: false},
		{name: "not sane", incoming: []string{"<script>"}, keep: false},
		{name: "the first of two", incoming: []string{"first", "second"}, keep: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := requestid.Middleware(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				seen = requestid.FromContext(r.Context())
			}))
			req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil)
			req.Header[requestid.Header] = tt.incoming
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Header().Get(requestid.Header)
			if got != seen {
				t.Errorf("the response says %q, the handler's context %q", got, seen)
			}
			if tt.keep {
				if got != tt.incoming[0] {
					t.Errorf("id = %q, want the incoming %q", got, tt.incoming[0])
				}
			} else if _, err := uuid.Parse(got); err != nil {
				t.Errorf("id = %q, want a new UUID", got)
			}
		})
	}
}

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	// Wrapped twice (the server and the facade both wrap): one id.
	log := slog.New(requestid.LogHandler(requestid.LogHandler(slog.NewJSONHandler(&buf, nil)))).With("component", "test")
	ctx := requestid.NewContext(t.Context(), "req-1")
	log.InfoContext(ctx, "with")
	log.InfoContext(context.Background(), "without")
	log.Info("without either")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"req-1", "", ""} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatalf("line %d %q: %v", i, lines[i], err)
		}
		got, _ := rec[requestid.LogKey].(string)
		if got != want || rec["component"] != "test" {
			t.Errorf("line %d = %s, want requestId %q and the logger's attributes", i, lines[i], want)
		}
	}
	if n := strings.Count(lines[0], requestid.LogKey); n != 1 {
		t.Errorf("line %s names the id %d times, want once", lines[0], n)
	}
}

// A line logged with the context of a traced request carries the trace's
// and the span's ids, once however often the handler is wrapped; a line
// without a span carries none.
func TestLogHandler_TraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(requestid.LogHandler(requestid.LogHandler(slog.NewJSONHandler(&buf, nil))))
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	traced := trace.ContextWithSpanContext(requestid.NewContext(t.Context(), "req-1"), sc)
	log.InfoContext(traced, "traced")
	log.InfoContext(trace.ContextWithSpanContext(t.Context(), sc), "traced, no request id")
	log.InfoContext(requestid.NewContext(t.Context(), "req-2"), "not traced")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range []struct{ requestID, traceID, spanID string }{
		{"req-1", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"req-2", "", ""},
	} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatalf("line %d %q: %v", i, lines[i], err)
		}
		id, _ := rec[requestid.LogKey].(string)
		traceID, _ := rec[requestid.LogTraceID].(string)
		spanID, _ := rec[requestid.LogSpanID].(string)
		if id != want.requestID || traceID != want.traceID || spanID != want.spanID {
			t.Errorf("line %d = %s, want requestId %q, trace_id %q, span_id %q", i, lines[i], want.requestID, want.traceID, want.spanID)
		}
		if n := strings.Count(lines[i], requestid.LogTraceID); traceID != "" && n != 1 {
			t.Errorf("line %d %s names the trace %d times, want once", i, lines[i], n)
		}
	}
}
