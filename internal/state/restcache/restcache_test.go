package restcache_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// result is what one Fetch call returned.
type result struct {
	resp *restclient.Response
	err  error
}

// fetchAsync runs f.Fetch on its own goroutine and returns where its result
// arrives.
func fetchAsync(ctx context.Context, f fetcher, key reqKey, fetch func(context.Context) (*restclient.Response, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := f.Fetch(ctx, key, fetch)
		ch <- result{resp, err}
	}()
	return ch
}

// blockingFetch returns a fetch that counts its calls, then waits for
// release before answering resp (or err).
func blockingFetch(calls *atomic.Int64, release <-chan struct{}, resp *restclient.Response, err error) func(context.Context) (*restclient.Response, error) {
	return func(context.Context) (*restclient.Response, error) {
		calls.Add(1)
		<-release
		return resp, err
	}
}

func response(body string) *restclient.Response {
	return &restclient.Response{Status: http.StatusOK, Body: []byte(body)}
}

func wantStats(t *testing.T, c *restcache.Coalescer, sent, shared, waiting int64) {
	t.Helper()
	gs, gsh, gw := c.Stats()
	if gs != sent || gsh != shared || gw != waiting {
		t.Errorf("Stats() = (sent %d, shared %d, waiting %d), want (%d, %d, %d)", gs, gsh, gw, sent, shared, waiting)
	}
}

func TestKeyHash(t *testing.T) {
	keys := []string{"demo-key", "demo-key ", "Demo-key", "", strings.Repeat("k", 512)}
	seen := map[string]string{}
	for _, k := range keys {
		t.Run(fmt.Sprintf("%q", k), func(t *testing.T) {
			h := keyOf(k).ID()
			if again := keyOf(k).ID(); again != h {
				t.Errorf("KeyHash is not stable: got %q then %q", h, again)
			}
			if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
				t.Errorf("KeyHash(%q) = %q, want 32 lower-case hex digits", k, h)
			}
			if k != "" && strings.Contains(h, k) {
				t.Errorf("KeyHash(%q) = %q holds the key", k, h)
			}
			if other, dup := seen[h]; dup {
				t.Errorf("KeyHash(%q) = KeyHash(%q) = %q", k, other, h)
			}
			seen[h] = k
		})
	}
}

func TestCoalescer_SharesIdenticalFetches(t *testing.T) {
	for _, callers := range []int{2, 50} {
		t.Run(fmt.Sprintf("%d callers", callers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c restcache.Coalescer
				key := reqKey{APIKey: "key-1", Path: "categories?page=1&per_page=100"}
				release := make(chan struct{})
				var calls atomic.Int64
				want := response(`{"categories":[]}`)
				fetch := blockingFetch(&calls, release, want, nil)

				results := make([]<-chan result, callers)
				for i := range results {
					results[i] = fetchAsync(t.Context(), through(&c), key, fetch)
				}
				synctest.Wait() // every caller waits; one fetch runs
				if got := calls.Load(); got != 1 {
					t.Fatalf("fetch ran %d times while %d callers wait, want 1", got, callers)
				}
				wantStats(t, &c, 1, 0, int64(callers))

				close(release)
				for i, ch := range results {
					if r := <-ch; r.err != nil || r.resp != want {
						t.Errorf("caller %d got (%v, %v), want the shared response", i, r.resp, r.err)
					}
				}
				if got := calls.Load(); got != 1 {
					t.Errorf("fetch ran %d times, want 1", got)
				}
				wantStats(t, &c, 1, int64(callers-1), 0)

				// The flight is over: the next identical fetch sends again.
				if _, err := through(&c).Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) { return want, nil }); err != nil {
					t.Fatal(err)
				}
				wantStats(t, &c, 2, int64(callers-1), 0)
			})
		})
	}
}

func TestCoalescer_NeverSharesAcrossKeysOrPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b reqKey
	}{
		{"other key", reqKey{APIKey: "key-1", Path: "chats?page=1"}, reqKey{APIKey: "key-2", Path: "chats?page=1"}},
		{"other path", reqKey{APIKey: "key-1", Path: "chats?page=1"}, reqKey{APIKey: "key-1", Path: "categories?page=1"}},
		{"other query", reqKey{APIKey: "key-1", Path: "chats?page=1"}, reqKey{APIKey: "key-1", Path: "chats?page=2"}},
		// The id joins the hash and the path with a space: a key ending
		// in a space must not meet a path starting with one.
		{"key and path boundary", reqKey{APIKey: "k", Path: " x"}, reqKey{APIKey: "k ", Path: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c restcache.Coalescer
				release := make(chan struct{})
				var calls atomic.Int64
				wantA, wantB := response("a"), response("b")
				a := fetchAsync(t.Context(), through(&c), tc.a, blockingFetch(&calls, release, wantA, nil))
				b := fetchAsync(t.Context(), through(&c), tc.b, blockingFetch(&calls, release, wantB, nil))
				synctest.Wait()
				if got := calls.Load(); got != 2 {
					t.Errorf("fetches running = %d, want 2 (one per request)", got)
				}
				close(release)
				if r := <-a; r.resp != wantA || r.err != nil {
					t.Errorf("first caller got (%v, %v), want its own response", r.resp, r.err)
				}
				if r := <-b; r.resp != wantB || r.err != nil {
					t.Errorf("second caller got (%v, %v), want its own response", r.resp, r.err)
				}
				wantStats(t, &c, 2, 0, 0)
			})
		})
	}
}

func TestCoalescer_SharesUpstreamErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c restcache.Coalescer
		key := reqKey{APIKey: "key-1", Path: "categories/x"}
		release := make(chan struct{})
		var calls atomic.Int64
		upstreamErr := &restclient.APIError{StatusCode: http.StatusNotFound, Code: "not_found"}
		a := fetchAsync(t.Context(), through(&c), key, blockingFetch(&calls, release, nil, upstreamErr))
		synctest.Wait()
		b := fetchAsync(t.Context(), through(&c), key, blockingFetch(&calls, release, response("unused"), nil))
		synctest.Wait()
		close(release)
		for name, ch := range map[string]<-chan result{"leader": a, "follower": b} {
			if r := <-ch; !errors.Is(r.err, upstreamErr) || r.resp != nil {
				t.Errorf("%s got (%v, %v), want the upstream's 404", name, r.resp, r.err)
			}
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("fetch ran %d times, want 1: an upstream answer, error or not, is shared", got)
		}
	})
}

func TestCoalescer_GateErrorIsNotShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c restcache.Coalescer
		key := reqKey{APIKey: "key-1", Path: "categories?page=2&per_page=100"}
		release := make(chan struct{})
		var leaderCalls, followerCalls atomic.Int64
		refused := &restclient.GateError{Err: errors.New("over this operation's budget")}
		want := response(`{"categories":[]}`)

		// The leader's operation is over its budget: its gate refuses.
		a := fetchAsync(t.Context(), through(&c), key, blockingFetch(&leaderCalls, release, nil, refused))
		synctest.Wait()
		b := fetchAsync(t.Context(), through(&c), key, func(context.Context) (*restclient.Response, error) {
			followerCalls.Add(1)
			return want, nil
		})
		synctest.Wait()
		wantStats(t, &c, 1, 0, 2)
		close(release)

		if r := <-a; !errors.Is(r.err, refused) {
			t.Errorf("leader got (%v, %v), want its own gate error", r.resp, r.err)
		}
		r := <-b
		if r.err != nil || r.resp != want {
			t.Errorf("follower got (%v, %v), want the answer of its own fetch", r.resp, r.err)
		}
		if got := followerCalls.Load(); got != 1 {
			t.Errorf("follower's fetch ran %d times, want 1", got)
		}
		if got := leaderCalls.Load(); got != 1 {
			t.Errorf("leader's fetch ran %d times, want 1", got)
		}
	})
}

// TestCoalescer_StatsAfterGateError pins what Stats reports when a
// follower fetches for itself after the leader's gate refused.
func TestCoalescer_StatsAfterGateError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c restcache.Coalescer
		key := reqKey{APIKey: "key-1", Path: "chats?page=1"}
		release := make(chan struct{})
		var calls atomic.Int64
		a := fetchAsync(t.Context(), through(&c), key, blockingFetch(&calls, release, nil, &restclient.GateError{Err: errors.New("refused")}))
		synctest.Wait()
		b := fetchAsync(t.Context(), through(&c), key, func(context.Context) (*restclient.Response, error) { return response("own"), nil })
		synctest.Wait()
		close(release)
		<-a
		<-b
		// One GET reached the network (the follower's); nobody was answered
		// by another caller's GET.
		wantStats(t, &c, 1, 0, 0)
	})
}

func TestCoalescer_CancelledCallerDoesNotFailTheOther(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cancelLeader bool
	}{
		{"leader cancelled", true},
		{"follower cancelled", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c restcache.Coalescer
				key := reqKey{APIKey: "key-1", Path: "chats?page=1"}
				release := make(chan struct{})
				fetchCtx := make(chan context.Context, 2)
				want := response(`{"chats":[]}`)
				fetch := func(ctx context.Context) (*restclient.Response, error) {
					fetchCtx <- ctx
					<-release
					return want, nil
				}
				leaderCtx, cancelLeader := context.WithCancel(t.Context())
				defer cancelLeader()
				followerCtx, cancelFollower := context.WithCancel(t.Context())
				defer cancelFollower()

				leader := fetchAsync(leaderCtx, through(&c), key, fetch)
				sharedCtx := <-fetchCtx // the leader's fetch runs
				follower := fetchAsync(followerCtx, through(&c), key, fetch)
				synctest.Wait()
				wantStats(t, &c, 1, 0, 2)

				cancelled, other := leader, follower
				if tc.cancelLeader {
					cancelLeader()
				} else {
					cancelled, other = follower, leader
					cancelFollower()
				}
				if r := <-cancelled; !errors.Is(r.err, context.Canceled) {
					t.Errorf("cancelled caller got (%v, %v), want context.Canceled", r.resp, r.err)
				}
				if err := sharedCtx.Err(); err != nil {
					t.Errorf("the shared fetch's context ended with a caller's: %v", err)
				}
				close(release)
				if r := <-other; r.err != nil || r.resp != want {
					t.Errorf("other caller got (%v, %v), want the shared response", r.resp, r.err)
				}
				select {
				case ctx := <-fetchCtx:
					t.Errorf("fetch ran twice (second context %v), want once", ctx)
				default:
				}
				if _, _, waiting := c.Stats(); waiting != 0 {
					t.Errorf("waiting = %d after both callers returned, want 0", waiting)
				}
			})
		})
	}
}

// step is one call on a Cache: a fetch of path with key, or (when
// invalidate is set) Invalidate(key, invalidate).
type step struct {
	key, path  string
	invalidate restclient.Resource
	wantMiss   bool
}

func fetchStep(key, path string, wantMiss bool) step {
	return step{key: key, path: path, wantMiss: wantMiss}
}

//nolint:unparam // steps name their key, as fetchStep's do
func invalidate(key string, resource restclient.Resource) step {
	return step{key: key, invalidate: resource}
}

func TestCache_Fetch(t *testing.T) {
	const k1, k2 = "key-1", "key-2"
	const (
		miss = true
		hit  = false
	)
	for _, tc := range []struct {
		name    string
		size    int
		steps   []step
		wantLen int
	}{
		{
			name:    "repeat is a hit",
			size:    10,
			steps:   []step{fetchStep(k1, "categories?page=1", miss), fetchStep(k1, "categories?page=1", hit), fetchStep(k1, "categories?page=1", hit)},
			wantLen: 1,
		},
		{
			name: "other key misses",
			size: 10,
			steps: []step{
				fetchStep(k1, "categories?page=1", miss), fetchStep(k2, "categories?page=1", miss),
				fetchStep(k1, "categories?page=1", hit), fetchStep(k2, "categories?page=1", hit),
			},
			wantLen: 2,
		},
		{
			name: "other path or query misses",
			size: 10,
			steps: []step{
				fetchStep(k1, "categories?page=1", miss), fetchStep(k1, "categories?page=2", miss),
				fetchStep(k1, "categories", miss), fetchStep(k1, "categories/abc", miss),
			},
			wantLen: 4,
		},
		{
			name: "invalidating chats keeps categories",
			size: 10,
			steps: []step{
				fetchStep(k1, "chats?page=1", miss), fetchStep(k1, "chats/abc?page=1", miss), fetchStep(k1, "categories?page=1", miss),
				invalidate(k1, restclient.Chats),
				fetchStep(k1, "chats?page=1", miss), fetchStep(k1, "chats/abc?page=1", miss), fetchStep(k1, "categories?page=1", hit),
				// The new answers are cached again.
				fetchStep(k1, "chats?page=1", hit), fetchStep(k1, "chats/abc?page=1", hit),
			},
			// The old generation's two answers stay until the LRU drops them.
			wantLen: 5,
		},
		{
			name: "invalidating one key keeps the other's",
			size: 10,
			steps: []step{
				fetchStep(k1, "chats?page=1", miss), fetchStep(k2, "chats?page=1", miss),
				invalidate(k1, restclient.Chats),
				fetchStep(k2, "chats?page=1", hit), fetchStep(k1, "chats?page=1", miss),
			},
			wantLen: 3,
		},
		{
			name: "invalidation is by resource, not by prefix",
			size: 10,
			steps: []step{
				fetchStep(k1, "chats?page=1", miss),
				invalidate(k1, "chat"), invalidate(k1, "chatsx"), invalidate(k1, "categories"),
				fetchStep(k1, "chats?page=1", hit),
			},
			wantLen: 1,
		},
		{
			name: "invalidating twice, and before any fetch",
			size: 10,
			steps: []step{
				invalidate(k1, restclient.Chats), fetchStep(k1, "chats", miss), fetchStep(k1, "chats", hit),
				invalidate(k1, restclient.Chats), invalidate(k1, restclient.Chats), fetchStep(k1, "chats", miss), fetchStep(k1, "chats", hit),
			},
			wantLen: 2,
		},
		{
			name: "size bound evicts the least recently used",
			size: 2,
			steps: []step{
				fetchStep(k1, "categories?page=1", miss), fetchStep(k1, "categories?page=2", miss),
				fetchStep(k1, "categories?page=1", hit),  // page 1 is now the most recent
				fetchStep(k1, "categories?page=3", miss), // evicts page 2
				fetchStep(k1, "categories?page=1", hit), fetchStep(k1, "categories?page=3", hit),
				fetchStep(k1, "categories?page=2", miss), // evicts page 1
				fetchStep(k1, "categories?page=1", miss),
			},
			wantLen: 2,
		},
		{
			name: "size bound counts every key",
			size: 1,
			steps: []step{
				fetchStep(k1, "chats", miss), fetchStep(k2, "chats", miss), fetchStep(k1, "chats", miss),
			},
			wantLen: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := restcache.NewCache(tc.size, time.Hour)
			var calls int
			last := map[string]*restclient.Response{} // what the last miss of key+path answered
			for i, s := range tc.steps {
				if s.invalidate != "" {
					c.Invalidate(keyOf(s.key), s.invalidate)
					continue
				}
				id := s.key + " " + s.path
				before := calls
				got, err := through(c).Fetch(t.Context(), reqKey{APIKey: s.key, Path: s.path}, func(context.Context) (*restclient.Response, error) {
					calls++
					return response(fmt.Sprintf("%s #%d", id, calls)), nil
				})
				if err != nil {
					t.Fatalf("step %d (%s): got error %v, want none", i, id, err)
				}
				missed := calls > before
				if missed != s.wantMiss {
					t.Errorf("step %d (%s): got miss=%t, want miss=%t", i, id, missed, s.wantMiss)
				}
				if missed {
					last[id] = got
				} else if got != last[id] {
					t.Errorf("step %d (%s): got body %q, want the cached %q", i, id, got.Body, last[id].Body)
				}
			}
			if got := c.Len(); got != tc.wantLen {
				t.Errorf("Len() = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

func TestCache_ErrorsAreNotCached(t *testing.T) {
	c := restcache.NewCache(10, time.Hour)
	key := reqKey{APIKey: "key-1", Path: "chats?page=1"}
	errs := []error{
		&restclient.UnavailableError{Op: "GET /chats", Status: http.StatusBadGateway, Err: errors.New("status 502")},
		&restclient.GateError{Err: errors.New("refused")},
		&restclient.RateLimitError{RetryAfter: time.Minute},
		context.Canceled,
	}
	calls := 0
	for _, want := range errs {
		_, err := through(c).Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) {
			calls++
			return nil, want
		})
		if !errors.Is(err, want) {
			t.Errorf("got error %v, want %v", err, want)
		}
	}
	if calls != len(errs) {
		t.Errorf("fetch ran %d times for %d failing fetches, want every one sent", calls, len(errs))
	}
	if got := c.Len(); got != 0 {
		t.Errorf("Len() = %d after errors only, want 0", got)
	}
	want := response("ok")
	for i := range 2 {
		got, err := through(c).Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) {
			calls++
			return want, nil
		})
		if err != nil || got != want {
			t.Errorf("fetch %d after the errors: got (%v, %v), want the answer", i, got, err)
		}
	}
	if calls != len(errs)+1 {
		t.Errorf("fetch ran %d times, want %d: the success is cached", calls, len(errs)+1)
	}
	if hits, misses := c.Stats(); hits != 1 || misses != int64(len(errs)+1) {
		t.Errorf("Stats() = (hits %d, misses %d), want (1, %d): every fetch sent is a miss", hits, misses, len(errs)+1)
	}
}

// TestChain_CacheAndCoalescerSeeOwnWrites: after a key wrote chats (and
// invalidated them), its next read must not be answered by a GET that was
// already in flight before the write, and that pre-write answer must not be
// cached as current.
func TestChain_CacheAndCoalescerSeeOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cache := restcache.NewCache(10, 0)                          // no TTL: no janitor goroutine in the bubble
		co := restcache.Coalescer{Generations: cache.Generations()} // as facade.New wires them
		chain := through(cache, &co)                                // the order planner.New uses
		key := reqKey{APIKey: "key-1", Path: "chats?page=1"}
		release := make(chan struct{})
		var calls atomic.Int64
		old := response(`{"chats":[]}`)
		before := fetchAsync(t.Context(), chain, key, blockingFetch(&calls, release, old, nil))
		synctest.Wait() // a read of another request is in flight

		cache.Invalidate(keyOf(key.APIKey), restclient.Chats) // this key created a chat
		fresh := response(`{"chats":[{"id":"new"}]}`)
		after := fetchAsync(t.Context(), chain, key, func(context.Context) (*restclient.Response, error) {
			calls.Add(1)
			return fresh, nil
		})
		synctest.Wait()
		close(release)
		if r := <-before; r.resp != old {
			t.Errorf("read started before the write got %v, want the pre-write answer", r.resp)
		}
		if r := <-after; r.resp != fresh {
			t.Errorf("read started after the write got body %q, want %q", bodyOf(r.resp), fresh.Body)
		}
		got, err := chain.Fetch(t.Context(), key, func(context.Context) (*restclient.Response, error) { return fresh, nil })
		if err != nil || got != fresh {
			t.Errorf("next read got body %q (err %v), want %q", bodyOf(got), err, fresh.Body)
		}
	})
}

func bodyOf(r *restclient.Response) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Body)
}

// recorder is a Fetcher that logs around the next fetcher, or answers
// itself when answer is set.
type recorder struct {
	name   string
	log    *[]string
	answer *restclient.Response
}

func (r recorder) FetchAs(ctx context.Context, _ callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	*r.log = append(*r.log, r.name+" "+path)
	if r.answer != nil {
		return r.answer, nil
	}
	resp, err := fetch(context.WithValue(ctx, ctxKey(r.name), true))
	*r.log = append(*r.log, r.name+" done")
	return resp, err
}

type ctxKey string

func TestChain(t *testing.T) {
	key := reqKey{APIKey: "key-1", Path: "categories?page=1"}
	short := response("from the second")
	for _, tc := range []struct {
		name    string
		chain   func(log *[]string) fetcher
		want    []string
		wantNet bool
	}{
		{
			name:    "empty chain fetches directly",
			chain:   func(*[]string) fetcher { return through() },
			want:    []string{"net"},
			wantNet: true,
		},
		{
			name:    "only nil entries fetch directly",
			chain:   func(*[]string) fetcher { return through(nil, nil) },
			want:    []string{"net"},
			wantNet: true,
		},
		{
			name: "first sees the request first, nils skipped",
			chain: func(log *[]string) fetcher {
				return through(nil, recorder{name: "a", log: log}, nil, recorder{name: "b", log: log}, recorder{name: "c", log: log}, nil)
			},
			want:    []string{"a " + key.Path, "b " + key.Path, "c " + key.Path, "net", "c done", "b done", "a done"},
			wantNet: true,
		},
		{
			name: "a fetcher that answers stops the chain",
			chain: func(log *[]string) fetcher {
				return through(recorder{name: "a", log: log}, recorder{name: "b", log: log, answer: short}, recorder{name: "c", log: log})
			},
			want: []string{"a " + key.Path, "b " + key.Path, "a done"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			net := response("from the network")
			got, err := tc.chain(&log).Fetch(t.Context(), key, func(ctx context.Context) (*restclient.Response, error) {
				log = append(log, "net")
				// Every fetcher before the network passed its context on.
				for _, e := range log {
					if name, _, ok := strings.Cut(e, " "); ok && e != "net" && ctx.Value(ctxKey(name)) == nil {
						t.Errorf("fetch context lacks the value fetcher %q added", name)
					}
				}
				return net, nil
			})
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			want := short
			if tc.wantNet {
				want = net
			}
			if got != want {
				t.Errorf("got body %q, want %q", got.Body, want.Body)
			}
			if !slices.Equal(log, tc.want) {
				t.Errorf("got order %q, want %q", log, tc.want)
			}
		})
	}
}

func TestChain_PassesErrorsBack(t *testing.T) {
	var log []string
	want := &restclient.APIError{StatusCode: http.StatusUnauthorized, Code: "unauthorized"}
	chain := through(recorder{name: "a", log: &log}, restcache.NewCache(10, time.Hour))
	_, err := chain.Fetch(t.Context(), reqKey{APIKey: "k", Path: "chats"}, func(context.Context) (*restclient.Response, error) {
		return nil, want
	})
	if !errors.Is(err, want) {
		t.Errorf("got error %v, want %v", err, want)
	}
}

func TestRateLimits(t *testing.T) {
	var r restcache.RateLimits // the zero value is ready
	if _, ok := r.Get(keyOf("key-1")); ok {
		t.Errorf("Get on an empty RateLimits: got ok, want none")
	}
	first := restclient.RateLimit{Limit: 100, Remaining: 99, Reset: time.Hour}
	second := restclient.RateLimit{Limit: 100, Remaining: 98, Reset: 59 * time.Minute}
	other := restclient.RateLimit{Limit: 10000, Remaining: 5}
	r.Observe(keyOf("key-1"), first)
	r.Observe(keyOf("key-2"), other)
	r.Observe(keyOf("key-1"), second)
	for _, tc := range []struct {
		key    string
		want   restclient.RateLimit
		wantOK bool
	}{
		{"key-1", second, true},
		{"key-2", other, true},
		{"key-3", restclient.RateLimit{}, false},
		{"key-1 ", restclient.RateLimit{}, false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			got, ok := r.Get(keyOf(tc.key))
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("Get(%q) = (%+v, %t), want (%+v, %t)", tc.key, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestFamilySizes(t *testing.T) {
	var f restcache.FamilySizes // the zero value is ready
	if n, ok := f.Get(keyOf("key-1"), ""); ok {
		t.Errorf("Get on an empty FamilySizes: got (%d, true), want none", n)
	}
	f.Observe(keyOf("key-1"), "", 45)
	f.Observe(keyOf("key-2"), "", 5000)
	f.Observe(keyOf("key-1"), "", 46)
	f.Observe(keyOf("key-1"), "income", 4)
	for _, tc := range []struct {
		key, class string
		want       int
		wantOK     bool
	}{
		{"key-1", "", 46, true},
		{"key-1", "income", 4, true},
		{"key-1", "expense", 0, false},
		{"key-2", "", 5000, true},
		{"key-3", "", 0, false},
	} {
		t.Run(tc.key+"/"+tc.class, func(t *testing.T) {
			if got, ok := f.Get(keyOf(tc.key), tc.class); ok != tc.wantOK || got != tc.want {
				t.Errorf("Get(%q, %q) = (%d, %t), want (%d, %t)", tc.key, tc.class, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
