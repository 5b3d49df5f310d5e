package redisstate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/internal/state/redisstate/redistest"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

var secret = []byte("a secret shared by the replicas")

// clock is a settable clock for the breaker's cooldown.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, srv *redistest.Server, opts redisstate.Options) *redisstate.Store {
	t.Helper()
	if opts.Secret == nil {
		opts.Secret = secret
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Timeout == 0 {
		opts.Timeout = testTimeout
	}
	s, err := redisstate.Open(srv.URL(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// testTimeout bounds a round trip in these tests: a loopback Redis answers
// in a millisecond, but a machine at load 10 under the race detector may
// take longer than DefaultTimeout, and a lapsed write would fail a test
// that is not about timeouts. No test here waits for it to fire: a killed
// Redis refuses connections at once.
const testTimeout = 10 * time.Second

// replicas returns a Redis and two stores of it, as two replicas have.
func replicas(t *testing.T) (srv *redistest.Server, a, b *redisstate.Store) {
	srv = redistest.Start(t)
	return srv, open(t, srv, redisstate.Options{}), open(t, srv, redisstate.Options{})
}

// The same table runs on the in-memory store and on Redis, whose readings
// are written by one replica and read by another.
func TestRateLimitStores(t *testing.T) {
	_, a, b := replicas(t)
	now := time.Date(2026, 1, 10, 11, 40, 0, 0, time.UTC)
	reading := func(remaining int, resetIn time.Duration) restclient.RateLimit {
		return restclient.RateLimit{Limit: 100, Remaining: remaining, Reset: resetIn, ResetAt: now.Add(resetIn)}
	}
	type stores struct {
		write, read restcache.RateLimitStore
		key         callerkey.Key
	}
	makers := map[string]func(name string) stores{
		"memory": func(string) stores {
			s := &restcache.RateLimits{}
			return stores{s, s, keyOf("key-1")}
		},
		"redis, two replicas": func(name string) stores {
			key := a.Keys().Key("key-" + name) // one key per subtest
			return stores{a.RateLimits(), b.RateLimits(), key}
		},
	}
	tests := []struct {
		name     string
		observed []restclient.RateLimit
		want     restclient.RateLimit
	}{
		{"same window, answers out of order", []restclient.RateLimit{reading(50, 20*time.Minute), reading(9, 20*time.Minute), reading(41, 20*time.Minute)}, reading(9, 20*time.Minute)},
		{"a new window replaces the old one", []restclient.RateLimit{reading(0, time.Minute), reading(99, time.Hour+time.Minute)}, reading(99, time.Hour+time.Minute)},
		{"an old window never replaces a new one", []restclient.RateLimit{reading(99, time.Hour+time.Minute), reading(0, time.Minute)}, reading(99, time.Hour+time.Minute)},
	}
	for impl, mk := range makers {
		for _, tt := range tests {
			t.Run(impl+"/"+tt.name, func(t *testing.T) {
				s := mk(tt.name)
				for _, rl := range tt.observed {
					s.write.Observe(s.key, rl)
				}
				got, ok := s.read.Get(s.key)
				if !ok || got.Limit != tt.want.Limit || got.Remaining != tt.want.Remaining || !got.ResetAt.Equal(tt.want.ResetAt) {
					t.Errorf("Get = (%+v, %t), want %+v", got, ok, tt.want)
				}
				s.write.Forget(s.key)
				if got, ok := s.read.Get(s.key); ok {
					t.Errorf("Get after Forget = %+v, want none", got)
				}
			})
		}
	}
	t.Run("redis: exhausted on one replica, refused on the other", func(t *testing.T) {
		key := a.Keys().Key("spent")
		a.RateLimits().Observe(key, reading(0, 90*time.Second))
		if wait, out := b.RateLimits().Exhausted(key, now); !out || wait != 90*time.Second {
			t.Errorf("Exhausted on the other replica = (%s, %t), want (1m30s, true)", wait, out)
		}
		if _, ok := b.RateLimits().Get(b.Keys().Key("other key")); ok {
			t.Error("another key has a reading")
		}
	})
}

func TestFamilySizeStores(t *testing.T) {
	_, a, b := replicas(t)
	for impl, s := range map[string]struct {
		write, read restcache.FamilySizeStore
		key         callerkey.Key
	}{
		"memory":              {&restcache.FamilySizes{}, nil, keyOf("key-1")},
		"redis, two replicas": {a.FamilySizes(), b.FamilySizes(), a.Keys().Key("key-1")},
	} {
		t.Run(impl, func(t *testing.T) {
			read := s.read
			if read == nil {
				read = s.write
			}
			s.write.Observe(s.key, "", 45)
			s.write.Observe(s.key, "", 46)
			s.write.Observe(s.key, "income", 4)
			for class, want := range map[string]int{"": 46, "income": 4} {
				if got, ok := read.Get(s.key, class); !ok || got != want {
					t.Errorf("Get(%q) = (%d, %t), want (%d, true)", class, got, ok, want)
				}
			}
			if got, ok := read.Get(s.key, "expense"); ok {
				t.Errorf("Get(expense) = %d, want none", got)
			}
			s.write.Forget(s.key)
			if got, ok := read.Get(s.key, ""); ok {
				t.Errorf("Get after Forget = %d, want none", got)
			}
		})
	}
}

func answer(body string) *restclient.Response {
	return &restclient.Response{Status: 200, Body: []byte(body)}
}

func TestCache_SharedByReplicas(t *testing.T) {
	srv, a, b := replicas(t)
	ca, cb := a.Cache(time.Hour, nil), b.Cache(time.Hour, nil)
	key := a.Keys().Key("key-1")
	var calls atomic.Int64
	fetch := func(body string) func(context.Context) (*restclient.Response, error) {
		return func(context.Context) (*restclient.Response, error) { calls.Add(1); return answer(body), nil }
	}
	get := func(c *redisstate.Cache, k callerkey.Key, path, body string) string {
		t.Helper()
		resp, err := c.FetchAs(t.Context(), k, path, fetch(body))
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.Body)
	}
	get(ca, key, "chats?page=1", "chats v1")
	before, _, _ := b.Counts()
	if got := get(cb, b.Keys().Key("key-1"), "chats?page=1", "unused"); got != "chats v1" || calls.Load() != 1 {
		t.Errorf("replica 2 read %q with %d fetches, want replica 1's answer and 1 fetch", got, calls.Load())
	}
	if after, _, _ := b.Counts(); after-before != 1 {
		t.Errorf("a hit cost %d round trips to Redis, want 1 (one pipeline)", after-before)
	}
	if got := get(cb, b.Keys().Key("key-2"), "chats?page=1", "key-2's"); got != "key-2's" {
		t.Errorf("another key read %q, want its own answer", got)
	}
	other := open(t, srv, redisstate.Options{Secret: []byte("another deployment's secret")})
	if got := get(other.Cache(time.Hour, nil), other.Keys().Key("key-1"), "chats?page=1", "own"); got != "own" {
		t.Errorf("a store with another secret read %q, want its own answer", got)
	}

	// A write through replica 2 makes replica 1's answer unreadable on 1.
	cb.Invalidate(b.Keys().Key("key-1"), "chats")
	if got := get(ca, key, "chats?page=1", "chats v2"); got != "chats v2" {
		t.Errorf("after a write through the other replica: %q, want a fresh answer", got)
	}
	get(ca, key, "categories?page=1", "categories v1")
	cb.Invalidate(key, restclient.Chats)
	if got := get(ca, key, "categories?page=1", "unused"); got != "categories v1" {
		t.Errorf("a chats write dropped the categories answer: got %q", got)
	}
	cb.Forget(key)
	if got := get(ca, key, "categories?page=1", "categories v2"); got != "categories v2" {
		t.Errorf("after Forget: %q, want a fresh answer", got)
	}
}

func TestPersistedQueries_SharedByReplicas(t *testing.T) {
	_, a, b := replicas(t)
	const hash, query = "0123abcd", "{ categories { totalCount } }"
	qa := a.PersistedQueries(querylimit.NewPersistedQueryCache(1<<20, 1<<16), 1<<16, time.Hour)
	qb := b.PersistedQueries(querylimit.NewPersistedQueryCache(1<<20, 1<<16), 1<<16, time.Hour)
	if _, ok := qb.Get(t.Context(), hash); ok {
		t.Fatal("an unregistered hash was found")
	}
	qa.AddFor(t.Context(), a.Keys().Key("key-1"), hash, query)
	if got, ok := qb.Get(t.Context(), hash); !ok || got != query {
		t.Errorf("replica 2 Get = (%q, %t), want replica 1's query", got, ok)
	}
}

// What one key may register in Redis is bounded, and so is everybody's:
// past the bound a query is kept by its own replica only.
func TestPersistedQueries_BoundedPerKey(t *testing.T) {
	_, a, b := replicas(t)
	qa := a.PersistedQueries(querylimit.NewPersistedQueryCache(8<<20, 1<<16), 1<<16, time.Hour)
	qb := b.PersistedQueries(querylimit.NewPersistedQueryCache(8<<20, 1<<16), 1<<16, time.Hour)
	key := a.Keys().Key("key-1")
	query := "{ categories { totalCount } }" + strings.Repeat(" ", 60_000)
	shared := 0
	for i := range 40 { // 2.4 MB asked
		hash := fmt.Sprintf("hash-%02d", i)
		qa.AddFor(t.Context(), key, hash, query)
		if _, ok := qb.Get(t.Context(), hash); ok {
			shared++
		}
	}
	if got, max := shared*len(query), redisstate.MaxPersistedBytesPerKey; got > max || shared == 0 {
		t.Errorf("%d queries (%d bytes) reached Redis, want some, at most %d bytes", shared, got, max)
	}
	// Another key still may.
	qa.AddFor(t.Context(), a.Keys().Key("key-2"), "hash-other", "{ chats { totalCount } }")
	if _, ok := qb.Get(t.Context(), "hash-other"); !ok {
		t.Error("another key's query did not reach Redis")
	}
}

// Nothing in Redis names a key or shows what was cached.
func TestDumpRevealsNothing(t *testing.T) {
	srv, a, _ := replicas(t)
	const apiKey, secretName = "sk-live-0123456789abcdef", "Groceries and Wine"
	key := a.Keys().Key(apiKey)
	c := a.Cache(time.Hour, nil)
	_, _ = c.FetchAs(t.Context(), key, "categories?parent_id=7f1c", func(context.Context) (*restclient.Response, error) {
		return answer(`{"categories":[{"name":"` + secretName + `"}]}`), nil
	})
	c.Invalidate(key, restclient.Chats)
	a.RateLimits().Observe(key, restclient.RateLimit{Limit: 100, Remaining: 42, ResetAt: time.Now().Add(time.Hour)})
	a.FamilySizes().Observe(key, "", 1234)
	a.PersistedQueries(querylimit.NewPersistedQueryCache(1<<20, 1<<16), 1<<16, 0).AddFor(t.Context(), key, "feedbeef", "query Secret { chats { title } }")
	dump, err := srv.Dump(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(dump) < 5 {
		t.Fatalf("dump holds %d keys, want the 5 written: %v", len(dump), dump)
	}
	for name, values := range dump {
		all := append([][]byte{[]byte(name)}, values...)
		for _, b := range all {
			for _, clear := range []string{apiKey, secretName, "7f1c", "parent_id", "feedbeef", "Secret", "chats { title }"} {
				if bytes.Contains(b, []byte(clear)) {
					t.Errorf("Redis key %q holds %q in clear", name, clear)
				}
			}
			// Figures are short: random bytes may hold their digits, so a
			// value equal to one is what would give it away.
			for _, figure := range []string{"1234", "42"} {
				if string(b) == figure {
					t.Errorf("Redis key %q holds %s in clear", name, figure)
				}
			}
		}
		if !strings.HasPrefix(name, "suregql:") {
			t.Errorf("Redis key %q lacks the suregql: prefix", name)
		}
	}
}

// Redis killed: round trips fail within the timeout, the breaker opens
// after three and stops asking (one WARN line), the stores answer from
// memory; once Redis is back and the cooldown over, one round trip finds it
// and everything is shared again (one INFO line).
func TestStore_BreakerAcrossAKill(t *testing.T) {
	srv := redistest.Start(t)
	clk := &clock{now: time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)}
	var logs bytes.Buffer
	var logMu sync.Mutex
	s := open(t, srv, redisstate.Options{Now: clk.Now, Cooldown: 2 * time.Second,
		Log: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))})
	key := s.Keys().Key("key-1")
	limits := s.RateLimits()
	out := restclient.RateLimit{Limit: 100, Remaining: 0, ResetAt: clk.Now().Add(time.Hour)}
	limits.Observe(key, out)
	if st := s.Status(); st.State != redisstate.StateUp {
		t.Fatalf("state with Redis up = %+v", st)
	}

	srv.Kill()
	for range 5 {
		if _, exhausted := limits.Exhausted(key, clk.Now()); !exhausted {
			t.Error("with Redis down, the replica forgot what it saw itself: want the key exhausted")
		}
	}
	sent, failed, skipped := s.Counts()
	if st := s.Status(); st.State != redisstate.StateDown || st.Reason == "" {
		t.Errorf("after 5 lookups with Redis killed: %+v, want down with a reason", st)
	}
	if failed != redisstate.DefaultFailures || skipped != 5-redisstate.DefaultFailures {
		t.Errorf("round trips: %d sent, %d failed, %d skipped; want %d failed then the rest skipped", sent, failed, skipped, redisstate.DefaultFailures)
	}

	srv.Restart()
	if _, ok := limits.Get(s.Keys().Key("key-2")); ok || s.Status().State != redisstate.StateDown {
		t.Error("asked Redis before the cooldown ended")
	}
	clk.Add(2 * time.Second)
	if _, ok := limits.Get(s.Keys().Key("key-2")); ok || s.Status().State != redisstate.StateUp {
		t.Errorf("after the cooldown with Redis back: %+v, want up", s.Status())
	}
	// Redis restarted empty: this replica's own reading is its memory's
	// no more, but the next answer it sees is shared again.
	limits.Observe(key, out)
	other := open(t, srv, redisstate.Options{})
	if _, exhausted := other.RateLimits().Exhausted(other.Keys().Key("key-1"), clk.Now()); !exhausted {
		t.Error("after Redis came back, another replica does not see the key exhausted")
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	if n := strings.Count(text, "level=WARN"); n != 1 {
		t.Errorf("%d WARN lines, want 1 (one change of state):\n%s", n, text)
	}
	if n := strings.Count(text, "redis is back"); n != 1 {
		t.Errorf("%d lines saying Redis is back, want 1:\n%s", n, text)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// What one replica learnt of the upstream server plans the calls of the
// others; replicas in front of another server do not see it.
func TestTraits_SharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	a, b := open(t, srv, redisstate.Options{Now: c.Now}), open(t, srv, redisstate.Options{Now: c.Now})
	const upstream = "https://sure.example.com/api/v1"
	learnt, other := a.Traits(upstream), b.Traits(upstream)
	before, _, _ := b.Counts()
	for range 3 {
		if _, ok := other.Get(restcache.TraitClassification); ok {
			t.Fatal("a trait nobody learnt is known")
		}
	}
	if after, _, _ := b.Counts(); after-before != 1 {
		t.Errorf("3 asks of a trait Redis does not have cost %d round trips, want 1", after-before)
	}
	learnt.Learn(restcache.TraitClassification, restcache.TraitAbsent)
	c.Add(10 * time.Second) // Redis is asked again after a miss this late
	if v, ok := other.Get(restcache.TraitClassification); !ok || v != restcache.TraitAbsent {
		t.Errorf("the other replica's Get = (%q, %t), want (%q, true)", v, ok, restcache.TraitAbsent)
	}
	if v, ok := b.Traits("https://other.example.com/api/v1").Get(restcache.TraitClassification); ok {
		t.Errorf("a replica of another upstream knows %q", v)
	}
}

// A trait is trusted for restcache.TraitKeep after an answer last showed
// it: a server gets upgraded.
func TestTraits_Keep(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	tr := &restcache.Traits{Clock: c.Now}
	tr.Learn(restcache.TraitMessagesPerPage, "20")
	c.Add(restcache.TraitKeep)
	if v, ok := tr.Get(restcache.TraitMessagesPerPage); !ok || v != "20" {
		t.Errorf("Get within the keep time = (%q, %t), want (20, true)", v, ok)
	}
	c.Add(time.Second)
	if v, ok := tr.Get(restcache.TraitMessagesPerPage); ok {
		t.Errorf("Get past the keep time = %q, want none", v)
	}
	tr.Learn(restcache.TraitMessagesPerPage, "50")
	if v, _ := tr.Get(restcache.TraitMessagesPerPage); v != "50" {
		t.Errorf("Get after a new answer = %q, want 50", v)
	}
}

// After a key sent a message, no replica keeps its chat answers while the
// assistant writes the reply; its other answers are kept, and so are other
// keys' chats. The same holds of the in-memory cache.
func TestCache_HoldKeepsNothingOfTheResource(t *testing.T) {
	_, a, b := replicas(t)
	for impl, c := range map[string]struct {
		hold   restcache.Holder
		read   restcache.KeyedFetcher
		key    callerkey.Key
		other  callerkey.Key
		holdAs callerkey.Key
	}{
		"memory":              {restcache.NewCache(100, time.Hour), nil, keyOf("key-1"), keyOf("key-2"), keyOf("key-1")},
		"redis, two replicas": {a.Cache(time.Hour, nil), b.Cache(time.Hour, nil), b.Keys().Key("key-1"), b.Keys().Key("key-2"), a.Keys().Key("key-1")},
	} {
		t.Run(impl, func(t *testing.T) {
			read := c.read
			if read == nil {
				read = c.hold.(restcache.KeyedFetcher)
			}
			var calls atomic.Int64
			get := func(k callerkey.Key, path string) {
				t.Helper()
				_, err := read.FetchAs(t.Context(), k, path, func(context.Context) (*restclient.Response, error) {
					calls.Add(1)
					return answer(`{"chats":[]}`), nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			c.hold.Hold(c.holdAs, restclient.Chats, time.Minute)
			for _, tc := range []struct {
				k     callerkey.Key
				path  string
				calls int64 // of two reads
			}{
				{c.key, "chats?page=1", 2},
				{c.key, "categories?page=1", 1},
				{c.other, "chats?page=1", 1},
			} {
				calls.Store(0)
				get(tc.k, tc.path)
				get(tc.k, tc.path)
				if got := calls.Load(); got != tc.calls {
					t.Errorf("%s: two reads fetched %d times, want %d", tc.path, got, tc.calls)
				}
			}
			// A chat read after the hold began that shows the assistant's
			// reply ends the hold, on every replica: the list is kept again.
			const replied = `{"id":"c1","title":"t","messages":[` +
				`{"id":"m1","type":"user_message","role":"user","content":"q","created_at":"2026-03-01T12:00:00Z","updated_at":"2026-03-01T12:00:00Z"},` +
				`{"id":"m2","type":"assistant_message","role":"assistant","content":"a","model":"gpt-4.1","created_at":"2026-03-01T12:00:08Z","updated_at":"2026-03-01T12:00:08Z"}],` +
				`"pagination":{"page":1,"per_page":20,"total_count":2,"total_pages":1}}`
			if _, err := read.FetchAs(t.Context(), c.key, "chats/c1", func(context.Context) (*restclient.Response, error) {
				return answer(replied), nil
			}); err != nil {
				t.Fatal(err)
			}
			calls.Store(0)
			get(c.key, "chats?page=1")
			get(c.key, "chats?page=1")
			if got := calls.Load(); got != 1 {
				t.Errorf("after the reply was read: two reads of the list fetched %d times, want 1", got)
			}
		})
	}
}

// Each trait ages on its own: one no answer shows again (an endpoint known
// to be missing is not called) is forgotten TraitKeep after it was seen,
// however often the replicas renew the others.
func TestTraits_EachAgesOnItsOwn(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{now: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	a, b := open(t, srv, redisstate.Options{Now: c.Now}), open(t, srv, redisstate.Options{Now: c.Now})
	const upstream = "https://sure.example.com/api/v1"
	ta := a.Traits(upstream)
	ta.Learn(restcache.TraitListImports, restcache.TraitAbsent)
	for range 4 {
		c.Add(restcache.TraitKeep / 3)
		ta.Learn(restcache.TraitClassification, restcache.TraitAbsent) // an answer shows it again
	}
	tb := b.Traits(upstream)
	if v, ok := tb.Get(restcache.TraitListImports); ok {
		t.Errorf("a trait seen %s ago is still known: %q", 4*restcache.TraitKeep/3, v)
	}
	if v, ok := tb.Get(restcache.TraitClassification); !ok || v != restcache.TraitAbsent {
		t.Errorf("a trait seen just now: (%q, %t), want (%q, true)", v, ok, restcache.TraitAbsent)
	}
	if v, ok := ta.Get(restcache.TraitListImports); ok {
		t.Errorf("the replica that learnt it still knows it: %q", v)
	}
}

// A write to one record (restclient.PartOf) makes that record's answers
// and nothing else unreadable, on every replica.
func TestCache_InvalidatePart(t *testing.T) {
	_, a, b := replicas(t)
	writer, reader := a.Cache(time.Hour, nil), b.Cache(time.Hour, nil)
	key := b.Keys().Key("key-1")
	var calls atomic.Int64
	get := func(path string) {
		t.Helper()
		if _, err := reader.FetchAs(t.Context(), key, path, func(context.Context) (*restclient.Response, error) {
			calls.Add(1)
			return answer(`{"chats":[]}`), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{"chats?page=1", "chats/a?page=1", "chats/b?page=1"}
	for _, p := range paths {
		get(p)
	}
	writer.Invalidate(a.Keys().Key("key-1"), restclient.PartOf("chats/a"))
	for _, tc := range []struct {
		path  string
		calls int64
	}{{"chats?page=1", 0}, {"chats/a?page=1", 1}, {"chats/b?page=1", 0}} {
		calls.Store(0)
		get(tc.path)
		if got := calls.Load(); got != tc.calls {
			t.Errorf("%s after a write to chat a: %d calls, want %d", tc.path, got, tc.calls)
		}
	}
}

// Two chats awaiting their replies at once: the reply of one does not end
// the hold the other's needs (the list of chats, whose message_count and
// last_message_at the second reply changes, stays unkept), on every
// replica; the second reply ends it. A hold of a chat not known by its id
// (a new chat whose answer was lost) ends with any other chat's reply.
func TestCache_HoldOfTwoChatsAwaitingReplies(t *testing.T) {
	_, a, b := replicas(t)
	for impl, c := range map[string]struct {
		hold   restcache.Holder
		read   restcache.KeyedFetcher
		key    callerkey.Key
		holdAs callerkey.Key
	}{
		"memory":              {restcache.NewCache(100, time.Hour), nil, keyOf("key-1"), keyOf("key-1")},
		"redis, two replicas": {a.Cache(time.Hour, nil), b.Cache(time.Hour, nil), b.Keys().Key("key-1"), a.Keys().Key("key-1")},
	} {
		t.Run(impl, func(t *testing.T) {
			read := c.read
			if read == nil {
				read = c.hold.(restcache.KeyedFetcher)
			}
			listCalls := func() int64 {
				t.Helper()
				var calls int64
				for range 2 {
					if _, err := read.FetchAs(t.Context(), c.key, "chats?page=1", func(context.Context) (*restclient.Response, error) {
						calls++
						return answer(`{"chats":[]}`), nil
					}); err != nil {
						t.Fatal(err)
					}
				}
				return calls
			}
			replyCame := func(id string) {
				t.Helper()
				body := `{"id":"` + id + `","title":"t","messages":[` +
					`{"id":"m1","type":"user_message","role":"user","content":"q","created_at":"2026-03-01T12:00:00Z","updated_at":"2026-03-01T12:00:00Z"},` +
					`{"id":"m2","type":"assistant_message","role":"assistant","content":"a","model":"gpt-4.1","created_at":"2026-03-01T12:00:08Z","updated_at":"2026-03-01T12:00:08Z"}],` +
					`"pagination":{"page":1,"per_page":20,"total_count":2,"total_pages":1}}`
				if _, err := read.FetchAs(t.Context(), c.key, "chats/"+id, func(context.Context) (*restclient.Response, error) {
					return answer(body), nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			c.hold.Hold(c.holdAs, restclient.PartOf("chats/c1"), time.Minute)
			c.hold.Hold(c.holdAs, restclient.PartOf("chats/c2"), time.Minute)
			replyCame("c1")
			if got := listCalls(); got != 2 {
				t.Errorf("c1's reply read, c2's awaited: two reads of the list fetched %d times, want 2 (none kept)", got)
			}
			replyCame("c2")
			if got := listCalls(); got != 1 {
				t.Errorf("both replies read: two reads of the list fetched %d times, want 1", got)
			}
			// Two more messages sent: the list is written (forgotten), then held.
			c.hold.(restcache.Invalidator).Invalidate(c.holdAs, restclient.PartOf("chats"))
			c.hold.Hold(c.holdAs, restclient.Chats, time.Minute)
			c.hold.Hold(c.holdAs, restclient.PartOf("chats/c1"), time.Minute)
			replyCame("c3") // the new chat's
			if got := listCalls(); got != 2 {
				t.Errorf("the new chat's reply read, c1's awaited: two reads of the list fetched %d times, want 2", got)
			}
			replyCame("c1")
			if got := listCalls(); got != 1 {
				t.Errorf("every reply read: two reads of the list fetched %d times, want 1", got)
			}
		})
	}
}

// A key that writes to chat after chat keeps one generation field per
// chat in Redis only up to a bound: past it the parts are folded into
// their resource's generation, and no answer read before a write opens
// after it, the fold's or not.
func TestCache_PartGenerationsBounded(t *testing.T) {
	srv, a, b := replicas(t)
	writer, reader := a.Cache(time.Hour, nil), b.Cache(time.Hour, nil)
	key := b.Keys().Key("key-1")
	var calls atomic.Int64
	get := func(path string) {
		t.Helper()
		if _, err := reader.FetchAs(t.Context(), key, path, func(context.Context) (*restclient.Response, error) {
			calls.Add(1)
			return answer(`{"chats":[]}`), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	get("chats/c0?page=1")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	for i := range 2_000 {
		writer.Invalidate(a.Keys().Key("key-1"), restclient.PartOf("chats/c"+strconv.Itoa(i)))
	}
	n, err := rdb.HLen(t.Context(), "suregql:gen:"+key.ID()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n > 300 {
		t.Errorf("after writes to 2000 chats the key's generations hold %d fields, want at most about 256", n)
	}
	calls.Store(0)
	get("chats/c0?page=1")
	if calls.Load() != 1 {
		t.Error("chat c0's answer read before its write was served after it")
	}
}
