package planner_test

import (
	"errors"
	"testing"

	"suregql/planner"
	"suregql/restclient"
	"suregql/restclienttest"
)

// TooExpensiveError.Spent is the calls already made, as its message (the
// GraphQL error clients read, and extensions.spent) says "the operation has
// spent N"; calls held by another field's reservation are Reserved, not
// Spent.
func TestTooExpensive_SpentIsCallsMadeNotReserved(t *testing.T) {
	u := newUpstream(t)
	client, err := restclient.New(u.url)
	if err != nil {
		t.Fatal(err)
	}
	l := planner.New(&planner.Shared{Upstream: client, MaxCalls: 4}, restclienttest.DemoKey)
	ctx := planner.WithPlanner(t.Context(), l)
	if _, err := l.Client().ListChats(ctx, 1); err != nil { // 1 call made
		t.Fatal(err)
	}
	_, release, err := l.Reserve(ctx, 3) // 3 reserved, none made yet
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var tooExpensive *planner.TooExpensiveError
	for name, err := range map[string]error{
		"gate":    func() error { _, err := l.Client().ListChats(ctx, 2); return err }(),
		"reserve": func() error { _, _, err := l.Reserve(ctx, 2); return err }(),
	} {
		if !errors.As(err, &tooExpensive) {
			t.Fatalf("%s: %v, want a TooExpensiveError", name, err)
		}
		if tooExpensive.Spent != 1 || u.fake.Calls() != 1 {
			t.Errorf("%s: Spent = %d (%q), but the operation made %d call(s)", name, tooExpensive.Spent, tooExpensive.Error(), u.fake.Calls())
		}
	}
}
