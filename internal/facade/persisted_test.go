package facade_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// A persisted query is registered for a key the upstream accepted, by the
// one record of accepted keys, never on an answer that says nothing of
// the key. A proxy in front of Sure throttling the facade's address (a
// 429 without Sure's rate-limit headers, whatever the key) used to count
// as the key's rate-limit reading, and registered a stranger's query;
// the stranger's document is now stored nowhere, and an accepted key's
// is registered once the proxy lets its call through.
func TestPersistedQueries_AProxys429AcceptsNoKey(t *testing.T) {
	t.Parallel()
	var throttled atomic.Bool
	e := newEnv(t, withUpstreamWrapper(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if throttled.Load() {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte("Too many requests from your address"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	const later = "a-key-first-used-after-the-proxy" // valid, and unknown to the facade while throttled
	e.upstream.AddKey(later, restclienttest.DemoKey)
	throttled.Store(true)
	const stranger = `query Stranger { categories(first: 1) { totalCount } }`
	if r := persisted(t, e, "a-key-the-upstream-never-issued", stranger, true); firstCode(r) != "RATE_LIMITED" {
		t.Fatalf("the stranger's query behind the throttling proxy: %s, want RATE_LIMITED", r.raw)
	}
	const demo = `query Demo { categories(first: 1) { totalCount } }`
	if r := persisted(t, e, restclienttest.DemoKey, demo, true); firstCode(r) != "RATE_LIMITED" {
		t.Fatalf("the demo key's query behind the throttling proxy: %s, want RATE_LIMITED", r.raw)
	}
	throttled.Store(false)
	for name, q := range map[string]string{"the stranger's": stranger, "the demo key's": demo} {
		if r := persisted(t, e, later, q, false); firstCode(r) != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("%s query was registered on a proxy's 429 (%s)", name, r.raw)
		}
	}
	const accepted = `query Accepted { categories(first: 1) { totalCount } }`
	if r := persisted(t, e, later, accepted, true); firstCode(r) != nil {
		t.Fatalf("a valid key's query with the proxy gone: %s", r.raw)
	}
	if r := persisted(t, e, restclienttest.DemoKey, accepted, false); firstCode(r) == "PERSISTED_QUERY_NOT_FOUND" {
		t.Errorf("the query of a key the upstream accepted is not registered (%s)", r.raw)
	}
}
