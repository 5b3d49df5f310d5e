package restcache_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// quotas is a rate-limit store the tests set readings in.
type quotas map[string]restclient.RateLimit

func (q quotas) get(key callerkey.Key) (restclient.RateLimit, bool) {
	rl, ok := q[key.ID()]
	return rl, ok
}

// counted reads path for key "k" through c, answering body from the
// upstream, and returns the answer and whether the upstream was called.
func counted(ctx context.Context, t *testing.T, c *restcache.Cache, path, body string) (*restclient.Response, bool) {
	t.Helper()
	called := false
	resp, err := through(c).Fetch(ctx, reqKey{APIKey: "k", Path: path}, func(context.Context) (*restclient.Response, error) {
		called = true
		return response(body), nil
	})
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, called
}

// failing reads path for apiKey through c with an upstream that fails with
// err.
func failing(c *restcache.Cache, apiKey, path string, err error) (*restclient.Response, error) {
	return through(c).Fetch(context.Background(), reqKey{APIKey: apiKey, Path: path}, func(context.Context) (*restclient.Response, error) {
		return nil, err
	})
}

const (
	pendingImport  = `{"data":{"id":"i1","type":"TransactionImport","status":"pending","configuration":{},"stats":{"rows_count":1},"created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:39:18.123Z"}}`
	completeImport = `{"data":{"id":"i1","type":"TransactionImport","status":"complete","configuration":{},"stats":{"rows_count":1},"created_at":"2026-01-10T11:39:18.123Z","updated_at":"2026-01-10T11:39:18.123Z"}}`
)

// Each resource is served from freshness for its own window: for a key
// near its limit (95 % spent), categories 5 minutes, chats 30 seconds, a
// complete import an hour; a pending import never.
func TestFreshness_PerResource(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		window           time.Duration // 0: never fresh
	}{
		{"categories list", "categories?page=1&per_page=100", `{"categories":[]}`, 5 * time.Minute},
		{"one category", "categories/c1", `{"id":"c1"}`, 5 * time.Minute},
		{"chats list", "chats?page=1", `{"chats":[]}`, 30 * time.Second},
		{"one chat", "chats/h1", `{"id":"h1","messages":[]}`, 30 * time.Second},
		{"complete import", "imports/i1", completeImport, time.Hour},
		{"pending import", "imports/i1", pendingImport, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := quotas{keyHash("k"): {Limit: 100, Remaining: 5, ResetAt: time.Now().Add(2 * time.Hour)}}
				c := restcache.NewFreshCache(100, restcache.Freshness{Quota: q.get})
				if _, called := counted(t.Context(), t, c, tc.path, tc.body); !called {
					t.Fatal("first read: no call")
				}
				if tc.window == 0 {
					if _, called := counted(t.Context(), t, c, tc.path, tc.body); !called {
						t.Error("read again at once: answered from freshness, want a call (it changes by itself)")
					}
					return
				}
				time.Sleep(tc.window - time.Second)
				if _, called := counted(t.Context(), t, c, tc.path, tc.body); called {
					t.Errorf("read again within %v: a call, want none", tc.window)
				}
				time.Sleep(time.Second)
				if _, called := counted(t.Context(), t, c, tc.path, tc.body); !called {
					t.Errorf("read again at %v: no call, want one", tc.window)
				}
			})
		})
	}
}

// The window follows the key's quota: a key of a server without a limit
// is served at the short end, a key that spent 95 % of its window at the
// long end, one that spent half in between.
func TestFreshness_FollowsQuota(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reading *restclient.RateLimit
		fresh   time.Duration // served from freshness this long, not a second more
	}{
		{"self-hosted (Infinity)", &restclient.RateLimit{Unlimited: true, Limit: -1, Remaining: -1}, restcache.CategoriesWindow.Short},
		{"no reading yet", nil, restcache.CategoriesWindow.Short},
		{"none spent", &restclient.RateLimit{Limit: 100, Remaining: 100}, restcache.CategoriesWindow.Short},
		{"45 % spent", &restclient.RateLimit{Limit: 100, Remaining: 55}, restcache.CategoriesWindow.Short + (restcache.CategoriesWindow.Long-restcache.CategoriesWindow.Short)/2},
		{"95 % spent", &restclient.RateLimit{Limit: 100, Remaining: 5}, restcache.CategoriesWindow.Long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := quotas{}
				if tc.reading != nil {
					rl := *tc.reading
					if !rl.Unlimited {
						rl.ResetAt = time.Now().Add(2 * time.Hour) // a pace unknown: TestPressure
					}
					q[keyHash("k")] = rl
				}
				c := restcache.NewFreshCache(100, restcache.Freshness{Quota: q.get})
				counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`)
				time.Sleep(tc.fresh - time.Second)
				if _, called := counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`); called {
					t.Errorf("read again within %v: a call, want none", tc.fresh)
				}
				time.Sleep(time.Second)
				if _, called := counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`); !called {
					t.Errorf("read again at %v: no call, want one", tc.fresh)
				}
			})
		})
	}
}

// A cap (-cache-ttl) shortens every window; a key's write makes its next
// read go upstream at once.
func TestFreshness_CapAndOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := quotas{keyHash("k"): {Limit: 100, Remaining: 5, ResetAt: time.Now().Add(2 * time.Hour)}}
		c := restcache.NewFreshCache(100, restcache.Freshness{Quota: q.get, Cap: 10 * time.Second})
		counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`)
		time.Sleep(10 * time.Second)
		if _, called := counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`); !called {
			t.Error("read at the cap: no call, want one")
		}
		c.Invalidate(keyOf("k"), restclient.Categories)
		if resp, called := counted(t.Context(), t, c, "categories/c1", `{"id":"c1","name":"new"}`); !called || bodyOf(resp) != `{"id":"c1","name":"new"}` {
			t.Errorf("read after the key's write: called %t, body %s; want the upstream's new answer", called, bodyOf(resp))
		}
	})
}

// A read made WithRevalidate goes upstream whatever the cache holds, and
// its answer serves the reads after it.
func TestFreshness_Revalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := restcache.NewFreshCache(100, restcache.Freshness{})
		counted(t.Context(), t, c, "chats/h1", `{"id":"h1","messages":[],"title":"old"}`)
		resp, called := counted(restcache.WithRevalidate(t.Context()), t, c, "chats/h1", `{"id":"h1","messages":[],"title":"new"}`)
		if !called || bodyOf(resp) != `{"id":"h1","messages":[],"title":"new"}` {
			t.Fatalf("revalidating read: called %t, body %s; want the upstream's", called, bodyOf(resp))
		}
		resp, called = counted(t.Context(), t, c, "chats/h1", `{"id":"h1","messages":[],"title":"newer"}`)
		if called || bodyOf(resp) != `{"id":"h1","messages":[],"title":"new"}` {
			t.Errorf("page view after the poll: called %t, body %s; want the poll's answer, no call", called, bodyOf(resp))
		}
	})
}

// When the upstream cannot answer (out of quota, circuit open, failing), a
// read answered before within StaleMax answers from it, saying its age and
// why; never past StaleMax, never another key's, never for an answer about
// the key or the request (401, 403, 404).
func TestFreshness_Stale(t *testing.T) {
	limited := &restclient.GateError{Err: &restclient.RateLimitError{APIError: restclient.APIError{StatusCode: http.StatusTooManyRequests}, RetryAfter: time.Minute}}
	open := &restclient.GateError{Err: &restclient.UnavailableError{Op: "GET /categories/c1", Err: restclient.ErrCircuitOpen}}
	down := &restclient.UnavailableError{Op: "GET /categories/c1", Status: http.StatusBadGateway, Err: errors.New("502")}
	timeout := &restclient.UnavailableError{Op: "GET /categories/c1", Err: context.DeadlineExceeded}
	for _, tc := range []struct {
		name   string
		err    error
		reason string // "": the error stands
	}{
		{"a 429 or RATE_LIMITED", limited, "rate_limited"},
		{"the circuit open", open, "circuit_open"},
		{"a 502", down, "upstream_unavailable"},
		{"a timeout", timeout, "upstream_unavailable"},
		{"a 401", &restclient.APIError{StatusCode: http.StatusUnauthorized}, ""},
		{"a 403", &restclient.APIError{StatusCode: http.StatusForbidden}, ""},
		{"a 404", &restclient.APIError{StatusCode: http.StatusNotFound}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := restcache.NewFreshCache(100, restcache.Freshness{StaleMax: time.Hour})
				counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`)
				time.Sleep(10 * time.Minute) // past any freshness
				resp, err := failing(c, "k", "categories/c1", tc.err)
				if tc.reason == "" {
					if !errors.Is(err, tc.err) {
						t.Errorf("got %v (body %s), want the upstream's error", err, bodyOf(resp))
					}
					return
				}
				if err != nil || resp.Stale == nil {
					t.Fatalf("got %v, %+v; want the held answer, stale", err, resp)
				}
				if bodyOf(resp) != `{"id":"c1"}` || resp.Stale.Age != 10*time.Minute || resp.Stale.Reason != tc.reason {
					t.Errorf("stale answer %s, age %v, reason %q; want the held one, 10m, %q", bodyOf(resp), resp.Stale.Age, resp.Stale.Reason, tc.reason)
				}
				if _, err := failing(c, "other", "categories/c1", tc.err); !errors.Is(err, tc.err) {
					t.Errorf("another key's read: %v, want the upstream's error (never across keys)", err)
				}
				if _, err := failing(c, "k", "categories/c2", tc.err); !errors.Is(err, tc.err) {
					t.Errorf("a read of nothing held: %v, want the upstream's error", err)
				}
				time.Sleep(restcache.CategoriesWindow.Short + time.Hour - 10*time.Minute)
				if _, err := failing(c, "k", "categories/c1", tc.err); !errors.Is(err, tc.err) {
					t.Errorf("past StaleMax: %v, want the upstream's error", err)
				}
				n := c.Counts()
				if n.Stale != 1 || n.StaleBy[tc.reason] != 1 {
					t.Errorf("counts %+v, want one stale answer for %s", n, tc.reason)
				}
			})
		})
	}
}

// Without StaleMax nothing is served stale.
func TestFreshness_StaleOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := restcache.NewFreshCache(100, restcache.Freshness{})
		counted(t.Context(), t, c, "categories/c1", `{"id":"c1"}`)
		time.Sleep(time.Minute)
		down := &restclient.UnavailableError{Status: http.StatusBadGateway, Err: errors.New("502")}
		if _, err := failing(c, "k", "categories/c1", down); !errors.Is(err, down) {
			t.Errorf("got %v, want the upstream's error", err)
		}
	})
}

// The cache's memory is bounded in bytes as well as in answers: large
// answers push the least recently used out, the newest is still served,
// and what the cache says it holds never passes the bound.
func TestCache_LimitBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 1 << 20
		c := restcache.NewFreshCache(10_000, restcache.Freshness{}).LimitBytes(bound)
		page := `{"categories":[` + strings.Repeat(`{"id":"x","name":"a long enough name"},`, 2_000) + `{}]}`
		for i := range 20 {
			counted(t.Context(), t, c, "categories?page="+strconv.Itoa(i), page)
			if c.Bytes() > bound {
				t.Fatalf("after %d answers of %d bytes the cache holds %d bytes, over its bound of %d", i+1, len(page), c.Bytes(), bound)
			}
		}
		if c.Len() >= 20 || c.Len() == 0 {
			t.Fatalf("the cache holds %d of 20 answers of %d bytes under a bound of %d bytes", c.Len(), len(page), bound)
		}
		if _, called := counted(t.Context(), t, c, "categories?page=19", page); called {
			t.Error("the newest answer was evicted")
		}
		if _, called := counted(t.Context(), t, c, "categories?page=0", page); !called {
			t.Error("the oldest answer was still served past the bound")
		}
		// Replacing an answer does not count it twice.
		before := c.Bytes()
		counted(restcache.WithRevalidate(t.Context()), t, c, "categories?page=19", page)
		if c.Bytes() != before {
			t.Errorf("replacing an answer moved the cache's bytes from %d to %d", before, c.Bytes())
		}
	})
}

// One answer larger than the whole bound (a chat of long replies) is
// served but not kept: the bound holds even then, and the answers held
// before stay.
func TestCache_LimitBytes_AnswerOverTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 64 << 10
		c := restcache.NewFreshCache(10_000, restcache.Freshness{}).LimitBytes(bound)
		counted(t.Context(), t, c, "categories?page=1", `{"categories":[]}`)
		huge := `{"id":"h1","messages":[{"content":"` + strings.Repeat("x", bound) + `"}]}`
		if resp, _ := counted(t.Context(), t, c, "chats/h1", huge); string(resp.Body) != huge {
			t.Fatal("the large answer was not served")
		}
		if c.Bytes() > bound {
			t.Errorf("after one answer of %d bytes the cache holds %d bytes, over its bound of %d", len(huge), c.Bytes(), bound)
		}
		if _, called := counted(t.Context(), t, c, "categories?page=1", `{"categories":[]}`); called {
			t.Error("the answer held before the large one was evicted for it")
		}
	})
}

// A key spending faster than its window can last is pressed as one near
// its limit: it is served at the long end, rather than spend early what its
// last minutes need.
func TestPressure(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	reading := func(remaining int, resetIn time.Duration) restclient.RateLimit {
		return restclient.RateLimit{Limit: 100, Remaining: remaining, ResetAt: now.Add(resetIn)}
	}
	for _, tc := range []struct {
		name string
		rl   restclient.RateLimit
		want float64
	}{
		{"nothing spent", reading(100, 30*time.Minute), 0},
		{"self-hosted", restclient.RateLimit{Unlimited: true, Limit: -1, Remaining: -1}, 0},
		{"10 % in the first 6 minutes: out before the reset at that pace", reading(90, 54*time.Minute), 1},
		{"10 % by minute 54: the share spent decides", reading(90, 6*time.Minute), 0.1 / 0.9},
		{"30 % by half time: a pace of 60 %", reading(70, 30*time.Minute), 0.6},
		{"95 % by minute 59", reading(5, time.Minute), 1},
		{"a window that has reset", reading(5, -time.Second), 0},
		{"a reset past a window: the share spent alone", reading(55, 2*time.Hour), 0.5},
	} {
		if got := restcache.Pressure(tc.rl, true, now); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: pressure %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}

// A read a cache could answer stale tells its fetch so (StaleHeld): the
// planner's gate asks the upstream whether a key out of quota still
// stands before such a read is answered from what is held. A fresh
// answer asks nothing; a read of nothing held, or of an answer past
// StaleMax, is not told.
func TestCache_TellsTheFetchAStaleAnswerIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := restcache.NewFreshCache(100, restcache.Freshness{StaleMax: time.Hour})
		told := func(path string) (held, called bool) {
			_, _ = through(c).Fetch(t.Context(), reqKey{APIKey: "k", Path: path}, func(ctx context.Context) (*restclient.Response, error) {
				held, called = restcache.StaleHeld(ctx), true
				return response(`{"id":"c1"}`), nil
			})
			return held, called
		}
		if held, _ := told("categories/c1"); held {
			t.Error("nothing held: the fetch was told a stale answer is")
		}
		time.Sleep(10 * time.Minute)
		if held, _ := told("categories/c1"); !held {
			t.Error("an answer held 10 minutes: the fetch was not told")
		}
		if _, called := told("categories/c1"); called {
			t.Error("a fresh answer was fetched")
		}
		time.Sleep(2 * time.Hour)
		if held, _ := told("categories/c1"); held {
			t.Error("an answer past StaleMax: the fetch was told it is held")
		}
	})
}

// A key is due a check once per interval: the first ask claims it, an
// answer that shows the key stands puts it off, and forgetting the key
// makes it due again.
func TestKeyChecks(t *testing.T) {
	var k restcache.KeyChecks
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	key := keyOf("out-of-quota")
	for i, step := range []struct {
		after time.Duration
		stood bool
		want  bool
	}{
		{0, false, true},                // never seen: due, claimed
		{time.Second, false, false},     // claimed a second ago
		{time.Minute, false, true},      // a minute later: due again
		{10 * time.Second, true, false}, // an answer showed it stands
		{50 * time.Second, false, false},
		{10 * time.Second, false, true},
	} {
		now = now.Add(step.after)
		if step.stood {
			k.Stood(key, now)
		}
		if got := k.Due(key, now); got != step.want {
			t.Errorf("step %d: Due = %t, want %t", i, got, step.want)
		}
	}
	k.Forget(key)
	if !k.Due(key, now) {
		t.Error("after Forget: not due")
	}
}
