package facade_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// tickingClock returns a clock for the fake upstream that moves one second
// at each reading (each request), so that chats created one after another
// have distinct creation times; frozen returns the same time always, as
// chats created within one second do.
func tickingClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// chatWalk is one client's walk through chats: the ids it was shown, in
// the order shown, and the upstream calls of each page.
type chatWalk struct {
	ids   []string
	calls []int
}

func (w chatWalk) totalCalls() int {
	n := 0
	for _, c := range w.calls {
		n += c
	}
	return n
}

// walkChats pages through chats with windows of size, forward
// (first/after) or backward (last/before, each page put before what was
// shown), calling between after each page but the last.
func walkChats(t *testing.T, e *env, key string, size int, forward bool, between func()) chatWalk {
	t.Helper()
	var w chatWalk
	vars := map[string]any{"first": size}
	if !forward {
		vars = map[string]any{"last": size}
	}
	for page := 0; page < 100; page++ {
		var out struct{ Chats chatConn }
		r := e.ok(key, chatsPage, vars, &out)
		w.calls = append(w.calls, r.calls)
		ids := make([]string, len(out.Chats.Nodes))
		for i, n := range out.Chats.Nodes {
			ids[i] = n.ID
		}
		pi := out.Chats.PageInfo
		if forward {
			w.ids = append(w.ids, ids...)
			if !pi.HasNextPage {
				return w
			}
			vars = map[string]any{"first": size, "after": *pi.EndCursor}
		} else {
			w.ids = append(ids, w.ids...)
			if !pi.HasPreviousPage {
				return w
			}
			vars = map[string]any{"last": size, "before": *pi.StartCursor}
		}
		between()
	}
	t.Fatal("the walk did not end in 100 pages")
	return w
}

func chatIDs(chats []restclienttest.Chat) []string {
	ids := make([]string, len(chats))
	for i, c := range chats {
		ids[i] = c.ID
	}
	return ids
}

// The done-when: a client pages through chats (newest first) while
// another client of the same key creates a chat between its pages. No chat
// is shown twice, none that existed at the start is missed, each is where
// it belongs (new chats at the head: after no cursor of a forward walk,
// and reached at the end of a backward one), and the walk costs the calls
// of the same walk on an unchanging list plus at most one per creation.
func TestChats_WalkWhileAnotherClientCreatesChats(t *testing.T) {
	t.Parallel()
	const start = 45 // three pages of 20 upstream
	for _, tc := range []struct {
		name    string
		size    int
		forward bool
		step    time.Duration // between the creation times of created chats
	}{
		{"first 20 after", 20, true, time.Second},
		{"first 7 after", 7, true, time.Second},
		{"last 20 before", 20, false, time.Second},
		{"last 7 before", 7, false, time.Second},
		// Created in the same second: their order among themselves is
		// the upstream's, which cursors find by id.
		{"first 20 after, same second", 20, true, 0},
		{"last 7 before, same second", 7, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := restclienttest.DemoKey
			setup := func() *env {
				e := newEnv(t)
				e.upstream.SetClock(tickingClock(tc.step))
				createChats(t, e, key, start)
				return e
			}

			quiet := setup()
			today := walkChats(t, quiet, key, tc.size, tc.forward, func() {})
			if want := chatIDs(quiet.upstream.Chats(key)); !slices.Equal(today.ids, want) {
				t.Fatalf("walk of an unchanging list showed %d chats, want the %d listed in order", len(today.ids), len(want))
			}

			e := setup()
			before := chatIDs(e.upstream.Chats(key))
			created := 0
			walk := walkChats(t, e, key, tc.size, tc.forward, func() {
				created++
				createChats(t, e, key, start+created)
			})
			after := chatIDs(e.upstream.Chats(key))

			seen := map[string]bool{}
			for _, id := range walk.ids {
				if seen[id] {
					t.Errorf("chat %s shown twice", id)
				}
				seen[id] = true
			}
			// Forward, every created chat is above the cursor: the walk is
			// the list at the start. Backward, it ends at the head, where
			// the created chats are: the walk is the list at the end.
			want := before
			if !tc.forward {
				want = after
			}
			if !slices.Equal(walk.ids, want) {
				t.Errorf("walk showed %d chats %v, want %d: %v", len(walk.ids), walk.ids, len(want), want)
			}
			for _, id := range before {
				if !seen[id] {
					t.Errorf("chat %s, listed at the start, was never shown", id)
				}
			}

			// Pages a backward walk adds to reach the created chats cost what
			// a page does at most: the two upstream pages a window spans.
			extraPages := max(len(walk.calls)-len(today.calls), 0)
			if most := today.totalCalls() + created + 2*extraPages; walk.totalCalls() > most {
				t.Errorf("walk with %d creations cost %d calls %v; an unchanging walk costs %d %v; want at most %d",
					created, walk.totalCalls(), walk.calls, today.totalCalls(), today.calls, most)
			}
			t.Logf("%s: unchanging walk %d calls %v; with %d creations %d calls %v", tc.name,
				today.totalCalls(), today.calls, created, walk.totalCalls(), walk.calls)
		})
	}
}
