package facade

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Callers that come while a probe runs wait for it: one probe, however
// many ask. A caller that gives up does not stop the probe, whose result
// answers the next caller.
func TestReadiness_OneProbeInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var probes atomic.Int64
		release := make(chan struct{})
		var clock atomic.Int64 // seconds from the epoch
		r := newReadiness(Config{Now: func() time.Time { return time.Unix(clock.Load(), 0) }}, slog.New(slog.DiscardHandler))
		r.probe = func(ctx context.Context) error {
			probes.Add(1)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}

		// The first caller gives up at once, as a kubelet's probe past its
		// timeout does.
		gone, cancel := context.WithCancel(t.Context())
		cancel()
		var wg sync.WaitGroup
		states := make([]upstreamState, 10)
		for i := range states {
			ctx := t.Context()
			if i == 0 {
				ctx = gone
			}
			wg.Go(func() { states[i] = r.state(ctx) })
		}
		synctest.Wait() // every caller waits for the one probe
		if n := probes.Load(); n != 1 {
			t.Fatalf("%d probes in flight, want 1", n)
		}
		close(release)
		wg.Wait()
		for i, s := range states {
			if s.Reason != "" || s != states[0] {
				t.Errorf("caller %d got %+v, want the probe's ready state %+v", i, s, states[0])
			}
		}
		if s := r.state(t.Context()); s != states[0] || probes.Load() != 1 {
			t.Errorf("next caller: %+v after %d probes, want the cached state", s, probes.Load())
		}
		clock.Add(int64(ReadinessTTL / time.Second))
		if r.state(t.Context()); probes.Load() != 2 {
			t.Errorf("%d probes after the TTL, want 2", probes.Load())
		}
	})
}
