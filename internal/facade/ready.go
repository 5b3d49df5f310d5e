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

// Readiness: /readyz answers whether the upstream is a Sure server that
// answers, checked with restclient's Probe, which spends no caller's quota.
const (
	// ReadinessTTL is how long a probe's result answers /readyz: a probe
	// every few seconds at most, however many replicas' probes and load
	// balancers ask.
	ReadinessTTL = 5 * time.Second
	// ReadinessTimeout bounds one probe; a kubelet's readiness probe must
	// wait longer (deploy/deployment.yaml's timeoutSeconds).
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
	r := &readiness{now: cfg.Now, mode: modeUpstream, log: log, redis: cfg.Redis, version: cfg.Version}
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
		r.log.WarnContext(ctx, "upstream unavailable: /readyz answers 503", "mode", r.mode, "reason", s.Reason)
	}
	return s, nil
}

// ServeHTTP answers /readyz: 200 {"status":"ready",…} when the upstream
// is a Sure server that answers, else 503 {"status":"unavailable",…} with
// the reason (restclient's Reason values), never the upstream's address.
// With Redis, "redis" tells its state ("up", or "down" with a reason); a
// replica without Redis still answers every request, so it stays ready.
func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s := r.state(req.Context())
	answer := struct {
		Status   string             `json:"status"`
		Upstream upstreamState      `json:"upstream"`
		Mode     string             `json:"mode"`
		Redis    *redisstate.Status `json:"redis,omitempty"`
		Version  string             `json:"version,omitempty"`
	}{Status: "ready", Upstream: s, Mode: r.mode, Version: r.version}
	if r.redis != nil {
		if !r.redis.Up() {
			// Through the breaker: one ping once its cooldown ended, so
			// that an idle replica also sees Redis come back.
			_ = r.redis.Ping()
		}
		st := r.redis.Status()
		answer.Redis = &st
	}
	status := http.StatusOK
	if s.Reason != "" {
		answer.Status, status = "unavailable", http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
}
