package facade_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/internal/state/redisstate/redistest"
	"github.com/suregql/suregql/restclient"
)

// benchCache measures one operation of one GET with the answer cache on,
// in memory or on a redis-server on loopback: every operation a hit
// (warmed once), or every one a miss (each with a key of its own, so that
// nothing is cached for it yet). The Redis variant also reports its round
// trips per operation.
func benchCache(b *testing.B, onRedis, hit bool) {
	const query = `{ categories(first: 10) { nodes { id name } } }`
	up := restclienttest.New()
	up.SetRateLimit(restclienttest.DemoKey, 1<<30)
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: facade.HandlerTransport{Handler: up}}))
	if err != nil {
		b.Fatal(err)
	}
	cfg := facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: time.Hour}
	var store *redisstate.Store
	if onRedis {
		srv := redistest.Start(b)
		if store, err = redisstate.Open(srv.URL(), redisstate.Options{Secret: []byte(replicaSecret), Log: slog.New(slog.DiscardHandler)}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = store.Close() })
		cfg.Redis = store
	}
	h := facade.New(cfg)
	body := `{"query":` + quote(query) + `}`
	run := func(key string) {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	run(restclienttest.DemoKey) // warm: the next ones hit
	var sent0 int64
	if store != nil {
		sent0, _, _ = store.Counts()
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		key := restclienttest.DemoKey
		if !hit {
			b.StopTimer()
			key = fmt.Sprintf("bench-key-%d", i)
			up.AddKey(key, restclienttest.DemoKey)
			up.SetRateLimit(key, 1<<30)
			b.StartTimer()
		}
		i++
		run(key)
	}
	if store != nil {
		sent, failed, skipped := store.Counts()
		if failed+skipped > 0 {
			b.Fatalf("%d Redis round trips failed and %d were skipped: the figures would not be Redis's", failed, skipped)
		}
		b.ReportMetric(float64(sent-sent0)/float64(i), "redis-trips/op")
	}
}

func BenchmarkCache_Hit(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchCache(b, false, true) })
	b.Run("redis", func(b *testing.B) { benchCache(b, true, true) })
}

func BenchmarkCache_Miss(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchCache(b, false, false) })
	b.Run("redis", func(b *testing.B) { benchCache(b, true, false) })
}
