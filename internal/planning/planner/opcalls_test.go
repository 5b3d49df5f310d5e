package planner_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// Two operations on one Planner (a batch) count their own calls: a GET the
// first sent answers the second from the memo and counts for the first
// only; the request's total is their sum; a retry counts for the
// operation that sent it; without a counter the request's total is read.
func TestOperationCalls_EachOperationCountsItsOwn(t *testing.T) {
	u := newUpstream(t)
	client, err := restclient.New(u.url, restclient.WithRetryPolicy(restclient.RetryPolicy{MaxRetries: 1}))
	if err != nil {
		t.Fatal(err)
	}
	l := planner.New(&planner.Shared{Upstream: client}, caller(restclienttest.DemoKey))
	ctx := planner.WithPlanner(t.Context(), l)
	first, second := planner.WithOperationCalls(ctx), planner.WithOperationCalls(ctx)

	if _, err := l.Client().ListChats(first, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Client().ListChats(second, 1); err != nil { // the memo's answer
		t.Fatal(err)
	}
	if _, err := l.Client().ListCategories(second, restclient.ListCategoriesOptions{Page: 1, PerPage: 10}); err != nil {
		t.Fatal(err)
	}
	u.fake.FailNext("/api/v1/categories", 1, http.StatusBadGateway, "text/html", "<html>bad gateway</html>")
	if _, err := l.Client().ListCategories(second, restclient.ListCategoriesOptions{Page: 2, PerPage: 10}); err != nil {
		t.Fatal(err) // a 502, then its retry
	}
	got := []int{planner.OperationCalls(first), planner.OperationCalls(second), planner.OperationCalls(ctx), u.fake.Calls()}
	if want := []int{1, 3, 4, 4}; !slices.Equal(got, want) {
		t.Errorf("calls of the first, the second, the request, the upstream = %v, want %v", got, want)
	}
	if n := planner.OperationCalls(t.Context()); n != 0 {
		t.Errorf("outside a request: %d calls, want 0", n)
	}
}
