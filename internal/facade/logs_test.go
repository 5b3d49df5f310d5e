package facade_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// syncBuffer is a bytes.Buffer that handlers of concurrent requests may
// write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// jsonLogs returns a facade logging JSON lines at debug level, and its
// log.
func jsonLogs(t *testing.T, opts ...envOption) (*env, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return newEnv(t, append(opts, withConfig(func(c *facade.Config) { c.Log = log }))...), logs
}

// logLines parses the log line by line.
func logLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for line := range strings.Lines(logs) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		lines = append(lines, rec)
	}
	return lines
}

// Every line logged for a request carries the id the caller received in
// X-Request-Id and in extensions.requestId: answers that ran, answers
// refused before execution and requests refused before GraphQL read them.
// An incoming id is kept when sane, replaced otherwise. No line holds the
// key or a variable.
func TestLogs_EveryLineCarriesTheRequestID(t *testing.T) {
	t.Parallel()
	e, logs := jsonLogs(t)
	// The categories fail twice (the attempt and its retry): two WARN
	// lines; the chats answer.
	e.upstream.FailNext("/api/v1/categories", 2, http.StatusServiceUnavailable, "text/html", "<html>down</html>")
	const secret = "a-variable-the-log-never-holds"
	partial := `{"query":"query Q($after: String) { categories(first: 5) { totalCount } chats(first: 1) { totalCount } ` +
		`more: chats(first: 1, after: $after) { totalCount } }","variables":{"after":"` + secret + `"}}`

	type exchange struct {
		name      string
		do        func() httpResult
		incoming  string // the X-Request-Id sent, kept when sane
		keep      bool
		wantLines map[string]int // log messages and how many of each
		outcome   string         // of the operation's or refusal's line
		codes     []string
	}
	post := func(body, id string, headers map[string]string) func() httpResult {
		return func() httpResult {
			h := map[string]string{"X-Request-Id": id}
			for k, v := range headers {
				h[k] = v
			}
			return postJSON(t, e, body, h)
		}
	}
	keyed := map[string]string{"X-Api-Key": restclienttest.DemoKey}
	exchanges := []exchange{
		{name: "an operation with a failing field", incoming: "client-req-1", keep: true, do: post(partial, "client-req-1", keyed),
			wantLines: map[string]int{"upstream call failed": 2, "upstream call": 1, "graphql operation": 1}, outcome: "partial",
			codes: []string{"BAD_USER_INPUT", "UPSTREAM_UNAVAILABLE"}},
		{name: "an id that is not sane", incoming: "has spaces & <tags>", do: post(`{"query":"{ chats(first: 1) { totalCount } }"}`, "has spaces & <tags>", keyed),
			wantLines: map[string]int{"upstream call": 1, "graphql operation": 1}, outcome: "ok"},
		{name: "no key: refused before execution", do: post(`{"query":"{ chats(first: 1) { totalCount } }"}`, "", nil),
			wantLines: map[string]int{"graphql operation": 1}, outcome: "failed", codes: []string{"UNAUTHENTICATED"}},
		{name: "a parse error", do: post(`{"query":"{ chats("}`, "", keyed),
			wantLines: map[string]int{"graphql operation": 1}, outcome: "failed", codes: []string{"GRAPHQL_PARSE_FAILED"}},
		{name: "not JSON: refused over HTTP", incoming: "client-req-5", keep: true,
			do: func() httpResult {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.server.URL+"/graphql", strings.NewReader("{ chats { totalCount } }"))
				req.Header.Set("Content-Type", "text/plain")
				req.Header.Set("X-Request-Id", "client-req-5")
				return send(t, req)
			},
			wantLines: map[string]int{"graphql request refused": 1}, outcome: "failed", codes: []string{"UNSUPPORTED_MEDIA_TYPE"}},
		{name: "a mutation sent with GET", do: func() httpResult {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet,
				e.server.URL+"/graphql?query="+strings.ReplaceAll(`mutation { createChat(input: {title: "x"}) { chat { id } } }`, " ", "%20"), nil)
			req.Header.Set("X-Api-Key", restclienttest.DemoKey)
			return send(t, req)
		},
			wantLines: map[string]int{"graphql request refused": 1}, outcome: "failed", codes: []string{"METHOD_NOT_ALLOWED"}},
	}

	ids := make([]string, len(exchanges))
	for i, x := range exchanges {
		r := x.do()
		id := r.header.Get("X-Request-Id")
		ext, _ := r.body["extensions"].(map[string]any)
		if ext["requestId"] != id || id == "" {
			t.Errorf("%s: X-Request-Id %q, extensions.requestId %v (answer %s): want the same id in both", x.name, id, ext["requestId"], r.raw)
		}
		switch {
		case x.keep && id != x.incoming:
			t.Errorf("%s: id %q, want the incoming %q kept", x.name, id, x.incoming)
		case !x.keep && uuid.Validate(id) != nil:
			t.Errorf("%s: id %q, want a new UUID", x.name, id)
		}
		if slices.Contains(ids, id) {
			t.Errorf("%s: id %q was given to an earlier request too", x.name, id)
		}
		ids[i] = id
	}

	raw := logs.String()
	for _, secret := range []string{restclienttest.DemoKey, secret} {
		if strings.Contains(raw, secret) {
			t.Errorf("the log holds %q:\n%s", secret, raw)
		}
	}
	byID := map[string][]map[string]any{}
	for _, line := range logLines(t, raw) {
		id, _ := line["requestId"].(string)
		if id == "" {
			t.Errorf("a line without requestId: %v", line)
			continue
		}
		byID[id] = append(byID[id], line)
	}
	for i, x := range exchanges {
		lines := byID[ids[i]]
		delete(byID, ids[i])
		got := map[string]int{}
		for _, l := range lines {
			msg, _ := l["msg"].(string)
			got[msg]++
			if msg != "graphql operation" && msg != "graphql request refused" {
				continue
			}
			var codes []string
			for _, c := range asSlice(l["errorCodes"]) {
				codes = append(codes, c.(string))
			}
			if l["outcome"] != x.outcome || !slices.Equal(codes, x.codes) {
				t.Errorf("%s: %s line %v, want outcome %q and errorCodes %v", x.name, msg, l, x.outcome, x.codes)
			}
		}
		if !mapsEqual(got, x.wantLines) {
			t.Errorf("%s: lines %v, want %v", x.name, got, x.wantLines)
		}
	}
	for id, lines := range byID {
		t.Errorf("lines with the id %q, which no caller received: %v", id, lines)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A node id that names nothing costs lookups the upstream answers 404: an
// answer (null), not a fault, so no WARN line; each lookup is a DEBUG line.
func TestLogs_NotFoundIsNotAWarning(t *testing.T) {
	t.Parallel()
	e, logs := jsonLogs(t)
	got, r := node(t, e, restclienttest.DemoKey, unknownID)
	if got != nil {
		t.Fatalf("node(unknown) = %+v, want null", got)
	}
	levels := map[string]int{}
	for _, l := range logLines(t, logs.String()) {
		levels[l["level"].(string)+" "+l["msg"].(string)]++
	}
	want := map[string]int{"DEBUG upstream call": r.calls, "INFO graphql operation": 1}
	if !mapsEqual(levels, want) {
		t.Errorf("log lines %v, want %v", levels, want)
	}
}

// A 404 on a list is a fault (a wrong base path, a route the upstream
// lacks), not an id naming nothing: it stays a WARN line.
func TestLogs_ListNotFoundIsAWarning(t *testing.T) {
	t.Parallel()
	e, logs := jsonLogs(t)
	e.upstream.FailNext("/api/v1/categories", 2, http.StatusNotFound, "application/json", `{"error":"not_found"}`)
	e.do(restclienttest.DemoKey, `{ categories(first: 5) { totalCount } }`, nil)
	warned := 0
	for _, l := range logLines(t, logs.String()) {
		if l["level"] == "WARN" && l["msg"] == "upstream call failed" {
			warned++
		}
	}
	if warned == 0 {
		t.Errorf("no WARN line for a 404 on the categories list:\n%s", logs.String())
	}
}
