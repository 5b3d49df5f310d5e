package facade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/suregql/suregql/internal/edge/requestid"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// Identical requests of one key in flight together share one execution,
// over the whole handler: each caller still gets its own answer, request
// id and log line.
func TestSharedQueries_OverHTTP(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) { testSharedOverHTTP(t, method) })
	}
}

func testSharedOverHTTP(t *testing.T, method string) {
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: HandlerTransport{Handler: fake}}))
		if err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer // written by the handler, one line at a time under its lock
		log := slog.New(slog.NewJSONHandler(&logged, nil))
		m := metrics.New()
		co := &restcache.Coalescer{}
		h := New(Config{Upstream: client, Log: log, Metrics: m, Coalescer: co, DisablePlayground: true})

		const query = "query Shared { categories(first: 3) { nodes { name } } }"
		post := func(reqID string) *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"`+query+`"}`))
			r.Header.Set("Content-Type", "application/json")
			if method == http.MethodGet {
				r = httptest.NewRequest(http.MethodGet, "/graphql?query="+url.QueryEscape(query), nil)
			}
			r.Header.Set("X-Api-Key", restclienttest.DemoKey)
			r.Header.Set(requestid.Header, reqID)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			return rec
		}
		release := fake.Hold()
		const n = 5
		recs := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		wg.Go(func() { recs[0] = post("req-0") })
		synctest.Wait() // the first waits on the upstream
		for i := 1; i < n; i++ {
			wg.Go(func() { recs[i] = post(fmt.Sprintf("req-%d", i)) })
		}
		synctest.Wait() // the others wait on the first
		release()
		wg.Wait()

		if got := fake.Calls(); got != 1 {
			t.Errorf("upstream calls = %d for %d identical requests, want 1", got, n)
		}
		if _, coalesced, _ := co.Stats(); coalesced != 0 {
			t.Errorf("%d requests executed and joined the first's GET, want them to take its answer", coalesced)
		}
		var data string
		calls := 0
		for i, rec := range recs {
			var answer struct {
				Data       json.RawMessage
				Errors     []any
				Extensions struct {
					RequestID string `json:"requestId"`
					Upstream  struct{ Calls int }
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || rec.Code != http.StatusOK || len(answer.Errors) > 0 {
				t.Fatalf("answer %d: %d %s (%v)", i, rec.Code, rec.Body, err)
			}
			if i == 0 {
				data = string(answer.Data)
			} else if string(answer.Data) != data {
				t.Errorf("answer %d data = %s, want the first's %s", i, answer.Data, data)
			}
			if want := fmt.Sprintf("req-%d", i); answer.Extensions.RequestID != want {
				t.Errorf("answer %d requestId = %q, want %q", i, answer.Extensions.RequestID, want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != mediaJSON {
				t.Errorf("answer %d Content-Type = %q", i, ct)
			}
			calls += answer.Extensions.Upstream.Calls
		}
		if calls != 1 {
			t.Errorf("extensions.upstream.calls sum to %d over the answers, want 1 (the call made)", calls)
		}
		lines := 0
		for line := range strings.SplitSeq(strings.TrimSpace(logged.String()), "\n") {
			var l struct {
				Msg, Operation, RequestID string
				UpstreamCalls             int
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if l.Msg == "graphql operation" && l.Operation == "Shared" {
				lines++
			}
		}
		if lines != n {
			t.Errorf("%d operation log lines, want one per request (%d):\n%s", lines, n, logged.String())
		}
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := fmt.Sprintf(`suregql_operations_total{operation="Shared",outcome="ok",type="query"} %d`, n)
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, rec.Body)
		}
	})
}
