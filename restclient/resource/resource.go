// Package resource describes the REST resources of Sure's /api/v1 that the
// facade serves, each once, as data: its paths, the envelope of its
// answers, how its list is paged and filtered, its order, the objects its
// answers embed, how long an answer stays fresh and what settles it, and
// the Sure version that added it.
//
// Generic code reads the descriptions: the client's list and show
// (restclient.Collection), the cache's windows and invalidation
// (restcache), the planner's windows, lookups, budget reservations and
// node kinds, the cost model and the fake upstream's collections. Planning
// tuned by hand (the category tree, a chat's messages) hangs on the
// description of its resource as a hook of the package that plans it.
//
// The package imports nothing of the project but badinput, so that the
// client, the fake upstream and everything above them can read it.
package resource

import (
	"strings"
)

// Name is a resource's name, the first segment of its paths under
// /api/v1 ("imports"): what a request reads, and what a write makes stale.
type Name string

// Spec describes one REST resource.
type Spec struct {
	// Name is the first segment of the resource's paths.
	Name Name
	// Kind is what one of its objects is called ("import"): its node
	// kind, and the word of a "not found" error.
	Kind string
	// List is the list's path under /api/v1 ("imports"), "" when the
	// resource has none; Show is the show's, with {id} for the id
	// ("imports/{id}"), "" when it has none.
	List, Show string
	// Envelope says where an answer holds its objects and its paging.
	Envelope Envelope
	// Paging is how the list is paged.
	Paging Paging
	// Filters are the list's filters, each as the caller names it and as
	// it is sent.
	Filters []Filter
	// Order is the list's order.
	Order Order
	// Embeds are the objects of other kinds an object carries, with the
	// fields they carry: those answer at no call.
	Embeds []Embed
	// Fresh is how long an answer stays fresh.
	Fresh Freshness
	// ListSince and ShowSince are the Sure versions that added the list
	// and the show; "" for the first API (v0.6.0). A server without them
	// is told by its router's 404 (a trait of the upstream).
	ListSince, ShowSince Version
}

// Envelope is where a resource's answers hold what they carry.
type Envelope struct {
	// Items is the member of a list answer that holds the objects
	// ("data"); "" for an answer that is the array itself.
	Items string
	// Block is the member of a list answer that holds its paging block
	// ("meta"), and Shape how that block is spelled; "" for none.
	Block string
	Shape BlockShape
	// Object is the member of a show answer that holds the object
	// ("data"); "" for an answer that is the object itself.
	Object string
}

// BlockShape is how a list answer spells its paging block.
type BlockShape uint8

// The shapes of paging blocks Sure sends.
const (
	// PagyBlock: {"page","per_page","total_count","total_pages"}.
	PagyBlock BlockShape = iota
	// MetaBlock: {"current_page","next_page","prev_page","total_pages",
	// "total_count","per_page"} (the imports list).
	MetaBlock
)

// Style is how a list is paged.
type Style uint8

// The paging styles of Sure's lists.
const (
	// Pagy: page and per_page (pagy), overflow to the last page.
	Pagy Style = iota + 1
	// FixedPages: page only, at the server's page size.
	FixedPages
	// Unpaginated: the whole list in one answer, a plain array.
	Unpaginated
)

// Paging is how a list is paged.
type Paging struct {
	Style Style
	// PerPage is the page size when per_page is absent or refused
	// (Pagy), or always (FixedPages).
	PerPage int
	// MaxPerPage is the largest per_page the server honours (Pagy).
	MaxPerPage int
	// Clamps: a per_page above MaxPerPage gets MaxPerPage; else it gets
	// PerPage (Sure's two kinds of controllers). The client never sends
	// one above MaxPerPage; the fake plays it.
	Clamps bool
}

// Largest is the largest page a read of the list may ask for: 0 for an
// unpaginated list (one answer holds it all).
func (p Paging) Largest() int {
	switch p.Style {
	case Pagy:
		return p.MaxPerPage
	case FixedPages:
		return p.PerPage
	}
	return 0
}

// Filter is one filter of a list.
type Filter struct {
	// Arg is the filter's name as a caller gives it ("status").
	Arg string
	// Param is the query parameter it is sent as ("status"); a filter
	// of several values sends each as Param (e.g. "account_ids[]").
	Param string
	// Many: the filter takes several values (any of them matches).
	Many bool
	// Check refuses a value locally, before any call, with an error
	// naming Arg: one Sure would answer with a 500, or that matches
	// nothing. nil accepts any value.
	Check func(string) error
}

// Order is how a list is sorted.
type Order struct {
	// By is the field the list sorts on, as Sure sends it ("created_at").
	By string
	// Desc: greatest first.
	Desc bool
	// TieByID: equal keys are ordered by id; else in no documented way.
	TieByID bool
}

// Embed is an object of another kind that an object carries.
type Embed struct {
	// Field is the member that holds it ("account").
	Field string
	// Kind is the kind of object it is ("account").
	Kind string
	// Fields are the members it carries ("id", "name", "account_type").
	Fields []string
}

// Class is how quickly an answer of a resource changes without the
// caller's write, which sets how long it is served without a call
// (restcache's windows).
type Class uint8

// The freshness classes.
const (
	// Moving: changes by the minute (chats; a list whose objects move).
	Moving Class = iota + 1
	// Slow: changes a few times a year, by the family's writes
	// (categories).
	Slow
	// Settled: an object that changes no more once settled (a complete
	// import).
	Settled
)

// Freshness is how long the answers of a resource stay fresh.
type Freshness struct {
	// List and Show are the classes of its list and show answers.
	List, Show Class
	// Settles: an object may still change by itself until it settles
	// (an import until complete or failed); an answer holding one that
	// has not settled is never kept fresh. The test is the typed
	// description's (restclient.Collection).
	Settles bool
}

// Version names a Sure release, "v0.6.7".
type Version string

// Before reports whether v is older than w; the empty version (the first
// API, v0.6.0) is older than any other.
func (v Version) Before(w Version) bool {
	a, b := v.parts(), w.parts()
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// parts returns major, minor and patch; a pre-release tag is ignored.
func (v Version) parts() [3]int {
	var out [3]int
	s := strings.TrimPrefix(string(v), "v")
	s, _, _ = strings.Cut(s, "-")
	for i, f := range strings.SplitN(s, ".", 3) {
		n := 0
		for _, c := range f {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		out[i] = n
	}
	return out
}

// ShowPath returns the path of the show of id (already a canonical UUID).
func (s *Spec) ShowPath(id string) string { return strings.Replace(s.Show, "{id}", id, 1) }

// RouteTrait names the trait that records whether the server's router
// has the list (restcache's traits): "route.list_imports".
func (s *Spec) RouteTrait() string { return "route.list_" + string(s.Name) }

// ShowRouteTrait names the trait that records whether the server's
// router has the show: "route.show_accounts".
func (s *Spec) ShowRouteTrait() string { return "route.show_" + string(s.Name) }

// Embedded returns the embedded object of an object's member field, or
// nil.
func (s *Spec) Embedded(field string) *Embed {
	for i := range s.Embeds {
		if s.Embeds[i].Field == field {
			return &s.Embeds[i]
		}
	}
	return nil
}

// Filter returns the filter a caller names arg, or nil.
func (s *Spec) Filter(arg string) *Filter {
	for i := range s.Filters {
		if s.Filters[i].Arg == arg {
			return &s.Filters[i]
		}
	}
	return nil
}
