package restcache_test

import (
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
)

// The calls of keys not accepted yet come out of one bucket: its burst at
// once, then its rate; a key the upstream accepts gives its call back and
// passes freely from then on, until a 401 makes it new again.
func TestNewKeyCalls(t *testing.T) {
	n := &restcache.NewKeyCalls{Rate: 2, Burst: 3}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	admitted := func(key string) bool {
		_, ok := n.Admit(keyOf(key), now)
		return ok
	}
	for i, key := range []string{"a", "b", "c"} {
		if !admitted(key) {
			t.Fatalf("call %d of the burst refused", i)
		}
	}
	wait, ok := n.Admit(keyOf("d"), now)
	if ok || wait != 500*time.Millisecond {
		t.Errorf("past the burst: admitted %t, wait %v; want refused, 500ms (2 a second)", ok, wait)
	}
	n.Accepted(keyOf("a")) // gives its call back
	if !admitted("d") {
		t.Error("after a key was accepted: its call was not given back")
	}
	for range 5 {
		if !admitted("a") {
			t.Fatal("an accepted key was refused")
		}
	}
	if admitted("e") {
		t.Error("an accepted key's calls were taken from the bucket")
	}
	now = now.Add(time.Second)
	if !admitted("e") || !admitted("f") || admitted("g") {
		t.Error("a second later: want 2 calls admitted, the third refused")
	}
	n.Forget(keyOf("a"))
	if admitted("a") {
		t.Error("a key rejected since: passed freely")
	}
	if got, want := n.RejectionsWithin(time.Minute), 3+120; got != want {
		t.Errorf("RejectionsWithin(1m) = %d, want %d", got, want)
	}
}
