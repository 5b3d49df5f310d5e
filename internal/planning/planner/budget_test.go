package planner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// plannerWithBudget returns a planner of the demo key whose operations may
// make budget calls, over a fresh upstream, and a request context holding it.
func plannerWithBudget(t *testing.T, budget int) (upstream, *planner.Planner, context.Context) {
	t.Helper()
	u := newUpstream(t)
	client, err := restclient.New(u.url)
	if err != nil {
		t.Fatal(err)
	}
	l := planner.New(&planner.Shared{Upstream: client, MaxCalls: budget}, caller(restclienttest.DemoKey))
	return u, l, planner.WithPlanner(t.Context(), l)
}

// A reservation holds its calls against everything else that spends the
// budget: calls outside it are refused once only reserved calls are left,
// the reservation's own calls go through, and what it did not spend is
// free again once released. A reservation the budget cannot hold is
// refused at no call.
func TestReserve_HoldsItsCallsAgainstOthers(t *testing.T) {
	u, l, ctx := plannerWithBudget(t, 4)
	var tooExpensive *planner.TooExpensiveError

	if _, err := l.Client().ListChats(ctx, 1); err != nil { // 1 of 4 spent
		t.Fatal(err)
	}
	batch, release, err := l.Budget().Reserve(ctx, 3) // the 3 left
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Budget().Reserve(ctx, 1); !errors.As(err, &tooExpensive) {
		t.Errorf("a second reservation: %v, want TooExpensiveError", err)
	}
	if _, err := l.Client().ListChats(ctx, 2); !errors.As(err, &tooExpensive) {
		t.Errorf("a call outside the reservation: %v, want TooExpensiveError", err)
	}
	for page := 3; page <= 4; page++ { // 2 of the 3 reserved
		if _, err := l.Client().ListChats(batch, page); err != nil {
			t.Errorf("reserved call %d: %v", page, err)
		}
	}
	release()
	if _, err := l.Client().ListChats(ctx, 5); err != nil { // the one left unspent
		t.Errorf("after release: %v", err)
	}
	if _, err := l.Client().ListChats(ctx, 6); !errors.As(err, &tooExpensive) {
		t.Errorf("past the budget: %v, want TooExpensiveError", err)
	}
	if got := u.fake.Calls(); got != 4 {
		t.Errorf("upstream calls = %d, want 4", got)
	}
}

// TooExpensiveError.Spent is the calls already made, as its message (the
// GraphQL error clients read, and extensions.spent) says "the operation has
// spent N"; calls held by another field's reservation are Reserved, not
// Spent.
func TestTooExpensive_SpentIsCallsMadeNotReserved(t *testing.T) {
	u, l, ctx := plannerWithBudget(t, 4)
	if _, err := l.Client().ListChats(ctx, 1); err != nil { // 1 call made
		t.Fatal(err)
	}
	_, release, err := l.Budget().Reserve(ctx, 3) // 3 reserved, none made yet
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var tooExpensive *planner.TooExpensiveError
	for name, err := range map[string]error{
		"gate":    func() error { _, err := l.Client().ListChats(ctx, 2); return err }(),
		"reserve": func() error { _, _, err := l.Budget().Reserve(ctx, 2); return err }(),
	} {
		if !errors.As(err, &tooExpensive) {
			t.Fatalf("%s: %v, want a TooExpensiveError", name, err)
		}
		if tooExpensive.Spent != 1 || u.fake.Calls() != 1 {
			t.Errorf("%s: Spent = %d (%q), but the operation made %d call(s)", name, tooExpensive.Spent, tooExpensive.Error(), u.fake.Calls())
		}
	}
}
