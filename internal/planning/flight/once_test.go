package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestOnce_RunsOncePerKeyForEveryCaller(t *testing.T) {
	var o Once[string, int]
	var runs atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 20)
	for i := range got {
		wg.Go(func() {
			v, err := o.Do(context.Background(), "page-1", func(context.Context) (int, error) {
				runs.Add(1)
				<-release
				return 42, nil
			})
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("fn ran %d times for one key, want 1", n)
	}
	for i, v := range got {
		if v != 42 {
			t.Fatalf("caller %d got %d, want the shared 42", i, v)
		}
	}
	// Remembered: a later caller does not run fn again.
	v, err := o.Do(context.Background(), "page-1", func(context.Context) (int, error) { return 0, errors.New("ran again") })
	if v != 42 || err != nil {
		t.Fatalf("later caller got (%d, %v), want the remembered 42", v, err)
	}
}

func TestOnce_ErrorsAreRememberedUnlessRetryable(t *testing.T) {
	boom := errors.New("boom")
	for _, retry := range []bool{false, true} {
		o := Once[int, int]{RetryErrors: retry}
		_, err := o.Do(context.Background(), 1, func(context.Context) (int, error) { return 0, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("retry=%v: first call got %v, want boom", retry, err)
		}
		v, err := o.Do(context.Background(), 1, func(context.Context) (int, error) { return 7, nil })
		if retry && (v != 7 || err != nil) {
			t.Fatalf("RetryErrors: second call got (%d, %v), want a new run's 7", v, err)
		}
		if !retry && !errors.Is(err, boom) {
			t.Fatalf("remembered error: second call got (%d, %v), want boom again", v, err)
		}
	}
}

func TestOnce_PanicBecomesAnErrorForEveryCaller(t *testing.T) {
	var o Once[string, int]
	_, err := o.Do(context.Background(), "k", func(context.Context) (int, error) { panic("bad page") })
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "bad page" {
		t.Fatalf("got %v, want a *PanicError carrying the panic value", err)
	}
	if _, ok, err := o.Done("k"); !ok || !errors.As(err, &pe) {
		t.Fatalf("Done after a panic: ok=%v err=%v, want the same PanicError", ok, err)
	}
}

func TestOnce_DoneAndWaitNeverStartACall(t *testing.T) {
	var o Once[string, int]
	if _, ok, _ := o.Done("k"); ok {
		t.Fatal("Done reported a result for a key never asked for")
	}
	if _, ok, _ := o.Wait(context.Background(), "k"); ok {
		t.Fatal("Wait reported a result for a key never asked for")
	}
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = o.Do(context.Background(), "k", func(context.Context) (int, error) {
			close(started)
			<-release
			return 3, nil
		})
	}()
	<-started
	if _, ok, _ := o.Done("k"); ok {
		t.Fatal("Done reported a result while the call still runs")
	}
	close(release)
	if v, ok, err := o.Wait(context.Background(), "k"); !ok || v != 3 || err != nil {
		t.Fatalf("Wait = (%d, %v, %v), want the running call's (3, nil, true)", v, err, ok)
	}
}

func TestOnce_ForgetMakesTheNextCallRunAgain(t *testing.T) {
	var o Once[string, int]
	n := 0
	fn := func(context.Context) (int, error) { n++; return n, nil }
	_, _ = o.Do(context.Background(), "chats?page=1", fn)
	_, _ = o.Do(context.Background(), "categories?page=1", fn)
	o.Forget(func(k string) bool { return k == "chats?page=1" })
	if v, _ := o.Do(context.Background(), "chats?page=1", fn); v != 3 {
		t.Fatalf("after Forget the call answered %d, want a new run (3)", v)
	}
	if v, _ := o.Do(context.Background(), "categories?page=1", fn); v != 2 {
		t.Fatalf("a key Forget did not select answered %d, want its remembered 2", v)
	}
}

func TestOnce_WaiterWhoseContextEndsReturnsAtOnce(t *testing.T) {
	var o Once[string, int]
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go func() {
		_, _ = o.Do(context.Background(), "k", func(context.Context) (int, error) {
			close(started)
			<-release
			return 1, nil
		})
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Do(ctx, "k", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestOnce_OfferRemembersOnlyWhenNothingStarted(t *testing.T) {
	var o Once[string, int]
	if !o.Offer("family", 45) {
		t.Fatal("Offer on a fresh key = false, want true")
	}
	v, err := o.Do(context.Background(), "family", func(context.Context) (int, error) { return 0, errors.New("ran") })
	if v != 45 || err != nil {
		t.Fatalf("Do after Offer = (%d, %v), want the offered 45 without a run", v, err)
	}
	if o.Offer("family", 7) {
		t.Fatal("Offer over a remembered result = true, want false")
	}
	if v, _ := o.Do(context.Background(), "family", nil); v != 45 {
		t.Fatalf("after a refused Offer Do = %d, want 45", v)
	}
}
