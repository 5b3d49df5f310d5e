package facade

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/planning/flight"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/restclient"
)

// Readiness: /readyz answers whether this process takes requests: it
// started (its configuration was valid) and is not shutting down. What it
// depends on, the upstream and Redis, never fails readiness: a Sure outage
// would otherwise take every replica out of the load balancer at once, and
// clients would get connection errors instead of GraphQL errors saying
// UPSTREAM_UNAVAILABLE. /readyz?verbose adds their state: the upstream
// checked with restclient's Probe (which spends no caller's quota), the
// upstream's circuit breaker, Redis.
const (
	// ReadinessTTL is how long a probe's result answers /readyz?verbose: a
	// probe every few seconds at most, however many ask.
	ReadinessTTL = 5 * time.Second
	// ReadinessTimeout bounds one probe.
	ReadinessTimeout = 3 * time.Second
)

// Modes /readyz reports.
const (
	modeUpstream = "upstream"
	modeDemo     = "demo"
)

// readiness answers /readyz from the last probe while it is fresh; callers
// that come while a probe runs wait for that one.
type readiness struct {
	probe func(context.Context) error
	now   func() time.Time
	mode  string
	log   *slog.Logger
	redis *redisstate.Store // nil: no shared state
	// breaker is the upstream's circuit breaker; nil: none.
	breaker *restclient.Breaker
	// draining is closed when the server starts shutting down: /readyz
	// then answers 503. nil: never.
	draining <-chan struct{}
	// version is the build's, reported as it is ("": left out).
	version string

	flight flight.Group[struct{}, upstreamState]
	mu     sync.Mutex
	last   *upstreamState // nil before the first probe
}

// upstreamState is the result of one probe.
type upstreamState struct {
	Reason    string    `json:"reason,omitempty"` // empty: a Sure server answered
	CheckedAt time.Time `json:"checkedAt"`
}

func newReadiness(cfg Config, log *slog.Logger) *readiness {
	r := &readiness{now: cfg.Now, mode: modeUpstream, log: log, redis: cfg.Redis, breaker: cfg.Breaker, draining: cfg.Draining, version: cfg.Version}
	if r.now == nil {
		r.now = time.Now
	}
	if cfg.Demo {
		r.mode = modeDemo
	}
	r.probe = func(context.Context) error { return errors.New("no upstream configured") }
	if cfg.Upstream != nil {
		r.probe = cfg.Upstream.Probe
	}
	return r
}

// state returns the upstream's state: the last probe's while younger than
// ReadinessTTL, else a new probe's (shared with whoever asks meanwhile).
func (r *readiness) state(ctx context.Context) upstreamState {
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	if last != nil && r.now().Sub(last.CheckedAt) < ReadinessTTL {
		return *last
	}
	// The probe runs to its end even when this caller goes away (a
	// kubelet's probe gives up after its timeout): its result then
	// answers the next caller.
	s, _, err := r.flight.Do(context.WithoutCancel(ctx), struct{}{}, r.check)
	if err != nil { // a panic of the probe
		return upstreamState{Reason: restclient.ReasonUnreachable, CheckedAt: r.now()}
	}
	return s
}

// check probes the upstream once, keeps the result and logs a change.
func (r *readiness) check(ctx context.Context) (upstreamState, error) {
	ctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
	defer cancel()
	err := r.probe(ctx)
	s := upstreamState{CheckedAt: r.now().UTC()}
	if err != nil {
		s.Reason = restclient.ProbeReason(err)
	}
	r.mu.Lock()
	prev := r.last
	r.last = &s
	r.mu.Unlock()
	switch {
	case prev != nil && prev.Reason == s.Reason:
	case s.Reason == "":
		r.log.InfoContext(ctx, "upstream ready: a Sure server answers", "mode", r.mode)
	default:
		r.log.WarnContext(ctx, "upstream check failed: requests that need it answer UPSTREAM_UNAVAILABLE until it is back; readiness is unaffected", "mode", r.mode, "reason", s.Reason)
	}
	return s, nil
}

// ServeHTTP answers /readyz: 200 {"status":"ready","mode":…} while the
// process takes requests, 503 {"status":"shutting_down",…} once it drains.
// With ?verbose (any value) it adds, without changing the status:
// "upstream", what the last probe found (the reason, restclient's Reason
// values, when the upstream is not a Sure server that answers; never its
// address); "circuit", the upstream breaker's state; "redis", Redis's state
// ("up", or "down" with a reason).
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	answer := struct {
		Status   string                    `json:"status"`
		Mode     string                    `json:"mode"`
		Version  string                    `json:"version,omitempty"`
		Upstream *upstreamState            `json:"upstream,omitempty"`
		Circuit  *restclient.BreakerStatus `json:"circuit,omitempty"`
		Redis    *redisstate.Status        `json:"redis,omitempty"`
	}{Status: "ready", Mode: r.mode, Version: r.version}
	status := http.StatusOK
	if r.shuttingDown() {
		answer.Status, status = "shutting_down", http.StatusServiceUnavailable
	}
	if req.URL.Query().Has("verbose") {
		s := r.state(req.Context())
		answer.Upstream = &s
		if r.breaker != nil {
			bs := r.breaker.Status()
			answer.Circuit = &bs
		}
		answer.Redis = r.redisStatus()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}

// shuttingDown reports whether the server drains.
func (r *readiness) shuttingDown() bool {
	select {
	case <-r.draining:
		return true
	default:
		return false
	}
}

// redisStatus returns Redis's state, nil without Redis.
func (r *readiness) redisStatus() *redisstate.Status {
	if r.redis == nil {
		return nil
	}
	if !r.redis.Up() {
		// Through the breaker: one ping once its cooldown ended, so
		// that an idle replica also sees Redis come back.
		_ = r.redis.Ping()
	}
	st := r.redis.Status()
	return &st
}
