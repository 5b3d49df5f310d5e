package flight_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/suregql/suregql/internal/planning/flight"
)

type outcome struct {
	v       string
	started bool
	err     error
}

func doAsync(ctx context.Context, g *flight.Group[string, string], key string, fn func(context.Context) (string, error)) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		v, started, err := g.Do(ctx, key, fn)
		ch <- outcome{v, started, err}
	}()
	return ch
}

func TestGroup_SharesOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[string, string]
		var runs atomic.Int64
		release := make(chan struct{})
		fn := func(context.Context) (string, error) {
			runs.Add(1)
			<-release
			return "answer", nil
		}
		a := doAsync(t.Context(), &g, "k", fn)
		synctest.Wait()
		b := doAsync(t.Context(), &g, "k", fn)
		other := doAsync(t.Context(), &g, "other", fn)
		synctest.Wait()
		if got := g.Waiting(); got != 3 {
			t.Errorf("Waiting() = %d, want 3", got)
		}
		close(release)
		ra, rb := <-a, <-b
		<-other
		if ra.v != "answer" || rb.v != "answer" || ra.err != nil || rb.err != nil {
			t.Errorf("got %+v and %+v, want both the shared answer", ra, rb)
		}
		if !ra.started || rb.started {
			t.Errorf("started = %v, %v; want true for the first caller only", ra.started, rb.started)
		}
		if got := runs.Load(); got != 2 {
			t.Errorf("fn ran %d times, want 2 (one per key)", got)
		}
	})
}

func TestGroup_CancelledWhenNobodyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[string, string]
		callCtx := make(chan context.Context, 1)
		fn := func(ctx context.Context) (string, error) {
			callCtx <- ctx
			<-ctx.Done()
			return "", ctx.Err()
		}
		ctxA, cancelA := context.WithCancel(t.Context())
		ctxB, cancelB := context.WithCancel(t.Context())
		a := doAsync(ctxA, &g, "k", fn)
		shared := <-callCtx
		b := doAsync(ctxB, &g, "k", fn)
		synctest.Wait()

		cancelA()
		if r := <-a; !errors.Is(r.err, context.Canceled) {
			t.Errorf("first caller got %+v, want context.Canceled", r)
		}
		synctest.Wait()
		if shared.Err() != nil {
			t.Fatal("the call was cancelled while a caller still waited for it")
		}
		cancelB()
		<-b
		synctest.Wait()
		if shared.Err() == nil {
			t.Error("the call goes on after every caller left")
		}
		// A later caller starts a new call instead of joining the dying one.
		fresh := doAsync(t.Context(), &g, "k", func(context.Context) (string, error) { return "fresh", nil })
		if r := <-fresh; r.v != "fresh" || !r.started {
			t.Errorf("later caller got %+v, want a new call", r)
		}
	})
}

func TestGroup_PanicBecomesError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g flight.Group[string, string]
		release := make(chan struct{})
		fn := func(context.Context) (string, error) {
			<-release
			panic("boom")
		}
		a := doAsync(t.Context(), &g, "k", fn)
		synctest.Wait()
		b := doAsync(t.Context(), &g, "k", fn)
		synctest.Wait()
		close(release)
		for _, r := range []outcome{<-a, <-b} {
			var pe *flight.PanicError
			if !errors.As(r.err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
				t.Errorf("got %+v, want a *PanicError with the value and a stack", r)
			}
		}
		// The group still works.
		if v, _, err := g.Do(t.Context(), "k", func(context.Context) (string, error) { return "ok", nil }); v != "ok" || err != nil {
			t.Errorf("after a panic Do = (%q, %v), want (ok, nil)", v, err)
		}
	})
}
