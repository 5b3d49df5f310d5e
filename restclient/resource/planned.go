package resource

// The resources whose planning is tuned by hand (the planner's category
// tree, a chat's messages): described here for what generic code reads of
// them (paths, paging, freshness), planned by the planner's hooks.

// Categories are the family's categories (GET /categories, v0.6.0), paged by
// pagy, name order. Their planning is the planner's category tree.
var Categories = &Spec{
	Name: "categories", Kind: "category",
	List: "categories", Show: "categories/{id}",
	Envelope: Envelope{Items: "categories", Block: "pagination"},
	Paging:   Paging{Style: Pagy, PerPage: 25, MaxPerPage: 100},
	Order:    Order{By: "name", TieByID: true},
	Embeds:   []Embed{{Field: "parent", Kind: "category", Fields: []string{"id", "name"}}},
	Fresh:    Freshness{List: Slow, Show: Slow},
}

// Chats are the user's chats (GET /chats, v0.6.0), fixed pages of 20, newest
// first; a show carries a page of its messages. Their planning is the
// planner's chats and messages.
var Chats = &Spec{
	Name: "chats", Kind: "chat",
	List: "chats", Show: "chats/{id}",
	Envelope: Envelope{Items: "chats", Block: "pagination"},
	Paging:   Paging{Style: FixedPages, PerPage: 20},
	Order:    Order{By: "created_at", Desc: true},
	Fresh:    Freshness{List: Moving, Show: Moving},
}
