package metrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{
		0: "none", 200: "2xx", 201: "2xx", 204: "2xx", 301: "3xx", 304: "3xx",
		400: "4xx", 401: "4xx", 404: "4xx", 422: "4xx", 429: "429",
		500: "5xx", 502: "5xx", 503: "5xx", 599: "5xx",
	} {
		if got := metrics.StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestOperation_NamesAreBounded(t *testing.T) {
	m := metrics.New()
	for i := range metrics.MaxOperationNames + 20 {
		name := fmt.Sprintf("Op%d", i)
		m.AdmitOperationName(name)
		m.Operation(name, metrics.TypeQuery, metrics.OutcomeOK, time.Millisecond, "")
	}
	m.Operation("Op0", metrics.TypeQuery, metrics.OutcomeOK, time.Millisecond, "") // seen first: its own series
	for _, name := range []string{
		"",    // anonymous
		"1st", // not a GraphQL name
		"a-b", // not a GraphQL name
		"key=" + strings.Repeat("x", 10),
		strings.Repeat("n", 65), // too long
	} {
		m.AdmitOperationName(name) // not admitted all the same
		m.Operation(name, "bogus", "QUERY_LIMIT_EXCEEDED", 0, "")
	}
	got := count(t, m, "suregql_operations_total")
	// The first names, then other (ok), anonymous and other (refused).
	if n := len(got); n != metrics.MaxOperationNames+3 {
		t.Errorf("%d series, want %d", n, metrics.MaxOperationNames+3)
	}
	for labels, want := range map[string]float64{
		`operation="Op0",outcome="ok",type="query"`:                           2,
		`operation="Op99",outcome="ok",type="query"`:                          1,
		`operation="other",outcome="ok",type="query"`:                         20,
		`operation="anonymous",outcome="QUERY_LIMIT_EXCEEDED",type="unknown"`: 1,
		`operation="other",outcome="QUERY_LIMIT_EXCEEDED",type="unknown"`:     4,
	} {
		if got[labels] != want {
			t.Errorf("suregql_operations_total{%s} = %v, want %v", labels, got[labels], want)
		}
	}
	if got := count(t, m, "suregql_operation_duration_seconds")[`type="query"`]; got != float64(metrics.MaxOperationNames+21) {
		t.Errorf("duration observations = %v, want %d (none for 0)", got, metrics.MaxOperationNames+21)
	}
}

// Only admitted names have series of their own: the names of operations
// nobody vouched for count as "other" and take no slot, however many come
// first.
func TestOperation_OnlyAdmittedNamesAreLabelled(t *testing.T) {
	m := metrics.New()
	for i := range 2 * metrics.MaxOperationNames {
		m.Operation(fmt.Sprintf("Junk%d", i), metrics.TypeQuery, metrics.OutcomeOK, 0, "")
	}
	m.AdmitOperationName("Real")
	m.Operation("Real", metrics.TypeQuery, metrics.OutcomeOK, 0, "")
	m.Operation("", metrics.TypeQuery, metrics.OutcomeOK, 0, "")
	m.AdmitOperationName("Junk0") // once vouched for, a name seen before has its own series
	m.Operation("Junk0", metrics.TypeQuery, "NOT_FOUND", 0, "")
	got := count(t, m, "suregql_operations_total")
	want := map[string]float64{
		`operation="other",outcome="ok",type="query"`:        2 * metrics.MaxOperationNames,
		`operation="Real",outcome="ok",type="query"`:         1,
		`operation="anonymous",outcome="ok",type="query"`:    1,
		`operation="Junk0",outcome="NOT_FOUND",type="query"`: 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_operations_total = %v, want %v", got, want)
	}
}

func TestUpstreamCall(t *testing.T) {
	m := metrics.New()
	for _, c := range []restclient.Call{
		{Method: "GET", Endpoint: "GET /api/v1/categories/{id}", Status: 200, Duration: time.Millisecond},
		{Method: "GET", Endpoint: "GET /api/v1/categories/{id}", Status: 404, Duration: time.Millisecond},
		{Method: "GET", Endpoint: "GET /api/v1/chats", Status: 0},
		{Method: "POST", Endpoint: "POST /api/v1/chats", Status: 429},
		{Method: "GET", Status: 503},
	} {
		m.UpstreamCall(c)
	}
	got := count(t, m, "suregql_upstream_calls_total")
	want := map[string]float64{
		`endpoint="GET /api/v1/categories/{id}",status_class="2xx"`: 1,
		`endpoint="GET /api/v1/categories/{id}",status_class="4xx"`: 1,
		`endpoint="GET /api/v1/chats",status_class="none"`:          1,
		`endpoint="POST /api/v1/chats",status_class="429"`:          1,
		`endpoint="GET /api/v1/{unknown}",status_class="5xx"`:       1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_upstream_calls_total = %v, want %v", got, want)
	}
	if got := count(t, m, "suregql_upstream_call_duration_seconds")[`endpoint="GET /api/v1/categories/{id}"`]; got != 2 {
		t.Errorf("duration observations of GET /api/v1/categories/{id} = %v, want 2", got)
	}
}

func TestSavings(t *testing.T) {
	m := metrics.New()
	zero := map[string]float64{`result="hit"`: 0, `result="miss"`: 0, `result="stale"`: 0}
	if got := count(t, m, "suregql_cache_requests_total"); fmt.Sprint(got) != fmt.Sprint(zero) {
		t.Errorf("before Watch: suregql_cache_requests_total = %v, want %v", got, zero)
	}
	cache := restcache.NewCache(10, time.Hour)
	m.Watch(&restcache.Coalescer{}, cache)
	key := restclient.RequestKey{Path: "chats"}
	fetcher := restcache.For(callerkey.NewRing(nil, false).Key("k"), cache)
	for range 3 {
		if _, err := fetcher.Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) {
			return &restclient.Response{Status: 200}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{`result="hit"`: 2, `result="miss"`: 1, `result="stale"`: 0}
	if got := count(t, m, "suregql_cache_requests_total"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suregql_cache_requests_total = %v, want %v", got, want)
	}
	if got := count(t, m, "suregql_upstream_shared_total")[""]; got != 0 {
		t.Errorf("suregql_upstream_shared_total = %v, want 0", got)
	}
}

// A stale answer (the upstream out of quota, an answer held past its
// freshness) is counted as such, and by its reason.
func TestSavings_Stale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New()
		cache := restcache.NewFreshCache(10, restcache.Freshness{StaleMax: time.Hour})
		m.Watch(&restcache.Coalescer{}, cache)
		key := restclient.RequestKey{Path: "categories/c1"}
		fetcher := restcache.For(callerkey.NewRing(nil, false).Key("k"), cache)
		if _, err := fetcher.Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) {
			return &restclient.Response{Status: 200}, nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour / 2)
		limited := &restclient.RateLimitError{APIError: restclient.APIError{StatusCode: 429}, RetryAfter: time.Minute}
		if resp, err := fetcher.Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) { return nil, limited }); err != nil || resp.Stale == nil {
			t.Fatalf("got %v, %v; want a stale answer", resp, err)
		}
		want := map[string]float64{`result="hit"`: 0, `result="miss"`: 1, `result="stale"`: 1}
		if got := count(t, m, "suregql_cache_requests_total"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("suregql_cache_requests_total = %v, want %v", got, want)
		}
		wantBy := map[string]float64{`reason="circuit_open"`: 0, `reason="rate_limited"`: 1, `reason="upstream_unavailable"`: 0}
		if got := count(t, m, "suregql_cache_stale_total"); fmt.Sprint(got) != fmt.Sprint(wantBy) {
			t.Errorf("suregql_cache_stale_total = %v, want %v", got, wantBy)
		}
	})
}

func TestRefusals(t *testing.T) {
	m := metrics.New()
	m.BudgetRefused()
	m.RateLimitRefused()
	m.RateLimitRefused()
	m.QueryLimitRefused("depth")
	for name, want := range map[string]map[string]float64{
		"suregql_budget_refusals_total":      {"": 1},
		"suregql_rate_limit_refusals_total":  {"": 2},
		"suregql_query_limit_refusals_total": {`limit="depth"`: 1},
	} {
		if got := count(t, m, name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// A nil *Metrics counts nothing and does not fail.
func TestNil(t *testing.T) {
	var m *metrics.Metrics
	m.AdmitOperationName("A")
	m.Operation("A", metrics.TypeQuery, metrics.OutcomeOK, time.Second, "")
	m.UpstreamCall(restclient.Call{})
	m.BudgetRefused()
	m.RateLimitRefused()
	m.QueryLimitRefused("depth")
	m.Watch(nil, nil)
}

// The registry holds the runtime's and the process's collectors, and the
// names pass promlint.
func TestRegistry(t *testing.T) {
	m := metrics.New()
	m.Operation("A", metrics.TypeQuery, metrics.OutcomeOK, time.Second, "")
	m.UpstreamCall(restclient.Call{Method: "GET", Endpoint: "GET /api/v1/chats", Status: 200})
	m.QueryLimitRefused("depth")
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "suregql_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
	families := scrape(t, m)
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total"} {
		if _, ok := families[name]; !ok && (name != "process_cpu_seconds_total" || processMetricsSupported) {
			t.Errorf("no %s in /metrics", name)
		}
	}
}

// processMetricsSupported: the process collector reads /proc.
var processMetricsSupported = func() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}()

// scrape gets the handler's exposition and parses it.
func scrape(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", rec.Code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// count returns the counter values (or histogram sample counts) of the
// family name, by labels rendered as `a="x",b="y"` in name order.
func count(t *testing.T, m *metrics.Metrics, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	f, ok := scrape(t, m)[name]
	if !ok {
		return out
	}
	for _, s := range f.GetMetric() {
		var labels []string
		for _, l := range s.GetLabel() {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		v := s.GetCounter().GetValue()
		if h := s.GetHistogram(); h != nil {
			v = float64(h.GetSampleCount())
		}
		out[strings.Join(labels, ",")] = v
	}
	return out
}

// suregql_build_info has one series, of value 1, naming the build and the
// Go that compiled it.
func TestBuildInfo(t *testing.T) {
	m := metrics.New()
	m.SetBuildInfo("0.9.0", "earlier")
	m.SetBuildInfo("1.2.3", "0123abcd")
	fam := scrape(t, m)["suregql_build_info"]
	if fam == nil || len(fam.GetMetric()) != 1 {
		t.Fatalf("suregql_build_info = %v, want one series", fam)
	}
	s := fam.GetMetric()[0]
	labels := map[string]string{}
	for _, l := range s.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if s.GetGauge().GetValue() != 1 || labels["version"] != "1.2.3" || labels["revision"] != "0123abcd" ||
		labels["goversion"] != runtime.Version() {
		t.Errorf("suregql_build_info = %v %v, want 1 {version 1.2.3, revision 0123abcd, goversion %s}", labels, s.GetGauge().GetValue(), runtime.Version())
	}
}

// Scraped as OpenMetrics, the operation's duration carries the trace id
// of a traced operation as its bucket's exemplar; the Prometheus text
// format (no exemplars) stays what it was.
func TestOperationExemplar(t *testing.T) {
	m := metrics.New()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	m.Operation("A", metrics.TypeQuery, metrics.OutcomeOK, 30*time.Millisecond, traceID)
	m.Operation("B", metrics.TypeQuery, metrics.OutcomeOK, 3*time.Second, "")

	get := func(accept string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/metrics", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		m.Handler().ServeHTTP(rec, req)
		return rec
	}
	om := get("application/openmetrics-text; version=1.0.0")
	if ct := om.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q, want application/openmetrics-text", ct)
	}
	var exemplars []string
	for line := range strings.Lines(om.Body.String()) {
		if strings.HasPrefix(line, "suregql_operation_duration_seconds_bucket") && strings.Contains(line, " # ") {
			exemplars = append(exemplars, line)
		}
	}
	if len(exemplars) != 1 || !strings.Contains(exemplars[0], `le="0.05"`) ||
		!strings.Contains(exemplars[0], `# {trace_id="`+traceID+`"} 0.03`) {
		t.Errorf("exemplars = %q, want one: trace_id %s in the bucket le=\"0.05\"", exemplars, traceID)
	}
	if text := get("").Body.String(); strings.Contains(text, traceID) {
		t.Error("the Prometheus text format carries the exemplar")
	}
}
