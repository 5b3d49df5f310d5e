package resource

// Accounts are the family's accounts (GET /accounts since v0.6.0, the show
// GET /accounts/{id} since v0.6.7), name order, under "accounts" with a
// pagy block; per_page above 100 is 100 (Sure's base controller, v0.7.1;
// 25 before). A balance moves when its account syncs, a job Sure runs
// after a write or on a schedule, never by the write itself: accounts are
// moving, as chats are.
var Accounts = &Spec{
	Name: "accounts", Kind: "account",
	List: "accounts", Show: "accounts/{id}",
	Envelope:  Envelope{Items: "accounts", Block: "pagination"},
	Paging:    Paging{Style: Pagy, PerPage: 25, MaxPerPage: 100, Clamps: true},
	Order:     Order{By: "name"},
	Fresh:     Freshness{List: Moving, Show: Moving},
	ShowSince: "v0.6.7",
}
