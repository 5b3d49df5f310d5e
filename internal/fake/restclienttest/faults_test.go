package restclienttest

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// TestFaultsByRequest: with ByRequest, which requests fail depends on the
// requests alone, not on the order they arrive in; a request sent again
// draws anew; about Rate of them fail.
func TestFaultsByRequest(t *testing.T) {
	const pages = 400
	targets := make([]string, pages)
	for i := range targets {
		targets[i] = fmt.Sprintf("/api/v1/categories?page=%d&per_page=100", i+1)
	}
	// failed sends every target (twice, the second time as a retry would)
	// in the given order and returns the targets that failed each time.
	failed := func(order []string, seed uint64) (first, second []string) {
		s := newFixed()
		s.SetRateLimit(DemoKey, 1_000_000)
		s.SetFaults(Faults{Rate: 0.2, Status: http.StatusServiceUnavailable, Seed: seed, ByRequest: true})
		for round, into := range []*[]string{&first, &second} {
			for _, target := range order {
				if rec := get(t, s, target, DemoKey); rec.Code == http.StatusServiceUnavailable {
					*into = append(*into, target)
				} else if rec.Code != http.StatusOK {
					t.Fatalf("round %d, %s: status %d, want 200 or 503", round, target, rec.Code)
				}
			}
			slices.Sort(*into)
		}
		return first, second
	}
	first, second := failed(targets, 3)
	reversed := slices.Clone(targets)
	slices.Reverse(reversed)
	rfirst, rsecond := failed(reversed, 3)
	if !slices.Equal(first, rfirst) || !slices.Equal(second, rsecond) {
		t.Errorf("the failures depend on the order of arrival: %v then %v in order, %v then %v reversed", first, second, rfirst, rsecond)
	}
	for _, n := range []int{len(first), len(second)} {
		if n < pages/10 || n > pages*3/10 {
			t.Errorf("%d of %d requests failed, want about 20 %%", n, pages)
		}
	}
	if slices.Equal(first, second) {
		t.Error("a request sent again fails exactly as before: retries would never help")
	}
	if other, _ := failed(targets, 4); slices.Equal(first, other) {
		t.Error("another seed fails the same requests")
	}
}
