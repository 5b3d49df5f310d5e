package live

import (
	"testing"
	"time"

	"github.com/suregql/suregql/restclient"
)

// The schedule README's "Subscriptions" table states, for a key without
// limit and for a cloud key of 100 calls an hour.
func TestSchedule(t *testing.T) {
	unlimited := &restclient.RateLimit{Unlimited: true, Limit: -1, Remaining: -1}
	cloud := &restclient.RateLimit{Limit: 100, Remaining: 90}
	tests := []struct {
		name      string
		expecting bool
		unchanged int
		rl        *restclient.RateLimit
		want      time.Duration
	}{
		{"expected, unlimited, first", true, 0, unlimited, time.Second},
		{"expected, unlimited, backed off", true, 2, unlimited, 4 * time.Second},
		{"expected, unlimited, capped", true, 5, unlimited, 5 * time.Second},
		{"expected, 100/h, first", true, 0, cloud, 2 * time.Second},
		{"expected, 100/h, backed off", true, 4, cloud, 32 * time.Second},
		{"expected, 100/h, capped at a quarter of the limit an hour", true, 10, cloud, 144 * time.Second},
		{"expected, no reading yet: as 100/h", true, 10, nil, 144 * time.Second},
		{"quiet, unlimited", false, 0, unlimited, 30 * time.Second},
		{"quiet, 100/h", false, 0, cloud, 10 * time.Minute},
	}
	for _, tc := range tests {
		if got := schedule(tc.expecting, tc.unchanged, tc.rl); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A limited key keeps calls for page views: a quarter of its limit as its
// window begins, less as its reset nears, never under a twentieth; at or under
// it, no poll until the window resets; an unlimited key, or one above it,
// is polled.
func TestReserve(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		remaining int
		resetIn   time.Duration
		keep      bool
	}{
		{"26 of 100 left, the hour just begun", 26, time.Hour, false},
		{"25 of 100 left, the hour just begun: a quarter kept", 25, time.Hour, true},
		{"13 of 100 left, half the hour to go", 13, 30 * time.Minute, false},
		{"12 of 100 left, half the hour to go: an eighth kept", 12, 30 * time.Minute, true},
		{"6 of 100 left, 6 minutes to go", 6, 6 * time.Minute, false},
		{"5 of 100 left, 6 minutes to go: never under a twentieth", 5, 6 * time.Minute, true},
	} {
		wait, keep := reserve(&restclient.RateLimit{Limit: 100, Remaining: tc.remaining, ResetAt: now.Add(tc.resetIn)}, now)
		if keep != tc.keep || (keep && wait != tc.resetIn) {
			t.Errorf("%s: kept %v for %v, want %v (until the reset)", tc.name, keep, wait, tc.keep)
		}
	}
	if _, keep := reserve(&restclient.RateLimit{Unlimited: true, Limit: -1, Remaining: -1}, now); keep {
		t.Error("unlimited: kept, want a poll")
	}
	if _, keep := reserve(nil, now); keep {
		t.Error("no reading: kept, want a poll (its answer tells)")
	}
}

// What makes a chat or an import expected to change.
func TestExpecting(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	chat := func(role string, age time.Duration) State {
		return State{Chat: &restclient.Chat{Messages: []restclient.Message{{Role: role, UpdatedAt: now.Add(-age)}}}}
	}
	terminal, notTerminal := true, false
	tests := []struct {
		name    string
		st      State
		changed bool
		want    bool
	}{
		{"the user's message, a second old", chat("user", time.Second), false, true},
		{"the user's message, 3 minutes old", chat("user", 3*time.Minute), false, false},
		{"a reply that just changed", chat("assistant", time.Second), true, true},
		{"a reply unchanged since the last poll", chat("assistant", 2*time.Second), false, false},
		{"an empty chat", State{Chat: &restclient.Chat{}}, false, false},
		{"an import importing", State{Import: &restclient.Import{Status: "importing", StatusDetail: &restclient.ImportStatusDetail{Terminal: &notTerminal}}}, false, true},
		{"an import complete", State{Import: &restclient.Import{Status: "complete", StatusDetail: &restclient.ImportStatusDetail{Terminal: &terminal}}}, false, false},
		{"an import failed, before statusDetail", State{Import: &restclient.Import{Status: "failed"}}, false, false},
	}
	for _, tc := range tests {
		if got := expecting(tc.st, tc.changed, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
