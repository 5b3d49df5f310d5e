package facade_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// benchOperation measures a whole operation through the production
// handler, with the fake upstream in process (no network): the facade's
// own cost per operation, upstream JSON decoding included.
func benchOperation(b *testing.B, key, query string, configure ...func(*facade.Config)) {
	up := restclienttest.New()
	up.SetRateLimit(key, 1<<30)
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: facade.HandlerTransport{Handler: up}}))
	if err != nil {
		b.Fatal(err)
	}
	// The cache off unless a benchmark turns it on: the facade's own cost
	// of an operation it sends upstream (freshness, on by default, would
	// answer every one but the first).
	cfg := facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: facade.CacheOff}
	for _, f := range configure {
		f(&cfg)
	}
	h := facade.New(cfg)
	body := `{"query":` + quote(query) + `}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}

func BenchmarkOperation_CategoriesFirst10(b *testing.B) {
	benchOperation(b, restclienttest.DemoKey, `{ categories(first: 10) { nodes { id name } } }`)
}

// BenchmarkOperation_CachedCategoriesFirst10 answers every operation but
// the first from the shared cache: what the facade spends on an answer it
// shares with other callers (cache hits and coalesced callers alike).
func BenchmarkOperation_CachedCategoriesFirst10(b *testing.B) {
	benchOperation(b, restclienttest.DemoKey, `{ categories(first: 10) { nodes { id name } } }`,
		func(c *facade.Config) { c.CacheTTL = time.Hour })
}

// BenchmarkOperation_ConcurrentIdentical sends W1 of cmd/loadbench from
// 32 clients of one key at once, the upstream answering after 1 ms: the
// operations in flight together share executions and upstream calls.
// With -benchmem, allocations per operation.
func BenchmarkOperation_ConcurrentIdentical(b *testing.B) {
	benchConcurrent(b, func(int) string { return restclienttest.DemoKey })
}

// BenchmarkOperation_ConcurrentDistinctKeys is the same load with a key
// per client (as loadbench's 64-key mode): nothing can be shared.
func BenchmarkOperation_ConcurrentDistinctKeys(b *testing.B) {
	benchConcurrent(b, func(client int) string { return fmt.Sprintf("bench-key-%d", client) })
}

// benchConcurrent sends W1 from 32 clients at once, client i with
// keyOf(i), the upstream answering after 1 ms.
func benchConcurrent(b *testing.B, keyOf func(client int) string) {
	const clients = 32
	up := restclienttest.New()
	for i := range clients {
		if k := keyOf(i); k != restclienttest.DemoKey {
			up.AddKey(k, restclienttest.DemoKey)
		}
		up.SetRateLimit(keyOf(i), 1<<30)
	}
	up.SetDelay(time.Millisecond)
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: facade.HandlerTransport{Handler: up}}))
	if err != nil {
		b.Fatal(err)
	}
	h := facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: facade.CacheOff})
	body := `{"query":` + quote(`{ categories(first: 10) { nodes { id name } } }`) + `}`
	var next atomic.Int64
	b.SetParallelism(clients / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := keyOf(int(next.Add(1)-1) % clients)
		for pb.Next() {
			req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Key", key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
				b.Errorf("status %d: %s", rec.Code, rec.Body.String())
				return
			}
		}
	})
}

func BenchmarkOperation_DemoTree(b *testing.B) {
	benchOperation(b, restclienttest.DemoKey, treeQuery)
}

func BenchmarkOperation_LargeFamilyPageOfRoots(b *testing.B) {
	benchOperation(b, restclienttest.LargeFamilyKey, treeQuery)
}

func BenchmarkOperation_ChatsFirst100(b *testing.B) {
	benchOperation(b, restclienttest.LargeFamilyKey, `{ chats(first: 100) { nodes { id title messageCount } } }`)
}
