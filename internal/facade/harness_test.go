package facade_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	graphql "github.com/hasura/go-graphql-client"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// env is the production handler backed by the real client and the fake
// Sure upstream, both on loopback.
type env struct {
	t        *testing.T
	upstream *restclienttest.Server
	server   *httptest.Server
	// upstreamConns is the facade's transport to the fake upstream.
	upstreamConns *http.Transport
}

type envOption func(*envConfig)

type envConfig struct {
	upstream []restclienttest.Option
	facade   facade.Config
	timeout  time.Duration
	retry    *restclient.RetryPolicy
	wrap     func(http.Handler) http.Handler // around the fake upstream
}

// withUpstreamWrapper puts a handler in front of the fake upstream, e.g. to
// watch what reaches it.
func withUpstreamWrapper(wrap func(http.Handler) http.Handler) envOption {
	return func(c *envConfig) { c.wrap = wrap }
}

// withUpstream configures the fake upstream, e.g. the Sure version it
// plays (today's, unless told).
func withUpstream(opts ...restclienttest.Option) envOption {
	return func(c *envConfig) { c.upstream = append(c.upstream, opts...) }
}

// versions are the Sure release lines the facade must answer right
// against: a test of behaviour they differ in runs once for each.
var versions = []restclienttest.Version{restclienttest.Today, restclienttest.Legacy}

// forEachVersion runs f in a subtest per Sure version, with an env whose
// fake upstream plays it.
func forEachVersion(t *testing.T, f func(t *testing.T, e *env, v restclienttest.Version), opts ...envOption) {
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			f(t, newEnv(t, append(slices.Clip(opts), withUpstream(restclienttest.WithVersion(v)))...), v)
		})
	}
}

// messagesPerPage is the page size of a chat's messages of version v.
func messagesPerPage(v restclienttest.Version) int {
	if v == restclienttest.Legacy {
		return restclient.LegacyMessagesPerPage
	}
	return restclient.MessagesPerPage
}

// withRetry replaces the harness's retry policy (one retry, no wait).
func withRetry(p restclient.RetryPolicy) envOption { return func(c *envConfig) { c.retry = &p } }

// withTimeout bounds each upstream attempt (none by default: see newEnv).
func withTimeout(d time.Duration) envOption { return func(c *envConfig) { c.timeout = d } }

// withConfig adjusts the facade's configuration.
func withConfig(f func(*facade.Config)) envOption { return func(c *envConfig) { f(&c.facade) } }

// The harness's tests count calls: nothing in an env may depend on how
// fast a busy machine runs (the race detector on 2 shared cores takes
// seconds to answer a burst of 50 pages of the large family).
//   - Its upstream calls have no timeout of their own unless a test sets
//     one (withTimeout): a timed-out GET is retried, and the retry is one
//     more call the upstream counts (the large family's 50 pages cost 51
//     to 98 calls at load 12).
//   - An operation's deadline is harnessDeadline unless a test sets one
//     (Config.OperationTimeout): it ends a call that hangs, and no busy
//     machine reaches it.
//   - The facade's clock (Config.Now: the cached answers' age) stands
//     still unless a test sets one: an answer a test cached stays fresh
//     however long the test takes.
//
// Tests of timeouts run in a bubble (inBubble), on its clock.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	cfg := envConfig{facade: facade.Config{Now: standingClock(), OperationTimeout: harnessDeadline}}
	for _, o := range opts {
		o(&cfg)
	}
	up := restclienttest.New(cfg.upstream...)
	var upHandler http.Handler = up
	if cfg.wrap != nil {
		upHandler = cfg.wrap(up)
	}
	upSrv := httptest.NewServer(upHandler)
	t.Cleanup(upSrv.Close)
	// Retries stay on but without waiting, unless the test chooses.
	retry := restclient.RetryPolicy{MaxRetries: 1}
	if cfg.retry != nil {
		retry = *cfg.retry
	}
	// The production transport: with net/http's 2 idle connections per
	// host, load tests would open (and leave in TIME_WAIT) a connection
	// per call.
	tr := restclient.NewTransport(0)
	t.Cleanup(tr.CloseIdleConnections)
	client, err := restclient.New(upSrv.URL,
		restclient.WithHTTPClient(&http.Client{Timeout: cfg.timeout, Transport: tr}),
		restclient.WithRetryPolicy(retry),
	)
	if err != nil {
		t.Fatal(err)
	}
	cfg.facade.Upstream = client
	// The harness's tests are about plans and answers, whose calls a
	// cache would hide: the cache is off unless a test sets CacheTTL (a
	// cap). The default rule is tested in a bubble (freshness_test.go).
	if cfg.facade.CacheTTL == 0 {
		cfg.facade.CacheTTL = facade.CacheOff
	}
	if cfg.facade.Log == nil {
		cfg.facade.Log = slog.New(slog.DiscardHandler)
	}
	srv := httptest.NewServer(facade.New(cfg.facade))
	t.Cleanup(srv.Close)
	return &env{t: t, upstream: up, server: srv, upstreamConns: tr}
}

// client returns a GraphQL client that sends key as X-Api-Key ("" sends
// none).
func (e *env) client(key string) *graphql.Client {
	c := graphql.NewClient(e.server.URL+"/graphql", e.server.Client())
	return c.WithRequestModifier(func(r *http.Request) {
		if key != "" {
			r.Header.Set("X-Api-Key", key)
		}
	})
}

// result is one GraphQL response.
type result struct {
	data   json.RawMessage
	errs   graphql.Errors
	ext    extensions
	rawExt json.RawMessage
	calls  int // upstream calls the fake counted during the operation
}

type extensions struct {
	Upstream struct {
		Calls     int `json:"calls"`
		RateLimit *struct {
			Limit     int    `json:"limit"`
			Remaining int    `json:"remaining"`
			ResetAt   string `json:"resetAt"`
		} `json:"rateLimit"`
	} `json:"upstream"`
}

// do runs one operation as key and checks that extensions.upstream.calls
// equals what the fake upstream counted.
func (e *env) do(key, query string, vars map[string]any) result {
	e.t.Helper()
	before := e.upstream.Calls()
	data, ext, err := e.client(key).ExecRawWithExtensions(context.Background(), query, vars)
	r := result{data: data, calls: e.upstream.Calls() - before, rawExt: ext}
	if err != nil {
		var gerrs graphql.Errors
		if !errors.As(err, &gerrs) {
			e.t.Fatalf("transport error: %v", err)
		}
		r.errs = gerrs
	}
	if len(ext) > 0 {
		if err := json.Unmarshal(ext, &r.ext); err != nil {
			e.t.Fatalf("decode extensions %s: %v", ext, err)
		}
		if r.ext.Upstream.Calls != r.calls {
			e.t.Errorf("extensions.upstream.calls = %d, the upstream counted %d", r.ext.Upstream.Calls, r.calls)
		}
	}
	return r
}

// ok runs an operation that must succeed and decodes its data into out.
func (e *env) ok(key, query string, vars map[string]any, out any) result {
	e.t.Helper()
	r := e.do(key, query, vars)
	if len(r.errs) > 0 {
		e.t.Fatalf("unexpected errors: %v", r.errs)
	}
	if out != nil {
		if err := json.Unmarshal(r.data, out); err != nil {
			e.t.Fatalf("decode %s: %v", r.data, err)
		}
	}
	return r
}

// wantCalls fails the test unless the operation cost exactly n upstream calls.
func wantCalls(t *testing.T, r result, n int) {
	t.Helper()
	if r.calls != n {
		t.Errorf("upstream calls = %d, want %d", r.calls, n)
	}
}

// gotError is a GraphQL error of a response, as a test inspects it.
type gotError struct {
	Message    string
	Path       []any
	Extensions map[string]any
}

// wantError fails unless r has an error with code, and returns the first.
func wantError(t *testing.T, r result, code string) gotError {
	t.Helper()
	for _, e := range r.errs {
		if e.Extensions["code"] == code {
			return gotError{Message: e.Message, Path: e.Path, Extensions: e.Extensions}
		}
	}
	t.Fatalf("want an error with code %s, got %v (data %s)", code, r.errs, r.data)
	return gotError{}
}

// harnessDeadline is the operations' deadline in the harness: over 3× the
// longest operation measured on a 2-core machine at load 12 with the race
// detector (the large family's 50 pages, 12 such operations at once: 18 s,
// past production's 15 s).
const harnessDeadline = time.Minute

// standingClock returns a clock that reads the time it was made at, to the
// millisecond (Redis keeps times to the millisecond).
func standingClock() func() time.Time {
	at := time.Now().Truncate(time.Millisecond)
	return func() time.Time { return at }
}
