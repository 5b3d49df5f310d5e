package facade

// Cases of sharedQueries (share.go), first written to break it: identical
// requests of one key in flight together share one execution, and a
// caller never gets from that what it would not get alone. Each test
// drives the whole handler (New) in a synctest bubble over an in-process
// round tripper to the fake upstream, as TestSharedQueries_OverHTTP does.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/suregql/suregql/internal/edge/requestid"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/restclient"
)

// shareCase is the production handler over the fake upstream, in process.
type shareCase struct {
	t    *testing.T
	fake *restclienttest.Server
	h    http.Handler
}

// newShareCase must be called inside a synctest bubble.
func newShareCase(t *testing.T, upstream func(http.Handler) http.Handler, adjust func(*Config)) *shareCase {
	t.Helper()
	fake := restclienttest.New()
	var up http.Handler = fake
	if upstream != nil {
		up = upstream(fake)
	}
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: HandlerTransport{Handler: up}}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Upstream: client, Log: slog.New(slog.DiscardHandler), DisablePlayground: true}
	if adjust != nil {
		adjust(&cfg)
	}
	return &shareCase{t: t, fake: fake, h: New(cfg)}
}

// req describes one HTTP request to /graphql.
type req struct {
	method string // GET or POST
	key    string // X-Api-Key; "" sends none
	body   string // POST body
	query  string // GET raw query string
	accept string // "" sends none
	id     string // X-Request-Id
}

func (e *shareCase) do(r req) *httptest.ResponseRecorder {
	var hr *http.Request
	if r.method == http.MethodGet {
		hr = httptest.NewRequest(http.MethodGet, "/graphql?"+r.query, nil)
	} else {
		hr = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(r.body))
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		hr.Header.Set("X-Api-Key", r.key)
	}
	if r.accept != "" {
		hr.Header.Set("Accept", r.accept)
	}
	if r.id != "" {
		hr.Header.Set(requestid.Header, r.id)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, hr)
	return rec
}

// together sends first, waits until it is blocked on the (held) upstream,
// sends the others, waits until they are blocked too, then releases the
// upstream and returns every answer, first's first.
func (e *shareCase) together(first req, others ...req) []*httptest.ResponseRecorder {
	release := e.fake.Hold()
	recs := make([]*httptest.ResponseRecorder, 1+len(others))
	var wg sync.WaitGroup
	wg.Go(func() { recs[0] = e.do(first) })
	synctest.Wait()
	for i, o := range others {
		wg.Go(func() { recs[i+1] = e.do(o) })
	}
	synctest.Wait()
	release()
	wg.Wait()
	return recs
}

// answer is a decoded GraphQL answer.
type answer struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gotErr        `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
}

type gotErr struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func decodeAnswer(t *testing.T, rec *httptest.ResponseRecorder) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %d %q: %v", rec.Code, rec.Body, err)
	}
	return a
}

func (a answer) codes() []string {
	var cs []string
	for _, e := range a.Errors {
		c, _ := e.Extensions["code"].(string)
		cs = append(cs, c)
	}
	return cs
}

// The media types of a GraphQL answer.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

func postBody(query string) string {
	b, _ := json.Marshal(map[string]string{"query": query})
	return string(b)
}

const shareQuery = "query Red { categories(first: 3) { nodes { name } } }"

// TestShared_WaiterPassesTheResponseLimit: a waiter's answer passes
// the response-size limit too. (The answer is published before the limit
// sees it, and waiters used to take the whole over-limit data while the
// leader was refused: the limit was bypassed by sending a request twice.)
func TestShared_WaiterPassesTheResponseLimit(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newShareCase(t, nil, func(c *Config) { c.MaxResponseBytes = 20 })
				r := req{method: method, key: restclienttest.DemoKey, body: postBody(shareQuery), query: "query=" + url.QueryEscape(shareQuery)}
				recs := e.together(r, r)
				for i, rec := range recs {
					a := decodeAnswer(t, rec)
					if len(a.Errors) != 1 || a.codes()[0] != querylimit.CodeResponseTooLarge || a.Data != nil && string(a.Data) != "null" {
						t.Errorf("answer %d = %d %s, want RESPONSE_TOO_LARGE and no data, as a lone request gets", i, rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// timedWaiter sends r, and once it waits on the (slow) upstream, r again:
// it returns both answers and how long the second took.
func (e *shareCase) timedWaiter(r req) (leader, waiter *httptest.ResponseRecorder, waited time.Duration) {
	var wg sync.WaitGroup
	wg.Go(func() { leader = e.do(r) })
	synctest.Wait() // the first sleeps in the upstream
	wg.Go(func() {
		start := time.Now()
		waiter = e.do(r)
		waited = time.Since(start)
	})
	wg.Wait()
	return leader, waiter, waited
}

// TestShared_NonShareableLeaderReleasesItsWaiters: when the leader's
// operation turns out to be no shareable query (here a mutation, which
// only a POST carries), its waiters run at once. (They used to wait for
// the leader's whole execution and then run with what was left of their
// own timeout: a request answered alone timed out because an identical
// one was in flight.)
func TestShared_NonShareableLeaderReleasesItsWaiters(t *testing.T) {
	testWaiterTime(t, `mutation M { createChat(input: {title: "twice"}) { chat { title } } }`, "", http.MethodPost)
}

// TestShared_DeferredQueryInOnePiece: a query holding @defer answered in
// one piece runs as if it had no @defer, so it is shared as any query.
func TestShared_DeferredQueryInOnePiece(t *testing.T) {
	testWaiterTime(t, "query D { categories(first: 2) { totalCount ... @defer { nodes { name } } } }", "")
}

// TestShared_DeterministicErrorsAreShared: an answer whose errors
// are deterministic (NOT_FOUND here) is shared. (A waiter used to run the
// operation again after the leader's whole execution, and with a slow
// upstream ran out of time: UPSTREAM_UNAVAILABLE where a lone request gets
// NOT_FOUND.)
func TestShared_DeterministicErrorsAreShared(t *testing.T) {
	testWaiterTime(t, `query NF { category(id: "00000000-0000-4000-8000-000000000000") { name } }`, "NOT_FOUND")
}

// testWaiterTime sends query twice (the second while the first waits on a
// 6s upstream, with a 10s operation timeout), by each of methods (POST and
// GET when none is named), and wants both answered with the error codes
// wantCodes (comma-separated) that a lone request gets.
func testWaiterTime(t *testing.T, query, wantCodes string, methods ...string) {
	if len(methods) == 0 {
		methods = []string{http.MethodPost, http.MethodGet}
	}
	for _, method := range methods {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newShareCase(t, nil, func(c *Config) { c.OperationTimeout = 10 * time.Second })
				e.fake.SetDelay(6 * time.Second)
				r := req{method: method, key: restclienttest.DemoKey, body: postBody(query), query: "query=" + url.QueryEscape(query)}
				leader, waiter, waited := e.timedWaiter(r)
				for i, rec := range []*httptest.ResponseRecorder{leader, waiter} {
					a := decodeAnswer(t, rec)
					if got := strings.Join(a.codes(), ","); got != wantCodes {
						t.Errorf("answer %d: error codes %q, want %q (what a lone request gets); the second took %v: %s", i, got, wantCodes, waited, rec.Body)
					}
				}
			})
		})
	}
}

// holdFirst returns an upstream wrapper that makes the first request of
// method to path wait until gate closes; the others pass.
func holdFirst(method, path string, gate <-chan struct{}) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == method && r.URL.Path == path {
				held := false
				once.Do(func() { held = true })
				if held {
					<-gate
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// A query sent after the key's mutation answered never takes the answer of
// an identical query that was in flight (and read) before the write: the
// mutation unlists it, also when the mutation is batched. (Held up.)
func TestShared_QueryAfterMutationNeverTakesAnEarlierRead(t *testing.T) {
	const list = "query C { chats(first: 100) { totalCount nodes { title } } }"
	for _, mutation := range []string{"single", "batched"} {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			t.Run(mutation+"/"+method, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					gate := make(chan struct{})
					e := newShareCase(t, holdFirst(http.MethodGet, "/api/v1/chats", gate), nil)
					q := req{method: method, key: restclienttest.DemoKey, body: postBody(list), query: "query=" + url.QueryEscape(list)}
					var before *httptest.ResponseRecorder
					var wg sync.WaitGroup
					wg.Go(func() { before = e.do(q) })
					synctest.Wait() // it read... and waits on the upstream's answer

					m := postBody(`mutation { createChat(input: {title: "Written"}) { chat { id } } }`)
					if mutation == "batched" {
						m = "[" + m + "]"
					}
					if rec := e.do(req{method: http.MethodPost, key: restclienttest.DemoKey, body: m}); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
						t.Fatalf("mutation: %d %s", rec.Code, rec.Body)
					}
					var after *httptest.ResponseRecorder
					wg.Go(func() { after = e.do(q) })
					synctest.Wait()
					if after == nil {
						t.Errorf("the query sent after the mutation waits for the one sent before it")
					}
					close(gate)
					wg.Wait()
					if before.Code != http.StatusOK {
						t.Errorf("the query sent before: %d %s", before.Code, before.Body)
					}
					if !strings.Contains(after.Body.String(), `"Written"`) {
						t.Errorf("the query sent after the mutation = %s, want the chat it wrote", after.Body)
					}
				})
			})
		}
	}
}

// A waiter whose client goes away stops waiting at once: it is answered
// (canceled) without waiting for the leader, which goes on for its own
// caller. (Held up.)
func TestShared_WaiterGoneDoesNotWaitForLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newShareCase(t, nil, nil)
		release := e.fake.Hold()
		body := postBody(shareQuery)
		var leader, waiter *httptest.ResponseRecorder
		var wg sync.WaitGroup
		wg.Go(func() { leader = e.do(req{method: http.MethodPost, key: restclienttest.DemoKey, body: body}) })
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		wg.Go(func() {
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-Api-Key", restclienttest.DemoKey)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, r)
			waiter = rec
		})
		synctest.Wait()
		cancel()
		synctest.Wait()
		if waiter == nil {
			t.Fatalf("a waiter whose client went away still waits for the leader")
		}
		if leader != nil {
			t.Fatalf("the leader was answered before the upstream was released")
		}
		release()
		wg.Wait()
		if a := decodeAnswer(t, leader); len(a.Errors) > 0 {
			t.Errorf("leader: %s", leader.Body)
		}
		if got := e.fake.Calls(); got != 1 {
			t.Errorf("upstream calls = %d, want 1 (the gone waiter runs nothing)", got)
		}
	})
}

// Requests of other keys, with the same body and at the same moment, never
// share: each gets its own family's data, its own request id, and the
// waiter of each key its own Content-Type; a request without a key, or
// with a key the upstream refuses, shares nothing. (Held up.)
func TestShared_KeysNeverShare(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newShareCase(t, nil, nil)
				e.fake.AddKey("revoked-key-1234", restclienttest.DemoKey)
				e.fake.RevokeKey("revoked-key-1234")
				mk := func(key, id, accept string) req {
					return req{method: method, key: key, id: id, accept: accept, body: postBody(shareQuery), query: "query=" + url.QueryEscape(shareQuery)}
				}
				reqs := []req{
					mk(restclienttest.DemoKey, "demo-0", ""),
					mk(restclienttest.OtherFamilyKey, "other-0", ""),
					mk("", "none-0", ""),
					mk("revoked-key-1234", "revoked-0", ""),
					mk(restclienttest.DemoKey, "demo-1", mediaGraphQLResponse),
					mk(restclienttest.OtherFamilyKey, "other-1", mediaGraphQLResponse),
					mk("", "none-1", mediaJSON),
					mk("revoked-key-1234", "revoked-1", mediaJSON),
				}
				recs := e.together(reqs[0], reqs[1:]...)
				data := map[string]string{}
				for i, rec := range recs {
					r := reqs[i]
					a := decodeAnswer(t, rec)
					if a.Extensions["requestId"] != r.id {
						t.Errorf("%s: requestId %v", r.id, a.Extensions["requestId"])
					}
					wantCT := r.accept
					if wantCT == "" {
						wantCT = mediaJSON
					}
					if ct := rec.Header().Get("Content-Type"); ct != wantCT {
						t.Errorf("%s: Content-Type %q, want %q", r.id, ct, wantCT)
					}
					switch r.key {
					case restclienttest.DemoKey, restclienttest.OtherFamilyKey:
						if len(a.Errors) > 0 || rec.Code != http.StatusOK {
							t.Errorf("%s: %d %s", r.id, rec.Code, rec.Body)
						}
						if d, ok := data[r.key]; ok && d != string(a.Data) {
							t.Errorf("%s: data %s, want %s", r.id, a.Data, d)
						}
						data[r.key] = string(a.Data)
					default:
						if len(a.Errors) == 0 {
							t.Errorf("%s: answered without an error: %s", r.id, rec.Body)
						}
					}
				}
				if data[restclienttest.DemoKey] == data[restclienttest.OtherFamilyKey] {
					t.Errorf("two families got the same data %s", data[restclienttest.DemoKey])
				}
				if got := e.fake.CallsFor(restclienttest.DemoKey); got != 1 {
					t.Errorf("demo key calls = %d, want 1", got)
				}
				if got := e.fake.CallsFor(restclienttest.OtherFamilyKey); got != 1 {
					t.Errorf("other key calls = %d, want 1", got)
				}
			})
		})
	}
}

// Requests refused before or during execution, and leaders whose client
// went away, leave nothing listed: the same request sent again is not
// made to wait for an execution that is over (a listed entry would hold it
// until its own deadline, OperationTimeout in the bubble's clock). (Held up.)
func TestShared_NothingLeftListed(t *testing.T) {
	hash := "0000000000000000000000000000000000000000000000000000000000000000"
	for _, tc := range []struct{ name, method, body, query string }{
		{"parse error", http.MethodPost, postBody("{"), ""},
		{"validation error", http.MethodPost, postBody("{ nope }"), ""},
		{"too expensive", http.MethodPost, postBody("{ a: categories { nodes { id } } b: chats { nodes { id } } c: category(id: \"00000000-0000-4000-8000-000000000000\") { id } }"), ""},
		{"unknown persisted query", http.MethodPost, `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}}`, ""},
		{"mutation by GET", http.MethodGet, "", "query=" + url.QueryEscape(`mutation { createChat(input: {title: "x"}) { chat { id } } }`)},
		{"GET parse error", http.MethodGet, "", "query=" + url.QueryEscape("{")},
		{"GET bad variables", http.MethodGet, "", "query=" + url.QueryEscape("{ __typename }") + "&variables=%7B"},
		{"batch", http.MethodPost, "[" + postBody(shareQuery) + "]", ""},
		{"upstream error", http.MethodPost, postBody(`{ category(id: "00000000-0000-4000-8000-000000000000") { name } }`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newShareCase(t, nil, func(c *Config) { c.MaxUpstreamCalls = 2 })
				r := req{method: tc.method, key: restclienttest.DemoKey, body: tc.body, query: tc.query}
				for i := range 3 {
					start := time.Now()
					rec := e.do(r)
					if d := time.Since(start); d != 0 {
						t.Errorf("request %d took %v (%d %s): it waited for an execution left listed", i, d, rec.Code, rec.Body)
					}
					if tc.name != "batch" && !strings.Contains(rec.Body.String(), `"errors"`) {
						t.Errorf("request %d was not refused: %d %s", i, rec.Code, rec.Body)
					}
				}
			})
		})
	}
	t.Run("leader gone", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := newShareCase(t, nil, nil)
			release := e.fake.Hold()
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", strings.NewReader(postBody(shareQuery)))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("X-Api-Key", restclienttest.DemoKey)
				e.h.ServeHTTP(httptest.NewRecorder(), r)
			}()
			synctest.Wait()
			cancel()
			<-done
			release()
			start := time.Now()
			rec := e.do(req{method: http.MethodPost, key: restclienttest.DemoKey, body: postBody(shareQuery)})
			if d := time.Since(start); d != 0 || rec.Code != http.StatusOK {
				t.Errorf("the next request took %v: %d %s", d, rec.Code, rec.Body)
			}
		})
	})
}

// gatedTracer is a no-op tracer provider whose operation spans named with
// prefix wait for gate: a way to hold an operation between its listing
// (the transport) and its execution (the response middlewares).
type gatedTracer struct {
	noop.TracerProvider
	prefix string
	gate   <-chan struct{}
}

func (p gatedTracer) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return gatedSpans{Tracer: p.TracerProvider.Tracer(name, opts...), p: p}
}

type gatedSpans struct {
	trace.Tracer
	p gatedTracer
}

func (g gatedSpans) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if strings.HasPrefix(name, g.p.prefix) {
		<-g.p.gate
	}
	return g.Tracer.Start(ctx, name, opts...)
}

// TestShared_IdenticalMutationsRunAtOnce: two identical mutations
// at once (a double click) each run at once. A POST is listed before it is
// parsed, so the second joins the first; the first releases it as soon as
// its execution starts. (It used to wait for the first's whole execution,
// then time out: UPSTREAM_OUTCOME_UNKNOWN for a write that alone
// succeeds.) A tracer whose operation span waits holds the first between
// its listing and its execution.
func TestShared_IdenticalMutationsRunAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		e := newShareCase(t, nil, func(c *Config) {
			c.OperationTimeout = 10 * time.Second
			c.TracerProvider = gatedTracer{prefix: "mutation", gate: gate}
		})
		e.fake.SetDelay(6 * time.Second)
		m := req{method: http.MethodPost, key: restclienttest.DemoKey,
			body: postBody(`mutation Twice { createChat(input: {title: "Twice"}) { chat { id } } }`)}
		recs := make([]*httptest.ResponseRecorder, 2)
		var wg sync.WaitGroup
		wg.Go(func() { recs[0] = e.do(m) })
		synctest.Wait() // the first is listed, and waits before its execution
		wg.Go(func() { recs[1] = e.do(m) })
		synctest.Wait()
		close(gate)
		wg.Wait()
		for i, rec := range recs {
			if a := decodeAnswer(t, rec); len(a.Errors) > 0 {
				t.Errorf("mutation %d: %s, want the chat it created, as alone", i, rec.Body)
			}
		}
	})
}
