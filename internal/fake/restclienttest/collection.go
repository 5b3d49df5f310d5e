package restclienttest

import (
	"net/http"

	"github.com/suregql/suregql/restclient/resource"
)

// collection serves a resource that package resource describes, its list
// and its show, from the fake's records of it. What Sure does alike for
// every resource is read from the description: the routes and the versions
// that added them, the filters (a value compared exactly; a filter of
// several values matches any), pagy's page and per_page with their bounds,
// fixed pages or none, and the envelope. What is the resource's own (its
// records, their JSON, what a filter compares) is the collection's.
type collection[R any] struct {
	spec *resource.Spec
	// records returns the caller's records, in the list's order.
	records func(c *call) []R
	// byID returns the caller's record with the show's id, as sent.
	byID func(c *call, id string) (R, bool)
	// field returns r's value that the filter named arg compares.
	field func(r R, arg string) string
	// listJSON and showJSON render a record as the list and the show do.
	listJSON, showJSON func(c *call, r R) any
	// notFound is the show's answer for an id the caller has no record
	// of: made for each request (the server adds its headers to it).
	notFound func() response
}

// served is a collection with its record type erased, for the router.
type served interface {
	route(v Version, name, method string, segs []string) (endpoint, bool)
}

// route resolves GET /<name> and GET /<name>/{id}, where the version
// played has them.
func (col *collection[R]) route(v Version, name, method string, segs []string) (endpoint, bool) {
	spec := col.spec
	if method != http.MethodGet || name != string(spec.Name) {
		return endpoint{}, false
	}
	switch {
	case len(segs) == 0 && spec.List != "" && v.has(spec.ListSince):
		return endpoint{serve: col.list}, true
	case len(segs) == 1 && spec.Show != "" && v.has(spec.ShowSince):
		return endpoint{serve: col.show, id: segs[0]}, true
	}
	return endpoint{}, false
}

// list is the index action: the records its filters keep, one page of
// them (pagy's overflow answers the last), in the resource's envelope.
func (col *collection[R]) list(c *call) response {
	var matched []R
	for _, r := range col.records(c) {
		if col.passes(c, r) {
			matched = append(matched, r)
		}
	}
	spec := col.spec
	perPage := max(len(matched), 1)
	switch spec.Paging.Style {
	case resource.Pagy:
		perPage = pagyPerPage(c.query["per_page"], spec.Paging)
	case resource.FixedPages:
		perPage = spec.Paging.PerPage
	}
	page, from, to := paginate(len(matched), pageParam(c.query["page"]), perPage)
	items := make([]any, 0, to-from)
	for _, r := range matched[from:to] {
		items = append(items, col.listJSON(c, r))
	}
	env := spec.Envelope
	if env.Items == "" {
		return jsonResponse(http.StatusOK, items)
	}
	body := map[string]any{env.Items: items}
	switch {
	case env.Block == "":
	case env.Shape == resource.MetaBlock:
		body[env.Block] = page.meta()
	default:
		body[env.Block] = page
	}
	return jsonResponse(http.StatusOK, body)
}

// passes reports whether r passes every filter the request sends (a
// blank value filters nothing).
func (col *collection[R]) passes(c *call, r R) bool {
	for _, f := range col.spec.Filters {
		if !f.Many {
			if c.query.present(f.Param) && col.field(r, f.Arg) != c.query[f.Param] {
				return false
			}
			continue
		}
		if vals := c.req.URL.Query()[f.Param]; len(vals) > 0 && !anyEquals(vals, col.field(r, f.Arg)) {
			return false
		}
	}
	return true
}

// anyEquals reports whether v is one of vals.
func anyEquals(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// show is the show action: the record, in the resource's envelope, or
// the resource's 404.
func (col *collection[R]) show(c *call) response {
	r, ok := col.byID(c, c.id)
	if !ok {
		return col.notFound()
	}
	if name := col.spec.Envelope.Object; name != "" {
		return jsonResponse(http.StatusOK, map[string]any{name: col.showJSON(c, r)})
	}
	return jsonResponse(http.StatusOK, col.showJSON(c, r))
}

// pagyPerPage reads per_page as a pagy controller does: 1..MaxPerPage as
// is; above it MaxPerPage where the controller clamps, else (and for 0
// or junk) the default.
func pagyPerPage(raw string, p resource.Paging) int {
	n := rubyToI(raw)
	switch {
	case n >= 1 && n <= p.MaxPerPage:
		return n
	case n > p.MaxPerPage && p.Clamps:
		return p.MaxPerPage
	}
	return p.PerPage
}
