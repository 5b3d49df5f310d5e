package planner

import (
	"context"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// CurrentRateLimit returns the key's rate limit: the last one seen for this
// key when its window has not ended yet, or else the headers of the
// cheapest call the upstream has (one category, one row).
func (l *Planner) CurrentRateLimit(ctx context.Context) (*restclient.RateLimit, error) {
	if rl := l.RateLimit(); rl != nil && (rl.ResetAt.IsZero() || time.Now().Before(rl.ResetAt)) {
		return rl, nil
	}
	// Revalidated: a kept answer carries no new headers.
	if _, err := l.client.ListCategories(restcache.WithRevalidate(ctx), restclient.ListCategoriesOptions{Page: 1, PerPage: 1}); err != nil {
		return nil, err
	}
	if rl := l.RateLimit(); rl != nil {
		return rl, nil
	}
	return nil, errNoRateLimit
}
