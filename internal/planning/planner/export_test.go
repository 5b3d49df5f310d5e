package planner

import (
	"context"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// Children exposes the subcategory planner to the tests.
func (l *Planner) Children(ctx context.Context, p ParentKey) ([]*restclient.Category, error) {
	return l.children(ctx, p)
}

// ExpectChildren announces parents whose subcategories will be asked, as
// a list of roots does when it answers: the first asked plans them all.
func (l *Planner) ExpectChildren(keys ...ParentKey) { l.kids.Expect(keys...) }

// LookAhead exposes the look-ahead of a list of roots that wants
// subcategories.
func (l *Planner) LookAhead(ctx context.Context, class string, r paging.Request) {
	l.lookAhead(ctx, class, r)
}

// Client exposes the caller's upstream client (keyed, counted, memoized)
// to the tests.
func (l *Planner) Client() *restclient.Client { return l.client }
