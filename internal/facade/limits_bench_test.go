package facade_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/restclient"
)

// productionHandler is facade.New over the fake upstream in process, as
// benchOperation builds it.
func productionHandler(tb testing.TB, cfg facade.Config) (http.Handler, *restclienttest.Server) {
	tb.Helper()
	up := restclienttest.New()
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: facade.HandlerTransport{Handler: up}}))
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Upstream = client
	cfg.Log = slog.New(slog.DiscardHandler)
	return facade.New(cfg), up
}

// serveRefusal sends query to h as one POST and fails unless it is
// refused with QUERY_LIMIT_EXCEEDED.
func serveRefusal(tb testing.TB, h http.Handler, body string) {
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", restclienttest.DemoKey)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !bytes.Contains(rec.Body.Bytes(), []byte(querylimit.Code)) {
		tb.Fatalf("not refused: status %d: %.300s", rec.Code, rec.Body.String())
	}
}

// BenchmarkRefusal measures each hostile request through the production
// handler: reading and decoding the body, the limits, the error answer.
func BenchmarkRefusal(b *testing.B) {
	for _, h := range hostileRequests() {
		b.Run(h.name, func(b *testing.B) {
			handler, up := productionHandler(b, facade.Config{MaxDepth: h.depth})
			body := `{"query":` + quote(h.query) + `}`
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				serveRefusal(b, handler, body)
			}
			if n := up.Calls(); n != 0 {
				b.Fatalf("%d upstream calls", n)
			}
		})
	}
}

// TestLimits_RefusalsAllocateLittle counts the bytes each refusal
// allocates through the production handler, reading the body included:
// under 1 MiB.
func TestLimits_RefusalsAllocateLittle(t *testing.T) {
	// Not parallel: it counts the process's allocations.
	if raceEnabled {
		// The race detector disables sync.Pool reuse, so counts run high;
		// .ci/run runs this test without it.
		t.Skip("allocation counts are not meaningful under -race")
	}
	for _, h := range hostileRequests() {
		t.Run(h.name, func(t *testing.T) {
			handler, _ := productionHandler(t, facade.Config{MaxDepth: h.depth})
			body := `{"query":` + quote(h.query) + `}`
			perRun := allocatedPerRun(20, func() { serveRefusal(t, handler, body) })
			t.Logf("%d bytes allocated per refusal (body %d bytes)", perRun, len(body))
			if perRun > 1<<20 {
				t.Errorf("a refusal allocates %d bytes, want under 1 MiB", perRun)
			}
		})
	}
}

// allocatedPerRun returns the bytes f allocates, on average over runs
// after one to warm up (pools, lazy initialisation).
func allocatedPerRun(runs int, f func()) uint64 {
	f()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}
