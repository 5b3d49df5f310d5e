package detach_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/edge/detach"
)

type key struct{}

// An operation's context outlives its request; what Live makes of it (or
// of a context derived from it) ends with the request, keeping the
// operation's values; Shared forgets the request.
func TestLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		req, leave := context.WithTimeout(context.WithValue(t.Context(), key{}, "v"), time.Minute)
		op := detach.Operation(req)
		derived, cancelDerived := context.WithCancel(context.WithValue(op, key{}, "w"))
		defer cancelDerived()
		plain, stopPlain := detach.Live(context.WithValue(op, key{}, "w"))
		defer stopPlain()
		merged, stopMerged := detach.Live(derived)
		defer stopMerged()
		shared, stopShared := detach.Live(detach.Shared(op))
		defer stopShared()

		for name, ctx := range map[string]context.Context{"plain": plain, "merged": merged} {
			if d, ok := ctx.Deadline(); !ok || d != time.Now().Add(time.Minute) {
				t.Errorf("%s: deadline %v %v, want the request's", name, d, ok)
			}
			if ctx.Value(key{}) != "w" {
				t.Errorf("%s: value %v, want the operation's", name, ctx.Value(key{}))
			}
		}
		leave()
		synctest.Wait()
		if op.Err() != nil {
			t.Errorf("the operation's context ended with its request: %v", op.Err())
		}
		if !errors.Is(plain.Err(), context.Canceled) || merged.Err() == nil || !errors.Is(context.Cause(merged), context.Canceled) {
			t.Errorf("after the request ended: %v, %v (%v); want both canceled", plain.Err(), merged.Err(), context.Cause(merged))
		}
		if shared.Err() != nil {
			t.Errorf("Shared's context ended with the request: %v", shared.Err())
		}
		if ctx, stop := detach.Live(t.Context()); ctx != t.Context() {
			t.Error("Live changed a context no Operation made")
			stop()
		}
	})
}
