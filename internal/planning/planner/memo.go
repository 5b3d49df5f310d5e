package planner

import (
	"context"

	"github.com/suregql/suregql/internal/planning/flight"
	"github.com/suregql/suregql/restclient"
)

// memo makes one GraphQL operation send each distinct GET at most once:
// aliases, repeated fields and resolvers that need the same page share the
// first answer (or error). It lives and dies with the operation, so it never
// serves anything stale to a later one.
type memo struct {
	next    restclient.Fetcher // nil: send directly
	answers flight.Once[string, *restclient.Response]
}

func newMemo(next restclient.Fetcher) *memo { return &memo{next: next} }

// Fetch implements restclient.Fetcher.
func (m *memo) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	return m.answers.Do(ctx, key.Path, func(ctx context.Context) (*restclient.Response, error) {
		if m.next != nil {
			return m.next.Fetch(ctx, key, fetch)
		}
		return fetch(ctx)
	})
}

// forget drops remembered answers of res, after a write made them stale.
func (m *memo) forget(res restclient.Resource) {
	m.answers.Forget(func(path string) bool { return restclient.ResourceOf(path) == res })
}
