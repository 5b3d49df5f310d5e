package facade_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/internal/state/redisstate/redistest"
	"github.com/suregql/suregql/restclient"
)

// cluster is n facade replicas, each with its own Redis store (as separate
// processes have), over one fake upstream and one real redis-server.
type cluster struct {
	t        *testing.T
	redis    *redistest.Server
	upstream *restclienttest.Server
	replicas []*env
	stores   []*redisstate.Store
}

const replicaSecret = "the secret every replica is given"

func newCluster(t *testing.T, n int, cacheTTL time.Duration) *cluster {
	t.Helper()
	c := &cluster{t: t, redis: redistest.Start(t), upstream: restclienttest.New()}
	upSrv := httptest.NewServer(c.upstream)
	t.Cleanup(upSrv.Close)
	// As newEnv's, and for the same reason: no timeout of the upstream
	// calls' own, harnessDeadline, and one clock that stands still for
	// every replica.
	now := standingClock()
	for range n {
		tr := restclient.NewTransport(0)
		t.Cleanup(tr.CloseIdleConnections)
		client, err := restclient.New(upSrv.URL,
			restclient.WithHTTPClient(&http.Client{Transport: tr}),
			restclient.WithRetryPolicy(restclient.RetryPolicy{MaxRetries: 1}))
		if err != nil {
			t.Fatal(err)
		}
		// A short cooldown, so that the kill test sees the replicas take
		// Redis up again within its bounded wait. A Redis round trip that
		// times out is answered from the upstream (a call the test
		// counts), and on a busy 2-core machine the race detector made
		// loopback round trips take over 2 s: a timeout no slowness
		// reaches (a killed Redis refuses connections at once, so it is
		// not waited).
		store, err := redisstate.Open(c.redis.URL(), redisstate.Options{
			Secret: []byte(replicaSecret), Cooldown: 100 * time.Millisecond, Timeout: time.Minute,
			Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		srv := httptest.NewServer(facade.New(facade.Config{
			Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: cacheTTL, Now: now, OperationTimeout: harnessDeadline,
			Redis: store, Metrics: metrics.New(),
		}))
		t.Cleanup(srv.Close)
		c.replicas = append(c.replicas, &env{t: t, upstream: c.upstream, server: srv, upstreamConns: tr})
		c.stores = append(c.stores, store)
	}
	return c
}

// persisted sends query's hash through e, with the query text or without.
func persisted(t *testing.T, e *env, key, query string, withText bool) httpResult {
	t.Helper()
	sum := sha256.Sum256([]byte(query))
	ext := `"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	body := `{` + ext + `}`
	if withText {
		body = `{"query":` + quote(query) + `,` + ext + `}`
	}
	return postJSON(t, e, body, map[string]string{"X-Api-Key": key})
}

func firstCode(r httpResult) any {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return nil
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	return ext["code"]
}

// The three replicas: each step goes through one replica and is
// checked through the others.
func TestReplicas_ActAsOne(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3, time.Minute)
	r1, r2, r3 := c.replicas[0], c.replicas[1], c.replicas[2]
	key := restclienttest.DemoKey

	t.Run("a read cached on replica 1 is served by 2 and 3 without a call", func(t *testing.T) {
		const q = `{ categories(first: 5) { nodes { name color } } }`
		first := r1.ok(key, q, nil, nil)
		wantCalls(t, first, 1)
		for i, e := range []*env{r2, r3} {
			r := e.ok(key, q, nil, nil)
			wantCalls(t, r, 0)
			if !bytes.Equal(r.data, first.data) {
				t.Errorf("replica %d answered %s, want replica 1's %s", i+2, r.data, first.data)
			}
		}
	})

	t.Run("updateChat through replica 2 is seen through replica 3 right after", func(t *testing.T) {
		var list struct{ Chats chatConn }
		r3.ok(key, chatsPage, map[string]any{"first": 3}, &list) // cached on 3 (and for all)
		r1.ok(key, chatsPage, map[string]any{"first": 3}, nil)
		if len(list.Chats.Nodes) == 0 {
			t.Fatal("the demo key has no chat")
		}
		chat := list.Chats.Nodes[0]
		newTitle := chat.Title + " (renamed through replica 2)"
		r2.ok(key, `mutation($in: UpdateChatInput!) { updateChat(input: $in) { chat { id title } } }`,
			map[string]any{"in": map[string]any{"id": chat.ID, "title": newTitle}}, nil)
		var after struct{ Chats chatConn }
		r := r3.ok(key, chatsPage, map[string]any{"first": 3}, &after)
		if r.calls == 0 {
			t.Error("replica 3 answered from its cache after the write")
		}
		found := false
		for _, n := range after.Chats.Nodes {
			found = found || (n.ID == chat.ID && n.Title == newTitle)
		}
		if !found {
			t.Errorf("replica 3 lists %+v, want chat %s titled %q", after.Chats.Nodes, chat.ID, newTitle)
		}
	})

	t.Run("a 429 seen by replica 1 makes 2 and 3 refuse the key without a call", func(t *testing.T) {
		limited := "replicas-limited-key"
		c.upstream.AddKey(limited, restclienttest.ReadOnlyKey)
		c.upstream.SetRateLimit(limited, 0)
		r := r1.do(limited, `{ categories(first: 7) { totalCount } }`, nil)
		wantError(t, r, "RATE_LIMITED")
		wantCalls(t, r, 1)
		for i, e := range []*env{r2, r3} {
			r := e.do(limited, `{ chats(first: 2) { totalCount } }`, nil)
			err := wantError(t, r, "RATE_LIMITED")
			wantCalls(t, r, 0)
			if s, ok := err.Extensions["retryAfter"].(float64); !ok || s <= 0 {
				t.Errorf("replica %d: retryAfter = %v, want positive seconds", i+2, err.Extensions["retryAfter"])
			}
		}
	})

	t.Run("an APQ hash registered on replica 1 works on replica 3", func(t *testing.T) {
		const q = `query Persisted { categories(first: 2) { nodes { name } } }`
		if r := persisted(t, r3, key, q, false); firstCode(r) != "PERSISTED_QUERY_NOT_FOUND" {
			t.Fatalf("before registration: code %v, want PERSISTED_QUERY_NOT_FOUND", firstCode(r))
		}
		if r := persisted(t, r1, key, q, true); firstCode(r) != nil {
			t.Fatalf("registering on replica 1: %s", r.raw)
		}
		if r := persisted(t, r3, key, q, false); firstCode(r) != nil || r.body["data"] == nil {
			t.Errorf("by hash on replica 3: %s, want data", r.raw)
		}
	})

	t.Run("a Redis dump holds no API key and no category or chat name", func(t *testing.T) {
		dump, err := c.redis.Dump(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(dump) == 0 {
			t.Fatal("Redis holds nothing: the replicas did not share anything")
		}
		secrets := []string{key, "replicas-limited-key", replicaSecret}
		for _, cat := range c.upstream.Categories(key) {
			secrets = append(secrets, cat.Name)
		}
		for _, ch := range c.upstream.Chats(key) {
			secrets = append(secrets, ch.Title)
		}
		checked := 0
		for name, values := range dump {
			for _, b := range append([][]byte{[]byte(name)}, values...) {
				for _, s := range secrets {
					// Shorter strings could turn up in random bytes.
					if len(s) >= 6 {
						checked++
						if bytes.Contains(b, []byte(s)) {
							t.Errorf("Redis key %q holds %q in clear", name, s)
						}
					}
				}
			}
		}
		t.Logf("%d Redis keys, %d (value, secret) pairs checked", len(dump), checked)
	})
}

// walkLargeFamily walks the large family's 1,000 roots with their
// subcategories, page after page, through the replicas in turn, and
// returns the upstream calls it cost.
func walkLargeFamily(t *testing.T, replicas []*env) int {
	t.Helper()
	key := restclienttest.LargeFamilyKey
	q := `query($after: String) { categories(rootsOnly: true, first: 100, after: $after) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } pageInfo { hasNextPage endCursor } } }`
	vars := map[string]any{}
	total, roots := 0, 0
	for page := 0; ; page++ {
		var out struct{ Categories categoryConn }
		r := replicas[page%len(replicas)].ok(key, q, vars, &out)
		total += r.calls
		roots += len(out.Categories.Nodes)
		if !out.Categories.PageInfo.HasNextPage {
			break
		}
		vars["after"] = *out.Categories.PageInfo.EndCursor
	}
	if roots != 1000 {
		t.Fatalf("walked %d roots, want 1000", roots)
	}
	return total
}

func TestReplicas_LargeFamilyWalkRoundRobin(t *testing.T) {
	if testing.Short() {
		t.Skip("large-data run: skipped with -short")
	}
	t.Parallel()
	one := walkLargeFamily(t, []*env{newEnv(t, withConfig(func(c *facade.Config) { c.CacheTTL = time.Minute }))})
	three := walkLargeFamily(t, newCluster(t, 3, time.Minute).replicas)
	t.Logf("walking 1,000 roots with subcategories: %d calls through one replica, %d through three in turn", one, three)
	if three > one {
		t.Errorf("three replicas in turn cost %d calls, one replica %d: want no more", three, one)
	}
}

// Redis killed in the middle of a load: no operation fails because of it,
// /readyz stays ready and says Redis is down, and once Redis is back the
// replicas share state again.
func TestReplicas_RedisKilledUnderLoad(t *testing.T) {
	// Not parallel: it restarts Redis on a port it gave up meanwhile.
	if testing.Short() {
		t.Skip("load run: skipped with -short")
	}
	c := newCluster(t, 3, time.Minute)
	const (
		workers = 6
		ops     = 240
		killAt  = 60
		backAt  = 150
	)
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprintf("load-key-%d", i)
		c.upstream.AddKey(keys[i], restclienttest.DemoKey) // premium: 1,000 calls an hour
	}
	queries := []string{
		`{ categories(first: 5) { nodes { name } } }`,
		`{ categories(rootsOnly: true, first: 10) { nodes { name subcategories { totalCount } } } }`,
		`{ chats(first: 3) { nodes { title } } }`,
	}
	var (
		next, done atomic.Int64
		failed     atomic.Int64
		mu         sync.Mutex
		firstFail  string
		killed     = make(chan struct{})
		restart    = make(chan struct{})
		once1      sync.Once
		once2      sync.Once
		sawDown    atomic.Bool
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= ops {
					return
				}
				e := c.replicas[i%3]
				// Not e.do: it counts every call the upstream saw meanwhile.
				_, _, err := e.client(keys[i%int64(len(keys))]).ExecRawWithExtensions(t.Context(), queries[i%int64(len(queries))], nil)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if firstFail == "" {
						firstFail = err.Error()
					}
					mu.Unlock()
				}
				switch done.Add(1) {
				case killAt:
					once1.Do(func() { close(killed) })
				case backAt:
					once2.Do(func() { close(restart) })
				}
			}
		})
	}
	<-killed
	c.redis.Kill()
	// While it is down: still ready, and /readyz and /metrics say so once a
	// replica found out.
	<-restart
	for i, e := range c.replicas {
		st := readyzRedis(t, e)
		if st.status != http.StatusOK {
			t.Errorf("replica %d /readyz with Redis down: %d, want 200 (still ready)", i+1, st.status)
		}
		if st.state == string(redisstate.StateDown) {
			sawDown.Store(true)
			if m := scrape(t, e); !strings.Contains(m, "\nsuregql_redis_up 0\n") {
				t.Errorf("replica %d: /readyz says Redis is down, /metrics does not show suregql_redis_up 0", i+1)
			}
		}
	}
	if !sawDown.Load() {
		t.Error("no replica's /readyz reported Redis down while it was killed")
	}
	c.redis.Restart()
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of %d operations failed with Redis killed in the middle, want 0; first: %s", n, ops, firstFail)
	}

	// Back: every replica takes Redis up again (its breaker's cooldown is
	// 100 ms; /readyz pings through it), and state is shared again.
	deadline := time.Now().Add(10 * time.Second)
	for i, e := range c.replicas {
		for readyzRedis(t, e).state != string(redisstate.StateUp) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d did not take Redis up again within 10s", i+1)
			}
			time.Sleep(20 * time.Millisecond) // polling a real server's state
		}
	}
	const q = `{ categories(first: 4) { nodes { name } } }`
	wantCalls(t, c.replicas[0].ok(keys[0], q, nil, nil), 1)
	wantCalls(t, c.replicas[1].ok(keys[0], q, nil, nil), 0)
	wantCalls(t, c.replicas[2].ok(keys[0], q, nil, nil), 0)
}

type redisReadiness struct {
	status int
	state  string
}

func readyzRedis(t *testing.T, e *env) redisReadiness {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/readyz?verbose", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := send(t, req)
	redis, _ := r.body["redis"].(map[string]any)
	state, _ := redis["state"].(string)
	return redisReadiness{status: r.status, state: state}
}

func scrape(t *testing.T, e *env) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req).raw
}

// What one replica's answers showed of the Sure server (here: categories
// without classification, today's Sure) plans every replica's calls: the
// filter it would ignore is refused by another replica at no call.
func TestReplicas_ShareWhatTheUpstreamIs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2, 0)
	key := restclienttest.DemoKey
	c.replicas[0].ok(key, `{ categories(first: 1) { nodes { id } } }`, nil, nil)
	r := c.replicas[1].do(key, `{ categories(first: 5, classification: INCOME) { nodes { name } } }`, nil)
	wantCalls(t, r, 0)
	wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
}

// A persisted query is registered once the upstream accepted the request's
// key, never before: without a key, or with one the upstream refuses, the
// query is answered (or refused) but nothing is stored, in Redis or in
// the replica, and Redis does not grow.
func TestReplicas_PersistedQueriesOfAcceptedKeysOnly(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2, 0)
	r1, r2 := c.replicas[0], c.replicas[1]
	before, err := c.redis.Dump(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"", "not-a-key-the-upstream-knows"} {
		q := fmt.Sprintf(`query Stranger%d { categories(first: 1) { totalCount } }`, i)
		persisted(t, r1, key, q, true)
		if r := persisted(t, r1, restclienttest.DemoKey, q, false); firstCode(r) != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("key %q: its query was registered (%s)", key, r.raw)
		}
	}
	after, err := c.redis.Dump(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name := range after {
		if _, ok := before[name]; !ok && strings.Contains(name, "apq") {
			t.Errorf("Redis holds %s after strangers' registrations", name)
		}
	}

	// An accepted key's query is registered, for every replica.
	const q = `query Accepted { categories(first: 1) { totalCount } }`
	if r := persisted(t, r1, restclienttest.DemoKey, q, true); firstCode(r) != nil {
		t.Fatalf("registering: %s", r.raw)
	}
	if r := persisted(t, r2, restclienttest.OtherFamilyKey, q, false); firstCode(r) != nil || r.body["data"] == nil {
		t.Errorf("by hash on the other replica: %s, want data", r.raw)
	}
}
