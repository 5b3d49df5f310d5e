package facade_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/limits/querylimit"
)

// TestLimits_MemoryStaysBounded sends streams of distinct comment-padded
// queries without a key through the production handler and measures the
// heap it keeps (HeapInuse after a collection): queries over the byte
// limit keep nothing, and valid queries are kept only up to the bytes of
// the parsed-query cache (2 MiB here, to keep the test short). Before the limits, 1,300 such 1 MB queries
// grew the server to 2 GB. cmd/memcheck does the same to a built server
// over loopback and reads its resident memory.
func TestLimits_MemoryStaysBounded(t *testing.T) {
	// Not parallel: it measures the process's heap.
	handler, _ := productionHandler(t, facade.Config{QueryCacheBytes: 2 << 20})
	for _, tc := range []struct {
		name      string
		n, size   int
		want      string
		maxGrowth uint64
	}{
		// 20 MB sent; nothing may stay.
		{"1 MB queries are refused and not kept", 20, 1_000_000, querylimit.Code, 4 << 20},
		// 7.5 MB sent; at most the cache's 2 MiB (charged about what
		// each document holds) may stay.
		{"30 KB valid queries are kept up to the cache's bytes", 250, 30_000, `"data":{"__typename":"Query"}`, 4 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := heapInUse()
			for i := range tc.n {
				q := paddedTypename(i, tc.size)
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/graphql", strings.NewReader(`{"query":"`+q+`"}`))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				if !bytes.Contains(rec.Body.Bytes(), []byte(tc.want)) {
					t.Fatalf("query %d: %.300s", i, rec.Body.String())
				}
			}
			after := heapInUse()
			growth := after - min(after, before)
			t.Logf("heap in use %d MiB → %d MiB after %d queries of %d bytes", before>>20, after>>20, tc.n, tc.size)
			if growth > tc.maxGrowth {
				t.Errorf("the heap grew by %d MiB, want under %d MiB", growth>>20, tc.maxGrowth>>20)
			}
		})
	}
	runtime.KeepAlive(handler)
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
