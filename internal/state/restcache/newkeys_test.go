package restcache_test

import (
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
)

// The calls of keys not accepted yet come out of one bucket: its burst at
// once, then its rate; a key the upstream accepts gives its call back.
// (Which keys pass without a token is AcceptedKeys', read by the planner:
// TestNewKeys_AcceptedKeysPassFreely.)
func TestNewKeyCalls(t *testing.T) {
	n := &restcache.NewKeyCalls{Rate: 2, Burst: 3}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	admitted := func() bool {
		_, ok := n.Admit(now)
		return ok
	}
	for i := range 3 {
		if !admitted() {
			t.Fatalf("call %d of the burst refused", i)
		}
	}
	wait, ok := n.Admit(now)
	if ok || wait != 500*time.Millisecond {
		t.Errorf("past the burst: admitted %t, wait %v; want refused, 500ms (2 a second)", ok, wait)
	}
	n.GiveBack() // a key was accepted
	if !admitted() {
		t.Error("after a key was accepted: its call was not given back")
	}
	if admitted() {
		t.Error("the call given back was admitted twice")
	}
	now = now.Add(time.Second)
	if first, second, third := admitted(), admitted(), admitted(); !first || !second || third {
		t.Error("a second later: want 2 calls admitted, the third refused")
	}
	for range 10 {
		n.GiveBack()
	}
	now = now.Add(time.Hour)
	for i := range 3 {
		if !admitted() {
			t.Fatalf("call %d of a full bucket refused", i)
		}
	}
	if admitted() {
		t.Error("the bucket held more than its burst")
	}
	if got, want := n.RejectionsWithin(time.Minute), 3+120; got != want {
		t.Errorf("RejectionsWithin(1m) = %d, want %d", got, want)
	}
}
