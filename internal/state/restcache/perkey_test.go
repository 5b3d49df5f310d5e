package restcache_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

func TestRateLimits_KeepsTheNewestReading(t *testing.T) {
	now := time.Date(2026, 1, 10, 11, 40, 0, 0, time.UTC)
	reading := func(remaining int, resetIn time.Duration) restclient.RateLimit {
		return restclient.RateLimit{Limit: 100, Remaining: remaining, Reset: resetIn, ResetAt: now.Add(resetIn)}
	}
	tests := []struct {
		name     string
		observed []restclient.RateLimit
		want     restclient.RateLimit
	}{
		{
			// Parallel calls answer in any order: the lowest remaining of a
			// window is the newest, whatever arrived last.
			name:     "same window, answers out of order",
			observed: []restclient.RateLimit{reading(50, 20*time.Minute), reading(9, 20*time.Minute), reading(41, 20*time.Minute)},
			want:     reading(9, 20*time.Minute),
		},
		{
			name:     "reset rounding within a window",
			observed: []restclient.RateLimit{reading(30, 20*time.Minute), reading(29, 20*time.Minute-time.Second)},
			want:     reading(29, 20*time.Minute-time.Second),
		},
		{
			name:     "a new window replaces the old one",
			observed: []restclient.RateLimit{reading(0, time.Minute), reading(99, time.Hour+time.Minute)},
			want:     reading(99, time.Hour+time.Minute),
		},
		{
			name:     "an old window never replaces a new one",
			observed: []restclient.RateLimit{reading(99, time.Hour+time.Minute), reading(0, time.Minute)},
			want:     reading(99, time.Hour+time.Minute),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r restcache.RateLimits
			for _, rl := range tt.observed {
				r.Observe(keyOf("key-1"), rl)
			}
			if got, _ := r.Get(keyOf("key-1")); got != tt.want {
				t.Errorf("Get = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRateLimits_Exhausted(t *testing.T) {
	now := time.Date(2026, 1, 10, 11, 40, 0, 0, time.UTC)
	var r restcache.RateLimits
	r.Observe(keyOf("spent"), restclient.RateLimit{Limit: 100, Remaining: 0, ResetAt: now.Add(90 * time.Second)})
	r.Observe(keyOf("left"), restclient.RateLimit{Limit: 100, Remaining: 1, ResetAt: now.Add(90 * time.Second)})
	r.Observe(keyOf("unknown"), restclient.RateLimit{Limit: 100, Remaining: -1, ResetAt: now.Add(90 * time.Second)})
	for _, tc := range []struct {
		key       string
		at        time.Time
		wantAfter time.Duration
		want      bool
	}{
		{"spent", now, 90 * time.Second, true},
		{"spent", now.Add(90 * time.Second), 0, false}, // the window reset
		{"left", now, 0, false},
		{"unknown", now, 0, false},
		{"never-seen", now, 0, false},
	} {
		after, got := r.Exhausted(keyOf(tc.key), tc.at)
		if got != tc.want || after != tc.wantAfter {
			t.Errorf("Exhausted(%q, +%s) = (%s, %t), want (%s, %t)", tc.key, tc.at.Sub(now), after, got, tc.wantAfter, tc.want)
		}
	}
	r.Forget(keyOf("spent"))
	if _, ok := r.Get(keyOf("spent")); ok {
		t.Error("Forget left the key's reading behind")
	}
}

func TestGenerations_ForgettingAKeyDropsItsCachedAnswers(t *testing.T) {
	var forgotten []string
	g := restcache.NewGenerations(2, func(kh string) { forgotten = append(forgotten, kh) })
	g.Invalidate(keyOf("key-1"), restclient.Chats)
	g.Invalidate(keyOf("key-2"), restclient.Chats)
	g.Invalidate(keyOf("key-3"), restclient.Chats) // over the bound: key-1 goes
	if len(forgotten) != 1 || forgotten[0] != keyHash("key-1") {
		t.Fatalf("forgotten = %v, want key-1's hash only", forgotten)
	}
	if got := g.Of(keyOf("key-3"), "chats?page=1"); got != 1 {
		t.Errorf("key-3's chats generation = %d, want 1", got)
	}
}

func TestCache_ForgetDropsEveryAnswerOfTheKey(t *testing.T) {
	c := restcache.NewCache(100, time.Hour)
	var calls atomic.Int64
	fetch := func(context.Context) (*restclient.Response, error) {
		calls.Add(1)
		return response(`{}`), nil
	}
	for _, key := range []string{"revoked", "other"} {
		for _, path := range []string{"categories?page=1", "chats?page=1", "imports/x"} {
			if _, err := through(c).Fetch(t.Context(), reqKey{APIKey: key, Path: path}, fetch); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.Forget(keyOf("revoked"))
	if got := c.Len(); got != 3 {
		t.Errorf("Len() = %d after Forget, want 3 (the other key's)", got)
	}
	calls.Store(0)
	_, _ = through(c).Fetch(t.Context(), reqKey{APIKey: "revoked", Path: "chats?page=1"}, fetch)
	_, _ = through(c).Fetch(t.Context(), reqKey{APIKey: "other", Path: "chats?page=1"}, fetch)
	if got := calls.Load(); got != 1 {
		t.Errorf("fetches after Forget = %d, want 1 (the revoked key's answer is gone, the other's is not)", got)
	}
}

func TestCoalescer_JoinerRetriesAFailedSharedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c restcache.Coalescer
		key := reqKey{APIKey: "key-1", Path: "chats?page=1"}
		release := make(chan struct{})
		var calls atomic.Int64
		unavailable := &restclient.UnavailableError{Op: "GET /chats", Status: http.StatusServiceUnavailable, Err: errors.New("status 503")}
		want := response(`{"chats":[]}`)
		// The first caller's GET fails (after its own retries).
		a := fetchAsync(t.Context(), through(&c), key, blockingFetch(&calls, release, nil, unavailable))
		synctest.Wait()
		b := fetchAsync(t.Context(), through(&c), key, func(context.Context) (*restclient.Response, error) {
			calls.Add(1)
			return want, nil
		})
		synctest.Wait()
		close(release)
		if r := <-a; !errors.Is(r.err, unavailable) {
			t.Errorf("starter got (%v, %v), want its own failure", r.resp, r.err)
		}
		if r := <-b; r.err != nil || r.resp != want {
			t.Errorf("joiner got (%v, %v), want the answer of its own attempt", r.resp, r.err)
		}
		if got := calls.Load(); got != 2 {
			t.Errorf("fetches = %d, want 2", got)
		}
	})
}

func TestCoalescer_PanicIsAnErrorForEveryCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c restcache.Coalescer
		key := reqKey{APIKey: "key-1", Path: "imports/x"}
		release := make(chan struct{})
		a := fetchAsync(t.Context(), through(&c), key, func(context.Context) (*restclient.Response, error) {
			<-release
			panic("decoder bug")
		})
		synctest.Wait()
		b := fetchAsync(t.Context(), through(&c), key, func(context.Context) (*restclient.Response, error) { return response("x"), nil })
		synctest.Wait()
		close(release)
		for name, ch := range map[string]<-chan result{"starter": a, "joiner": b} {
			if r := <-ch; r.err == nil {
				t.Errorf("%s got (%v, nil), want an error", name, r.resp)
			}
		}
	})
}

// A part's write starts a new generation of that part only; folding the
// parts past maxParts never gives a path a number it had before.
func TestGenerations_Parts(t *testing.T) {
	for path, want := range map[string]restclient.Resource{
		"chats?page=1": "chats/", "chats": "chats/", "chats/c1": "chats/c1", "chats/c1?page=2": "chats/c1",
		"chats/c1/messages": "chats/c1", "categories/x": "categories/x", "nothing": "",
	} {
		if got := restclient.PartOf(path); got != want {
			t.Errorf("PartOf(%q) = %q, want %q", path, got, want)
		}
	}
	g := restcache.NewGenerations(10, nil)
	k := keyOf("k")
	seen := map[string]map[uint64]bool{}
	read := func(path string) uint64 {
		n := g.Of(k, path)
		if seen[path] == nil {
			seen[path] = map[uint64]bool{}
		}
		return n
	}
	list, c1, c2 := read("chats?page=1"), read("chats/c1"), read("chats/c2")
	g.Invalidate(k, restclient.PartOf("chats/c1"))
	if read("chats?page=1") != list || read("chats/c2") != c2 || read("chats/c1") == c1 {
		t.Error("a write to chat c1 changed another part's generation, or not c1's")
	}
	for i := range 600 { // past maxParts: the parts are folded
		before := read("chats/c1")
		seen["chats/c1"][before] = true
		g.Invalidate(k, restclient.PartOf("chats/x"+strconv.Itoa(i)))
		g.Invalidate(k, restclient.PartOf("chats/c1"))
		if n := read("chats/c1"); seen["chats/c1"][n] {
			t.Fatalf("after %d writes chat c1 reads generation %d again", i, n)
		}
	}
}

// A key whose generations were forgotten to make room for others, then
// wrote again, is not served an answer read before that write by a GET in
// flight meanwhile: its generations restarted at 0 and came back to the
// number that GET was read under.
func TestCache_EvictedKeyRevivesNoAnswerReadBeforeItsWrite(t *testing.T) {
	c := restcache.NewCache(100, time.Hour)
	key := keyOf("k")
	c.Invalidate(key, restclient.Chats) // a first write
	started, release := make(chan struct{}), make(chan struct{})
	done := fetchAsync(t.Context(), through(c), reqKey{APIKey: "k", Path: "chats?page=1"}, func(context.Context) (*restclient.Response, error) {
		close(started)
		<-release
		return response(`{"chats":["before"]}`), nil
	})
	<-started
	for i := range restcache.DefaultMaxKeys { // other keys' writes push the key's generations out
		c.Invalidate(keyOf("other-"+strconv.Itoa(i)), restclient.Chats)
	}
	c.Invalidate(key, restclient.Chats) // the key writes again
	close(release)
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	resp, err := through(c).Fetch(t.Context(), reqKey{APIKey: "k", Path: "chats?page=1"}, func(context.Context) (*restclient.Response, error) {
		return response(`{"chats":["after"]}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Body); got != `{"chats":["after"]}` {
		t.Errorf("after its write the key read %s, an answer read before it", got)
	}
}

// Nor does such a key's read join that GET still in flight.
func TestCoalescer_EvictedKeyJoinsNoGETSentBeforeItsWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gens := restcache.NewGenerations(restcache.DefaultMaxKeys, nil)
		c := &restcache.Coalescer{Generations: gens}
		key := keyOf("k")
		gens.Invalidate(key, restclient.Chats) // a first write
		release := make(chan struct{})
		before := fetchAsync(t.Context(), through(c), reqKey{APIKey: "k", Path: "chats?page=1"}, func(context.Context) (*restclient.Response, error) {
			<-release
			return response(`{"chats":["before"]}`), nil
		})
		synctest.Wait()                           // the GET is in flight
		for i := range restcache.DefaultMaxKeys { // other keys' writes push the key's generations out
			gens.Invalidate(keyOf("other-"+strconv.Itoa(i)), restclient.Chats)
		}
		gens.Invalidate(key, restclient.Chats) // the key writes again
		after := fetchAsync(t.Context(), through(c), reqKey{APIKey: "k", Path: "chats?page=1"}, func(context.Context) (*restclient.Response, error) {
			return response(`{"chats":["after"]}`), nil
		})
		synctest.Wait()
		select {
		case r := <-after:
			if r.err != nil || string(r.resp.Body) != `{"chats":["after"]}` {
				t.Errorf("after its write the key read %v (%v)", r.resp, r.err)
			}
		default:
			t.Error("the read after the key's write joined the GET sent before it")
		}
		close(release)
		<-before
	})
}
