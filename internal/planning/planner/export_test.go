package planner

import (
	"context"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// Children exposes the subcategory planner to the tests: keys asked for
// together, unannounced, are planned as one batch.
func (l *Planner) Children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	return l.children(ctx, p)
}

// LookAhead exposes the look-ahead of a list of roots that wants
// subcategories.
func (l *Planner) LookAhead(ctx context.Context, class string, r paging.Request) {
	l.lookAhead(ctx, class, r)
}
