package facade_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// scrapeMetrics reads url (a /metrics endpoint) over HTTP and parses it;
// it also returns the raw exposition.
func scrapeMetrics(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families, string(raw)
}

// series returns the values of a family by its labels, rendered as
// `a="x",b="y"` in name order: a counter's value, a histogram's count.
func series(families map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range families[name].GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		v := m.GetCounter().GetValue()
		if h := m.GetHistogram(); h != nil {
			v = float64(h.GetSampleCount())
		}
		out[strings.Join(labels, ",")] = v
	}
	return out
}

// TestMetrics_CountWhatTheUpstreamSaw runs a known workload against the
// fake upstream (successes, a retried 502, a 404, a write, a cache hit, a
// coalesced GET, and each kind of refusal) and reads /metrics over HTTP:
// the upstream calls counted are the ones the fake received, per endpoint
// template and status class, and no label holds a key or a key's hash.
func TestMetrics_CountWhatTheUpstreamSaw(t *testing.T) {
	t.Parallel()
	co := &restcache.Coalescer{}
	e := newEnv(t, withConfig(func(c *facade.Config) {
		c.Metrics = metrics.New()
		c.CacheTTL = time.Minute
		c.Coalescer = co
		c.MaxUpstreamCalls = 5
	}))
	demo, other, readOnly := restclienttest.DemoKey, restclienttest.OtherFamilyKey, restclienttest.ReadOnlyKey

	const tree = `query Tree { categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } }`
	wantCalls(t, e.ok(demo, tree, nil, nil), 1)
	wantCalls(t, e.ok(demo, tree, nil, nil), 0) // cached

	e.upstream.FailNext("/api/v1/chats", 1, http.StatusBadGateway, "text/html", "<html>bad gateway</html>")
	wantCalls(t, e.ok(demo, `query Chats { chats(first: 5) { nodes { id title } } }`, nil, nil), 2) // a 502, then its retry

	r := e.do(demo, `query One($id: ID!) { category(id: $id) { name } }`, map[string]any{"id": "00000000-0000-4000-8000-000000000000"})
	wantError(t, r, "NOT_FOUND")

	wantCalls(t, e.ok(demo, `mutation Create { createChat(input: {title: "Budget"}) { chat { id } } }`, nil, nil), 1)
	wantCalls(t, e.ok(demo, `{ rateLimit { limit remaining } }`, nil, nil), 0)

	var imports []string
	for i := range 6 { // six calls before any nested field: over the budget of 5
		imports = append(imports, fmt.Sprintf(`i%d: import(id: "00000000-0000-4000-8000-00000000000%d") { id }`, i, i))
	}
	r = e.do(demo, "query Imports { "+strings.Join(imports, " ")+" }", nil)
	wantError(t, r, "QUERY_TOO_EXPENSIVE")
	wantCalls(t, r, 0)

	// A key that spent its window is refused without a call.
	e.upstream.SetRateLimit(other, 1)
	e.ok(other, `query Spend { categories(first: 1) { totalCount } }`, nil, nil)
	r = e.do(other, `query Refused { chats(first: 1) { totalCount } }`, nil)
	wantError(t, r, "RATE_LIMITED")
	wantCalls(t, r, 0)

	// Refused before any operation: a limit, a body too large, a parse error.
	wantError(t, e.do(demo, categoryCycle(9), nil), "QUERY_LIMIT_EXCEEDED")
	if r := postJSON(t, e, `{"query":"{ __typename }","variables":{"pad":"`+strings.Repeat("x", 200<<10)+`"}}`, nil); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of 200 KiB: status %d, want 413", r.status)
	}
	if r := postJSON(t, e, `{"query":"query Broken { categories(","operationName":"Broken"}`, map[string]string{"X-Api-Key": demo}); errorCode(r) != "GRAPHQL_PARSE_FAILED" {
		t.Fatalf("a query that does not parse: %s, want GRAPHQL_PARSE_FAILED", r.raw)
	}
	if r := postJSON(t, e, `{"query":"query Invalid { nope }","operationName":"Invalid"}`, map[string]string{"X-Api-Key": demo}); errorCode(r) != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("a query that does not validate: %s, want GRAPHQL_VALIDATION_FAILED", r.raw)
	}

	// Two identical GETs in flight at once share one call.
	release := e.upstream.Hold()
	var wg sync.WaitGroup
	for i := range 2 {
		// Two texts (a comment differs): identical texts of a key in flight
		// together would share one execution, before any GET.
		query := fmt.Sprintf("query Shared { categories(first: 3) { nodes { name } } } # %d", i)
		wg.Go(func() {
			// Not e.ok: the calls counted while both run are shared.
			if _, err := e.client(readOnly).ExecRaw(t.Context(), query, nil); err != nil {
				t.Error(err)
			}
		})
	}
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		if _, _, waiting := co.Stats(); waiting == 2 {
			break
		}
		if time.Now().After(deadline) {
			release()
			t.Fatal("the two operations did not both wait on the upstream")
		}
	}
	release()
	wg.Wait()

	families, raw := scrapeMetrics(t, e.server.URL+"/metrics")

	// Every call the fake received, and nothing else.
	want := map[string]float64{}
	perEndpoint := map[string]float64{}
	for _, req := range e.upstream.Requests() {
		endpoint := restclient.Endpoint(req.Method, strings.TrimPrefix(req.Path, "/api/v1"))
		want[fmt.Sprintf("endpoint=%q,status_class=%q", endpoint, metrics.StatusClass(req.Status))]++
		perEndpoint[fmt.Sprintf("endpoint=%q", endpoint)]++
	}
	got := series(families, "suregql_upstream_calls_total")
	var sum float64
	for _, v := range got {
		sum += v
	}
	if sum != float64(e.upstream.Calls()) {
		t.Errorf("suregql_upstream_calls_total sums to %v, the upstream received %d calls", sum, e.upstream.Calls())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_upstream_calls_total = %v,\nthe upstream received %v", got, want)
	}
	if got := series(families, "suregql_upstream_call_duration_seconds"); fmt.Sprint(got) != fmt.Sprint(perEndpoint) {
		t.Errorf("suregql_upstream_call_duration_seconds counts %v, want %v", got, perEndpoint)
	}
	if want[`endpoint="GET /api/v1/chats",status_class="5xx"`] != 1 || want[`endpoint="GET /api/v1/categories/{id}",status_class="4xx"`] != 1 ||
		want[`endpoint="POST /api/v1/chats",status_class="2xx"`] != 1 {
		t.Errorf("the workload did not reach the upstream as planned: %v", want)
	}

	ops := series(families, "suregql_operations_total")
	for labels, n := range map[string]float64{
		`operation="Tree",outcome="ok",type="query"`:                          2,
		`operation="Chats",outcome="ok",type="query"`:                         1,
		`operation="One",outcome="NOT_FOUND",type="query"`:                    1,
		`operation="Create",outcome="ok",type="mutation"`:                     1,
		`operation="anonymous",outcome="ok",type="query"`:                     1,
		`operation="Imports",outcome="QUERY_TOO_EXPENSIVE",type="query"`:      1,
		`operation="Refused",outcome="RATE_LIMITED",type="query"`:             1,
		`operation="anonymous",outcome="QUERY_LIMIT_EXCEEDED",type="unknown"`: 1,
		// Refused before the document was read: no name known.
		`operation="anonymous",outcome="GRAPHQL_PARSE_FAILED",type="unknown"`:    1,
		`operation="Invalid",outcome="GRAPHQL_VALIDATION_FAILED",type="unknown"`: 1,
		`operation="Shared",outcome="ok",type="query"`:                           2,
	} {
		if ops[labels] != n {
			t.Errorf("suregql_operations_total{%s} = %v, want %v", labels, ops[labels], n)
		}
	}
	var answered float64
	for _, v := range ops {
		answered += v
	}
	if d := series(families, "suregql_operation_duration_seconds"); d[`type="query"`]+d[`type="mutation"`]+d[`type="unknown"`] != answered {
		t.Errorf("suregql_operation_duration_seconds counts %v, want %v observations in all", d, answered)
	}

	for name, want := range map[string]map[string]float64{
		"suregql_budget_refusals_total":      {"": 1},
		"suregql_rate_limit_refusals_total":  {"": 1},
		"suregql_query_limit_refusals_total": {`limit="bodyBytes"`: 1, `limit="depth"`: 1},
	} {
		if got := series(families, name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	_, shared, _ := co.Stats()
	if got := series(families, "suregql_upstream_shared_total")[""]; shared < 1 || got != float64(shared) {
		t.Errorf("suregql_upstream_shared_total = %v, the coalescer shared %d (want at least 1)", got, shared)
	}
	if cache := series(families, "suregql_cache_requests_total"); cache[`result="hit"`] < 1 || cache[`result="miss"`] < 1 {
		t.Errorf("suregql_cache_requests_total = %v, want hits and misses", cache)
	}
	runtimeSeries := []string{"go_goroutines"}
	if runtime.GOOS == "linux" { // the process collector reads /proc
		runtimeSeries = append(runtimeSeries, "process_start_time_seconds")
	}
	for _, name := range runtimeSeries {
		if _, ok := families[name]; !ok {
			t.Errorf("no %s in /metrics", name)
		}
	}

	// No key anywhere: not in a label, not at all; and no key's id (a
	// keyed hash, 32 hex digits) in a label.
	callerID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if callerID.MatchString(l.GetValue()) {
					t.Errorf("%s{%s=%q} holds what looks like a caller's id", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, key := range []string{demo, other, readOnly} {
		for _, secret := range []string{key} {
			if strings.Contains(raw, secret) {
				t.Errorf("/metrics contains %q", secret)
			}
			for name, f := range families {
				for _, m := range f.GetMetric() {
					for _, l := range m.GetLabel() {
						if strings.Contains(l.GetValue(), secret) {
							t.Errorf("%s{%s=%q} holds %q", name, l.GetName(), l.GetValue(), secret)
						}
					}
				}
			}
		}
	}
}

// /metrics is served only with Metrics, and not on the main handler when
// it has a listener of its own.
func TestMetrics_Endpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    func(*facade.Config)
		status int
	}{
		{"metrics off", func(*facade.Config) {}, http.StatusNotFound},
		{"on the main handler", func(c *facade.Config) { c.Metrics = metrics.New() }, http.StatusOK},
		{"on a listener of its own", func(c *facade.Config) {
			c.Metrics, c.DisableMetricsEndpoint = metrics.New(), true
		}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withConfig(tc.cfg))
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := send(t, req); r.status != tc.status {
				t.Errorf("GET /metrics: status %d, want %d", r.status, tc.status)
			}
		})
	}
}

// Operation names get series of their own only from callers the upstream
// accepted: 100 junk names sent first (no key, a key the upstream refuses,
// a key never sent upstream) count as "other" and take no slot, so real
// names sent after them keep theirs; a name a stranger sent first gets its
// series once a valid key's operation has it; a key revoked upstream loses
// the right with its first 401.
func TestMetrics_StrangersCannotTakeTheNameSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Metrics = metrics.New() }))
	const unknownKey = "a-key-the-upstream-never-issued"
	for i := range metrics.MaxOperationNames {
		switch i % 3 {
		case 0: // no key: answered, no call
			e.ok("", fmt.Sprintf("query Junk%d { __typename }", i), nil, nil)
		case 1: // refused upstream: 401
			wantError(t, e.do(unknownKey, fmt.Sprintf("query Junk%d { chats(first: 1) { totalCount } }", i), nil), "UNAUTHENTICATED")
		case 2: // a key no call has vouched for: answered, no call
			e.ok(unknownKey, fmt.Sprintf("query Junk%d { __typename }", i), nil, nil)
		}
	}
	demo := restclienttest.DemoKey
	wantCalls(t, e.ok(demo, `query Real { chats(first: 1) { totalCount } }`, nil, nil), 1)
	// The key is known now: its operations answered without a call, or
	// refused, keep their names too.
	wantCalls(t, e.ok(demo, `query NoCall { __typename }`, nil, nil), 0)
	wantError(t, e.do(demo, `query Bad { category(id: "not-a-uuid") { name } }`, nil), "BAD_USER_INPUT")
	wantCalls(t, e.ok(demo, `query Junk0 { __typename }`, nil, nil), 0)

	// A key revoked upstream: its first 401 takes the right away.
	const revoked = "a-key-revoked-later"
	e.upstream.AddKey(revoked, demo)
	wantCalls(t, e.ok(revoked, `query BeforeRevoked { chats(first: 1) { totalCount } }`, nil, nil), 1)
	e.upstream.RevokeKey(revoked)
	wantError(t, e.do(revoked, `query Revoked { chats(first: 1) { totalCount } }`, nil), "UNAUTHENTICATED")
	e.ok(revoked, `query AfterRevoked { __typename }`, nil, nil)

	families, _ := scrapeMetrics(t, e.server.URL+"/metrics")
	got := series(families, "suregql_operations_total")
	want := map[string]float64{
		// 34 junk names with no key (Junk0 among them) and 33 with the
		// unknown key; 33 refused upstream; then the revoked key's two.
		`operation="other",outcome="ok",type="query"`:              34 + 33 + 1,
		`operation="other",outcome="UNAUTHENTICATED",type="query"`: 33 + 1,
		`operation="Real",outcome="ok",type="query"`:               1,
		`operation="NoCall",outcome="ok",type="query"`:             1,
		`operation="Bad",outcome="BAD_USER_INPUT",type="query"`:    1,
		`operation="Junk0",outcome="ok",type="query"`:              1,
		`operation="BeforeRevoked",outcome="ok",type="query"`:      1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_operations_total =\n%v\nwant\n%v", got, want)
	}
}

// The metrics know a key the upstream authenticated by any answer that
// shows it (restclient.Call.KeyVerdict), not by a 2xx only: a key whose
// first answer is Sure's 404 for a chat it does not have (an
// authenticated answer, with the key's rate-limit reading) has its
// operation's name labelled, as the breaker and the bound of new keys
// count it accepted. A stranger's 401 still labels nothing.
func TestMetrics_AKeyAcceptedByAnAuthenticatedNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Metrics = metrics.New() }))
	const key = "a-key-whose-first-answer-is-a-404"
	e.upstream.AddKey(key, restclienttest.DemoKey)
	const q = `query %s { chat(id: "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11") { id } }`
	wantError(t, e.do("a-key-the-upstream-never-issued", fmt.Sprintf(q, "Stranger"), nil), "UNAUTHENTICATED")
	wantError(t, e.do(key, fmt.Sprintf(q, "FirstAnswerNotFound"), nil), "NOT_FOUND")

	families, _ := scrapeMetrics(t, e.server.URL+"/metrics")
	got := series(families, "suregql_operations_total")
	want := map[string]float64{
		`operation="other",outcome="UNAUTHENTICATED",type="query"`:         1,
		`operation="FirstAnswerNotFound",outcome="NOT_FOUND",type="query"`: 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_operations_total =\n%v\nwant\n%v", got, want)
	}
}
