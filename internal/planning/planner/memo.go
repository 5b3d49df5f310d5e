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
	// stale, when set, is told of each answer handed out that a cache
	// served stale, with the context of the field it answers.
	stale func(context.Context, restclient.Staleness)
}

func newMemo(next restclient.Fetcher) *memo { return &memo{next: next} }

// Fetch implements restclient.Fetcher.
func (m *memo) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	resp, err := m.answers.Do(ctx, key.Path, func(ctx context.Context) (*restclient.Response, error) {
		if m.next != nil {
			return m.next.Fetch(ctx, key, fetch)
		}
		return fetch(ctx)
	})
	if err == nil && resp != nil && resp.Stale != nil && m.stale != nil {
		m.stale(ctx, *resp.Stale)
	}
	return resp, err
}

// forget drops remembered answers of res, after a write made them stale.
func (m *memo) forget(res restclient.Resource) {
	m.answers.Forget(func(path string) bool { return restclient.ResourceOf(path) == res })
}
