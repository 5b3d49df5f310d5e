package facade_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
)

// tracedEnv is an env whose facade traces into an in-memory exporter, and
// whose fake upstream records the traceparent of every request.
type tracedEnv struct {
	*env
	spans *tracetest.InMemoryExporter
	ended chan string // names of the spans ending
	mu    sync.Mutex
	sent  []string // traceparent headers the upstream received, in order
	// baggage are the baggage headers the upstream received, in order.
	baggage []string
}

func newTracedEnv(t *testing.T, opts ...envOption) *tracedEnv {
	t.Helper()
	te := &tracedEnv{spans: tracetest.NewInMemoryExporter(), ended: make(chan string, 1000)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(te.spans), sdktrace.WithSpanProcessor(endNotifier(te.ended)))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts = append(opts,
		withConfig(func(c *facade.Config) { c.TracerProvider = tp }),
		withUpstreamWrapper(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				te.mu.Lock()
				te.sent = append(te.sent, r.Header.Get("traceparent"))
				te.baggage = append(te.baggage, r.Header.Get("baggage"))
				te.mu.Unlock()
				next.ServeHTTP(w, r)
			})
		}))
	te.env = newEnv(t, opts...)
	return te
}

// endNotifier is a span processor that sends the name of each span that
// ends.
type endNotifier chan<- string

func (n endNotifier) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (n endNotifier) OnEnd(s sdktrace.ReadOnlySpan)                   { n <- s.Name() }
func (n endNotifier) Shutdown(context.Context) error                  { return nil }
func (n endNotifier) ForceFlush(context.Context) error                { return nil }

// post sends one GraphQL request as key with extra headers, and returns
// once its server span has ended (the last of the request's spans).
func (te *tracedEnv) post(t *testing.T, key, body string, headers map[string]string) httpResult {
	t.Helper()
	h := map[string]string{"X-Api-Key": key}
	for k, v := range headers {
		h[k] = v
	}
	r := postJSON(t, te.env, body, h)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case name := <-te.ended:
			if name == "POST /graphql" {
				return r
			}
		case <-timeout:
			t.Fatal("the request's server span did not end")
		}
	}
}

func (te *tracedEnv) traceparents() []string {
	te.mu.Lock()
	defer te.mu.Unlock()
	return slices.Clone(te.sent)
}

// attr returns the span's attribute key, or the zero Value if it has none.
func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// callerTraceparent is the trace context the caller sends.
const (
	callerTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID      = "00f067aa0ba902b7"
	callerTraceparent = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

// One operation through the production handler: a server span continuing
// the caller's trace, one operation span under it, and one client span per
// upstream call (a retry is a call) under the operation, each named by its
// endpoint template; the upstream receives each client span's traceparent.
func TestTracing_OperationAndUpstreamSpans(t *testing.T) {
	t.Parallel()
	te := newTracedEnv(t)
	te.upstream.FailNext("/api/v1/chats", 1, http.StatusBadGateway, "text/html", "<html>bad gateway</html>")
	r := te.post(t, restclienttest.DemoKey,
		`{"query":"query Pair { categories(first: 1) { totalCount } chats(first: 1) { totalCount } }"}`,
		map[string]string{"traceparent": callerTraceparent})
	if r.status != http.StatusOK || r.body["errors"] != nil {
		t.Fatalf("status %d, answer %s", r.status, r.raw)
	}
	if te.upstream.Calls() != 3 {
		t.Fatalf("upstream calls = %d, want 3 (the chats GET was retried)", te.upstream.Calls())
	}

	var server, ops, clients []tracetest.SpanStub
	for _, s := range te.spans.GetSpans() {
		switch s.SpanKind {
		case trace.SpanKindServer:
			server = append(server, s)
		case trace.SpanKindClient:
			clients = append(clients, s)
		default:
			ops = append(ops, s)
		}
		if got := s.SpanContext.TraceID().String(); got != callerTraceID {
			t.Errorf("span %q is in trace %s, want the caller's %s", s.Name, got, callerTraceID)
		}
	}
	if len(server) != 1 || server[0].Name != "POST /graphql" || server[0].Parent.SpanID().String() != callerSpanID || !server[0].Parent.IsRemote() {
		t.Fatalf("server spans = %+v, want one POST /graphql child of the caller's span", server)
	}
	if len(ops) != 1 {
		t.Fatalf("%d operation spans, want 1: %+v", len(ops), ops)
	}
	op := ops[0]
	if op.Name != "query Pair" || op.Parent.SpanID() != server[0].SpanContext.SpanID() {
		t.Errorf("operation span %q with parent %s, want \"query Pair\" under the server span %s",
			op.Name, op.Parent.SpanID(), server[0].SpanContext.SpanID())
	}
	for key, want := range map[attribute.Key]attribute.Value{
		"graphql.operation.name": attribute.StringValue("Pair"),
		"graphql.operation.type": attribute.StringValue("query"),
		"suregql.upstream.calls": attribute.IntValue(3),
	} {
		if got := attr(op, key); got != want {
			t.Errorf("operation span %s = %v, want %v", key, got.String(), want.String())
		}
	}
	if op.Status.Code == codes.Error {
		t.Errorf("operation span status %+v, want no error", op.Status)
	}

	if len(clients) != te.upstream.Calls() {
		t.Fatalf("%d client spans, the upstream received %d calls", len(clients), te.upstream.Calls())
	}
	var got []string
	bySpanID := map[string]tracetest.SpanStub{}
	for _, c := range clients {
		attempt := attr(c, "suregql.retry.attempt")
		status := attr(c, "http.response.status_code")
		got = append(got, c.Name+" attempt "+attempt.String()+" status "+status.String())
		if c.Parent.SpanID() != op.SpanContext.SpanID() {
			t.Errorf("client span %q has parent %s, want the operation span %s", c.Name, c.Parent.SpanID(), op.SpanContext.SpanID())
		}
		bySpanID[c.SpanContext.SpanID().String()] = c
	}
	slices.Sort(got)
	want := []string{
		"GET /api/v1/categories attempt 0 status 200",
		"GET /api/v1/chats attempt 0 status 502",
		"GET /api/v1/chats attempt 1 status 200",
	}
	if !slices.Equal(got, want) {
		t.Errorf("client spans = %q, want %q", got, want)
	}

	sent := te.traceparents()
	if len(sent) != len(clients) {
		t.Fatalf("the upstream received %d traceparents, want %d", len(sent), len(clients))
	}
	for _, tp := range sent {
		parts := strings.Split(tp, "-")
		if len(parts) != 4 || parts[1] != callerTraceID {
			t.Errorf("the upstream received traceparent %q, want one of trace %s", tp, callerTraceID)
			continue
		}
		if _, ok := bySpanID[parts[2]]; !ok {
			t.Errorf("the upstream received traceparent %q, whose parent is no client span", tp)
		}
		delete(bySpanID, parts[2]) // one request per client span
	}
}

// A failed field sets the operation span's status and error codes, span
// names never carry the ids of the URL, and a request refused before its
// document was read still has an operation span.
func TestTracing_ErrorsAndRefusals(t *testing.T) {
	t.Parallel()
	te := newTracedEnv(t)
	const id = "00000000-0000-4000-8000-000000000000"
	te.post(t, restclienttest.DemoKey, `{"query":"query Missing { category(id: \"`+id+`\") { name } }"}`, nil)
	te.post(t, restclienttest.DemoKey, `{"query":"query Broken { categories("}`, nil)

	spans := te.spans.GetSpans()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
		if strings.Contains(s.Name, id) {
			t.Errorf("span name %q holds the id", s.Name)
		}
	}
	slices.Sort(names)
	want := []string{"GET /api/v1/categories/{id}", "GraphQL Operation", "POST /graphql", "POST /graphql", "query Missing"}
	if !slices.Equal(names, want) {
		t.Fatalf("spans %q, want %q", names, want)
	}
	for _, s := range spans {
		var wantCode string
		switch s.Name {
		case "query Missing":
			wantCode = "NOT_FOUND"
		case "GraphQL Operation":
			wantCode = "GRAPHQL_PARSE_FAILED"
		default:
			continue
		}
		codesAttr := attr(s, "suregql.error.codes")
		if s.Status.Code != codes.Error || s.Status.Description != wantCode || !slices.Equal(codesAttr.AsStringSlice(), []string{wantCode}) {
			t.Errorf("span %q: status %+v, error codes %v; want Error %s", s.Name, s.Status, codesAttr.String(), wantCode)
		}
	}
}

// Without a TracerProvider nothing is traced: the caller's traceparent is
// not passed upstream.
func TestTracing_Off(t *testing.T) {
	t.Parallel()
	var sent []string
	var mu sync.Mutex
	e := newEnv(t, withUpstreamWrapper(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sent = append(sent, r.Header.Get("traceparent"))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}))
	postJSON(t, e, `{"query":"{ categories(first: 1) { totalCount } }"}`,
		map[string]string{"X-Api-Key": restclienttest.DemoKey, "traceparent": callerTraceparent})
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 || sent[0] != "" {
		t.Errorf("the upstream received traceparents %q, want one request without", sent)
	}
}

// The spans of upstream calls name their endpoint by its template, in
// their name and in their URL attributes: url.full is the upstream's
// origin and the endpoint's template, url.template the template; no
// attribute of any span holds an id or a query string the upstream was
// sent (the logs and metrics avoid them too).
func TestTracing_UpstreamSpansCarryNoIDs(t *testing.T) {
	t.Parallel()
	te := newTracedEnv(t)
	var list struct {
		Chats struct {
			Nodes []struct{ ID string }
		}
	}
	te.ok(restclienttest.DemoKey, `{ chats(first: 1) { nodes { id } } categories(first: 1) { totalCount } }`, nil, &list)
	if len(list.Chats.Nodes) != 1 {
		t.Fatalf("the demo family answered %+v, want a chat", list)
	}
	te.post(t, restclienttest.DemoKey, gqlBody(`query($id: ID!) { chat(id: $id) { title messages(first: 1) { totalCount } } }`,
		map[string]any{"id": list.Chats.Nodes[0].ID}), nil)
	unknown := "00000000-0000-4000-8000-00000000abcd" // 404s, another key
	te.post(t, restclienttest.ReadOnlyKey, gqlBody(`query($id: ID!) { category(id: $id) { name } import(id: $id) { id } }`,
		map[string]any{"id": unknown}), nil)

	// What the upstream was sent: its ids, in paths and in query strings.
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	secrets := map[string]bool{}
	for _, r := range te.upstream.Requests() {
		for _, id := range uuid.FindAllString(r.Path+"?"+r.RawQuery, -1) {
			secrets[id] = true
		}
		if r.RawQuery != "" {
			secrets[r.RawQuery] = true
		}
	}
	for _, id := range []string{list.Chats.Nodes[0].ID, unknown} {
		if !secrets[id] {
			t.Errorf("the upstream was never sent %s: the test does not exercise ids in URLs (sent %v)", id, secrets)
		}
	}

	var templates []string
	for _, s := range te.spans.GetSpans() {
		for _, kv := range s.Attributes {
			v := kv.Value.String()
			for secret := range secrets {
				if strings.Contains(v, secret) {
					t.Errorf("span %q: %s = %q holds %q, which the upstream was sent", s.Name, kv.Key, v, secret)
				}
			}
		}
		if s.SpanKind != trace.SpanKindClient {
			continue
		}
		_, tmpl, _ := strings.Cut(s.Name, " ")
		full := attr(s, "url.full").AsString()
		if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+` + regexp.QuoteMeta(tmpl) + `$`).MatchString(full) {
			t.Errorf("span %q: url.full %q, want the upstream's origin and %s", s.Name, full, tmpl)
		}
		if got := attr(s, "url.template").AsString(); got != tmpl {
			t.Errorf("span %q: url.template %q, want %q", s.Name, got, tmpl)
		}
		if !slices.Contains(templates, s.Name) {
			templates = append(templates, s.Name)
		}
	}
	slices.Sort(templates)
	want := []string{"GET /api/v1/categories", "GET /api/v1/categories/{id}", "GET /api/v1/chats", "GET /api/v1/chats/{id}", "GET /api/v1/imports/{id}"}
	if !slices.Equal(templates, want) {
		t.Errorf("client spans %q, want %q", templates, want)
	}
}

// A traced request leads to its trace from its log lines and from the
// operation's duration: every JSON line logged for it carries the trace's
// id (and a span's), and an OpenMetrics scrape shows the trace id as the
// exemplar of the duration's bucket. A request without a traceparent
// starts a trace of its own, which its lines and exemplar carry too.
func TestTracing_LogsAndExemplarsCarryTheTrace(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	te := newTracedEnv(t, withConfig(func(c *facade.Config) {
		c.Log = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.Metrics = metrics.New()
	}))
	// A bucket keeps the exemplar of its latest observation: each
	// request's is looked for in a scrape right after it.
	var exemplars [2][]string
	for i, headers := range []map[string]string{
		{"traceparent": callerTraceparent, "X-Request-Id": "traced-1"},
		{"X-Request-Id": "untraced-1"},
	} {
		r := te.post(t, restclienttest.DemoKey, `{"query":"query Q { categories(first: 1) { totalCount } }"}`, headers)
		if r.status != http.StatusOK || r.body["errors"] != nil {
			t.Fatalf("status %d, answer %s", r.status, r.raw)
		}
		exemplars[i] = durationExemplars(t, te.server.URL+"/metrics")
	}

	traceOf := map[string]string{} // request id → the trace its lines carry
	for _, line := range logLines(t, logs.String()) {
		id, _ := line["requestId"].(string)
		if id == "" {
			continue
		}
		traceID, _ := line["trace_id"].(string)
		spanID, _ := line["span_id"].(string)
		if len(traceID) != 32 || len(spanID) != 16 {
			t.Errorf("a line of request %s without its trace and span: %v", id, line)
			continue
		}
		if prev, ok := traceOf[id]; ok && prev != traceID {
			t.Errorf("request %s logged in traces %s and %s", id, prev, traceID)
		}
		traceOf[id] = traceID
	}
	if traceOf["traced-1"] != callerTraceID {
		t.Errorf("the traced request's lines carry trace %q, want the caller's %s:\n%s", traceOf["traced-1"], callerTraceID, logs)
	}
	if u := traceOf["untraced-1"]; u == "" || u == callerTraceID {
		t.Errorf("the untraced request's lines carry trace %q, want one of its own", u)
	}
	for i, id := range []string{callerTraceID, traceOf["untraced-1"]} {
		if !slices.ContainsFunc(exemplars[i], func(l string) bool { return strings.Contains(l, `trace_id="`+id+`"`) }) {
			t.Errorf("request %d: no exemplar of its trace %s in the operation duration's buckets: %q", i+1, id, exemplars[i])
		}
	}
}

// durationExemplars scrapes url as OpenMetrics and returns the lines of
// suregql_operation_duration_seconds's buckets that carry an exemplar.
func durationExemplars(t *testing.T, url string) []string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var exemplars []string
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "suregql_operation_duration_seconds_bucket") && strings.Contains(line, " # {") {
			exemplars = append(exemplars, line)
		}
	}
	return exemplars
}

// Issue 25, row 9: the caller's baggage header (3 KB of it) does not reach
// the upstream unless -trace-baggage forwards it; the traceparent always
// does.
func TestTracing_BaggageForwardedOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	baggage := "userId=alice,tenant=" + strings.Repeat("x", 3_000)
	for _, forward := range []bool{false, true} {
		te := newTracedEnv(t, withConfig(func(c *facade.Config) { c.ForwardBaggage = forward }))
		te.post(t, restclienttest.DemoKey, `{"query":"{ categories(first: 1) { totalCount } }"}`,
			map[string]string{"traceparent": callerTraceparent, "baggage": baggage})
		te.mu.Lock()
		sent, bags := slices.Clone(te.sent), slices.Clone(te.baggage)
		te.mu.Unlock()
		if len(sent) != 1 || !strings.Contains(sent[0], callerTraceID) {
			t.Fatalf("forward %t: the upstream received traceparents %q, want one of trace %s", forward, sent, callerTraceID)
		}
		switch {
		case !forward && bags[0] != "":
			t.Errorf("baggage not configured: the upstream received a baggage header of %d bytes, want none", len(bags[0]))
		case forward && !sameMembers(bags[0], baggage):
			t.Errorf("-trace-baggage: the upstream received baggage %.40q…, want the caller's", bags[0])
		}
	}
}

// sameMembers reports whether two baggage headers hold the same members,
// in any order (a propagator writes them in its own).
func sameMembers(a, b string) bool {
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}
