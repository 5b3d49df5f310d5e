package facade_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// cachedFacade returns the facade with its defaults over up (see
// freshFacade), with cfg changed by set.
func cachedFacade(t *testing.T, up *restclienttest.Server, set func(*facade.Config)) http.Handler {
	t.Helper()
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{
		Transport: facade.HandlerTransport{Handler: up},
	}), restclient.WithRetryPolicy(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := facade.Config{Upstream: client, DisablePlayground: true, Log: slog.New(slog.DiscardHandler)}
	set(&cfg)
	return facade.New(cfg)
}

// askAs posts query with variables to h as key and reads the answer.
func askAs(t *testing.T, h http.Handler, key, query string, vars map[string]any) freshAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	var a freshAnswer
	if rec := postBodyAs(h, key, string(body)); json.Unmarshal(rec.Body.Bytes(), &a) != nil {
		t.Fatalf("answer %d %s", rec.Code, rec.Body)
	}
	return a
}

// Issue 25, row 8: a tenant walking every page of a large family through
// a small cache does not push out what another key holds: the other key's
// views cost no call after the walk, and answer stale once past their
// window while the upstream fails.
func TestCache_TenantWalkKeepsOtherKeysAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := cachedFacade(t, up, func(c *facade.Config) { c.CacheBytes = 2 << 20 })
		views := []string{
			`{ categories(first: 100) { nodes { id name } } }`,
			`{ chats(first: 5) { nodes { id title } } }`,
			`{ imports(first: 5, status: "complete") { nodes { id status } } }`,
		}
		for _, q := range views {
			if a := askAs(t, h, restclienttest.DemoKey, q, nil); len(a.Errors) > 0 {
				t.Fatalf("%s: %v", q, a.Errors)
			}
		}
		walk := func() (pages int) {
			var after any
			for {
				a := askAs(t, h, restclienttest.LargeFamilyKey,
					`query($after: String) { categories(first: 100, after: $after) { pageInfo { endCursor hasNextPage } nodes { id name color icon } } }`,
					map[string]any{"after": after})
				var got struct {
					PageInfo struct {
						EndCursor   string
						HasNextPage bool
					}
				}
				if len(a.Errors) > 0 || json.Unmarshal(a.Data["categories"], &got) != nil {
					t.Fatalf("walk, page %d: %v", pages+1, a.Errors)
				}
				pages++
				if !got.PageInfo.HasNextPage {
					return pages
				}
				after = got.PageInfo.EndCursor
			}
		}
		pages := walk()
		calls := 0
		for _, q := range views {
			calls += askAs(t, h, restclienttest.DemoKey, q, nil).Extensions.Upstream.Calls
		}
		t.Logf("after another key's walk of %d pages through a 2 MiB cache: %d calls for %d views read before it", pages, calls, len(views))
		if calls != 0 {
			t.Errorf("the views read before another key's walk cost %d calls, want 0 (still held)", calls)
		}

		time.Sleep(10 * time.Minute) // past every window of the views
		walk()
		for _, p := range []string{"/api/v1/categories", "/api/v1/chats", "/api/v1/imports"} {
			up.FailNext(p, 1, http.StatusServiceUnavailable, "text/html", "<html>down</html>")
		}
		for _, q := range views {
			if a := askAs(t, h, restclienttest.DemoKey, q, nil); len(a.Errors) > 0 || a.Extensions.Upstream.Stale == nil {
				t.Errorf("%s while the upstream fails, after another key's walk: errors %v, stale %v; want the answer held, stale",
					q, a.Errors, a.Extensions.Upstream.Stale)
			}
		}
	})
}
