package planner_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// TestUnknownKeysLeaveNothingBehind: strangers sending writes and reads
// with random keys (the upstream answers 401) must not grow any of the
// per-key state the server keeps between requests.
func TestUnknownKeysLeaveNothingBehind(t *testing.T) {
	u := newUpstream(t)
	cache := restcache.NewCache(1000, time.Hour)
	rateLimits, familySizes := &restcache.RateLimits{}, &restcache.FamilySizes{}
	accepted, checks := &restcache.AcceptedKeys{}, &restcache.KeyChecks{}
	shared := &planner.Shared{
		Accepted:    accepted,
		NewKeys:     &restcache.NewKeyCalls{},
		KeyChecks:   checks,
		Upstream:    u.client(t),
		Cache:       cache,
		Coalescer:   &restcache.Coalescer{Generations: cache.Generations()},
		Generations: cache,
		RateLimits:  rateLimits,
		FamilySizes: familySizes,
	}
	for i := range 300 {
		l := planner.New(shared, caller(fmt.Sprintf("random-key-%d", i)))
		_, err := l.CreateChat(t.Context(), restclient.CreateChatRequest{Title: "x"})
		if !restclient.IsUnauthorized(err) {
			t.Fatalf("create with an unknown key: %v, want a 401", err)
		}
		_, _ = l.Client().ListCategories(t.Context(), restclient.ListCategoriesOptions{Page: 1, PerPage: 100})
	}
	for name, n := range map[string]int{
		"rate limits":    rateLimits.Len(),
		"family sizes":   familySizes.Len(),
		"generations":    cache.Generations().Len(),
		"cached answers": cache.Len(),
		"accepted keys":  accepted.Len(),
		"key checks":     checks.Len(),
	} {
		if n != 0 {
			t.Errorf("%s kept for %d unknown keys, want none", name, n)
		}
	}
}
