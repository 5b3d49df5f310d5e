package restcache_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// readAs reads path for apiKey through c, answering body (or failing
// with 503 when body is ""), and returns the answer and whether the
// upstream was asked.
func readAs(ctx context.Context, t *testing.T, c *restcache.Cache, apiKey, path, body string) (*restclient.Response, bool) {
	t.Helper()
	called := false
	resp, err := through(c).Fetch(ctx, reqKey{APIKey: apiKey, Path: path}, func(context.Context) (*restclient.Response, error) {
		called = true
		if body == "" {
			return nil, &restclient.UnavailableError{Status: http.StatusServiceUnavailable}
		}
		return response(body), nil
	})
	if err != nil {
		t.Fatalf("GET %s as %s: %v", path, apiKey, err)
	}
	return resp, called
}

// Another tenant walking many pages cannot push out what a key holds
// (issue 25, row 8): past the bound, the key holding the most gives up
// its own oldest answers first. The key's answers still serve fresh, and
// stale once past their window while the upstream fails; the walker's
// newest page is held; the bound holds.
func TestCache_OneKeysWalkKeepsOtherKeysAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 1 << 20
		every := func(string, *restclient.Response) (restcache.Window, bool) {
			return restcache.Window{Short: time.Minute}, true
		}
		c := restcache.NewFreshCache(10_000, restcache.Freshness{Windows: every, StaleMax: time.Hour}).LimitBytes(bound)
		small := `{"categories":[{"id":"c1","name":"Food"}]}`
		paths := []string{"categories?page=1", "categories/c1", "chats?page=1", "chats/x1", "imports?page=1"}
		for _, p := range paths {
			readAs(t.Context(), t, c, "tenant", p, small)
		}
		page := `{"categories":[` + strings.Repeat(`{"id":"x","name":"a long enough name"},`, 1_000) + `{}]}`
		walk := func(from, n int) {
			for i := from; i < from+n; i++ {
				readAs(t.Context(), t, c, "walker", "categories?page="+strconv.Itoa(i), page)
				if c.Bytes() > bound {
					t.Fatalf("page %d: the cache holds %d bytes, over its bound of %d", i, c.Bytes(), bound)
				}
			}
		}
		walk(0, 200) // about 30 times the bound
		kept := 0
		for _, p := range paths {
			if _, called := readAs(t.Context(), t, c, "tenant", p, small); !called {
				kept++
			}
		}
		t.Logf("after the walk: the tenant's answers kept %d of %d; cache %d answers, %d bytes", kept, len(paths), c.Len(), c.Bytes())
		if kept != len(paths) {
			t.Errorf("the tenant's answers served without a call after another key's walk: %d of %d, want all", kept, len(paths))
		}
		if _, called := readAs(t.Context(), t, c, "walker", "categories?page=199", page); called {
			t.Error("the walker's newest page was not held")
		}

		// Past their window, while the upstream fails: served stale, also
		// after another walk.
		time.Sleep(10 * time.Minute)
		walk(200, 200)
		stale := 0
		for _, p := range paths {
			if resp, _ := readAs(t.Context(), t, c, "tenant", p, ""); resp.Stale != nil {
				stale++
			}
		}
		if stale != len(paths) {
			t.Errorf("the tenant's answers served stale while the upstream fails, after another key's walk: %d of %d, want all", stale, len(paths))
		}
	})
}

// An answer that makes its key the largest holder while it is the key's
// only one is held: the room is made by the next largest.
func TestCache_NewAnswerOfTheLargestHolderIsHeld(t *testing.T) {
	const bound = 64 << 10
	c := restcache.NewCache(10_000, time.Hour).LimitBytes(bound)
	small := `{"categories":[{"id":"c1","name":"` + strings.Repeat("x", 2_000) + `"}]}`
	for i := range 3 {
		readAs(t.Context(), t, c, "tenant", "categories?page="+strconv.Itoa(i), small)
	}
	large := `{"categories":[{"id":"c1","name":"` + strings.Repeat("y", 16_000) + `"}]}`
	readAs(t.Context(), t, c, "walker", "categories?page=1", large)
	if c.Bytes() > bound {
		t.Errorf("the cache holds %d bytes, over its bound of %d", c.Bytes(), bound)
	}
	if _, called := readAs(t.Context(), t, c, "walker", "categories?page=1", large); called {
		t.Error("the answer just added was given up")
	}
	if _, called := readAs(t.Context(), t, c, "tenant", "categories?page=2", small); called {
		t.Error("the tenant's newest answer was given up")
	}
	if _, called := readAs(t.Context(), t, c, "tenant", "categories?page=0", small); !called {
		t.Error("the tenant's oldest answer was kept past the bound")
	}
}
