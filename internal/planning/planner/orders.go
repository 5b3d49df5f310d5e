package planner

import (
	"strings"
	"time"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// The orders of the upstream's lists (see UPSTREAM.md), for cursors that
// name their item: the key is what each list sorts on.

// categoryOrder: by name ascending, then id. Names compare byte by byte,
// as the upstream's database does with a "C" collation; a cursor whose
// item is still listed is placed by its id whatever the collation.
var categoryOrder = paging.Order[*restclient.Category]{
	Identify: func(c *restclient.Category) paging.Anchor { return paging.Anchor{ID: c.ID, Key: c.Name} },
	Compare:  strings.Compare,
	TieByID:  true,
}

// chatOrder: newest first (created_at descending). The upstream orders
// equal times in no documented way, so ties are not broken by id.
var chatOrder = paging.Order[*restclient.ChatSummary]{
	Identify: func(c *restclient.ChatSummary) paging.Anchor {
		return paging.Anchor{ID: c.ID, Key: timeKey(c.CreatedAt)}
	},
	Compare: func(a, b string) int { return strings.Compare(b, a) },
}

// messageOrder: oldest first (created_at ascending), ties unknown.
var messageOrder = paging.Order[*restclient.Message]{
	Identify: func(m *restclient.Message) paging.Anchor {
		return paging.Anchor{ID: m.ID, Key: timeKey(m.CreatedAt)}
	},
	Compare: strings.Compare,
}

// timeKey is a time as an order key: text that sorts as the times do.
func timeKey(t time.Time) string { return restclient.TimeKey(t) }
