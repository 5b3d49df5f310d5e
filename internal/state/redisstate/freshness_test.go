package redisstate_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// Replicas share freshness: an answer one replica read serves the other
// for as long as the key's quota, as Redis holds it, makes it fresh (a
// key at 95 % of its limit: the long end; a self-hosted key: the short
// end), and past that stands in, stale, when the upstream cannot answer.
func TestCache_FreshnessSharedByReplicas(t *testing.T) {
	_, a, b := replicas(t)
	clk := &clock{now: time.Now().Truncate(time.Millisecond)} // Redis keeps times to the millisecond
	fresh := restcache.Freshness{StaleMax: time.Hour, Now: clk.Now}
	ca, cb := a.FreshCache(fresh, nil), b.FreshCache(fresh, nil)
	near, selfHosted := a.Keys().Key("near-limit"), a.Keys().Key("self-hosted")
	a.RateLimits().Observe(near, restclient.RateLimit{Limit: 100, Remaining: 5, Reset: 2 * time.Hour, ResetAt: clk.Now().Add(2 * time.Hour)})
	a.RateLimits().Observe(selfHosted, restclient.RateLimit{Unlimited: true, Limit: -1, Remaining: -1})

	calls := 0
	get := func(cache restcache.KeyedFetcher, key string, err error) (*restclient.Response, error) {
		t.Helper()
		return cache.FetchAs(t.Context(), b.Keys().Key(key), "categories/c1", func(context.Context) (*restclient.Response, error) {
			calls++
			if err != nil {
				return nil, err
			}
			return answer(`{"id":"c1"}`), nil
		})
	}
	for _, key := range []string{"near-limit", "self-hosted"} {
		if _, err := get(ca, key, nil); err != nil {
			t.Fatal(err)
		}
	}
	calls = 0
	clk.Add(4 * time.Minute) // within the long end (5 min), past the short end (30 s)
	if _, err := get(cb, "near-limit", nil); err != nil || calls != 0 {
		t.Errorf("replica 2, key near its limit, 4 min later: %d calls (err %v), want replica 1's answer, fresh", calls, err)
	}
	if _, err := get(cb, "self-hosted", nil); err != nil || calls != 1 {
		t.Errorf("replica 2, self-hosted key, 4 min later: %d calls (err %v), want 1 (past the short end)", calls, err)
	}
	clk.Add(6 * time.Minute)
	down := &restclient.UnavailableError{Status: http.StatusBadGateway, Err: errors.New("502")}
	resp, err := get(cb, "near-limit", down)
	if err != nil || resp.Stale == nil || resp.Stale.Age != 10*time.Minute || resp.Stale.Reason != restcache.StaleUnavailable {
		t.Errorf("replica 2, upstream down, 10 min later: %+v, %v; want replica 1's answer, stale 10m upstream_unavailable", resp, err)
	}
	if n := cb.Counts(); n.Fresh != 1 || n.Stale != 1 || n.StaleBy[restcache.StaleUnavailable] != 1 {
		t.Errorf("replica 2's counts %+v, want 1 fresh, 1 stale", n)
	}
}

// The shared cache tells a read's fetch that it holds an answer to serve
// stale (restcache.StaleHeld), as the in-memory one does: the planner's
// check of a key out of quota applies with Redis too.
func TestCache_TellsTheFetchAStaleAnswerIsHeld(t *testing.T) {
	_, a, b := replicas(t)
	clk := &clock{now: time.Now().Truncate(time.Millisecond)}
	fresh := restcache.Freshness{StaleMax: time.Hour, Now: clk.Now}
	ca, cb := a.FreshCache(fresh, nil), b.FreshCache(fresh, nil)
	told := func(c restcache.KeyedFetcher) bool {
		held := false
		if _, err := c.FetchAs(t.Context(), a.Keys().Key("k"), "categories/c1", func(ctx context.Context) (*restclient.Response, error) {
			held = restcache.StaleHeld(ctx)
			return answer(`{"id":"c1"}`), nil
		}); err != nil {
			t.Fatal(err)
		}
		return held
	}
	if told(ca) {
		t.Error("nothing held: the fetch was told a stale answer is")
	}
	clk.Add(10 * time.Minute)
	if !told(cb) {
		t.Error("replica 2, an answer replica 1 read 10 minutes ago: the fetch was not told")
	}
}
