package restclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/suregql/suregql/internal/limits/badinput"
	"github.com/suregql/suregql/restclient/resource"
)

// thing is the object of the test resources below.
type thing struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// things returns a collection of things described by spec.
func things(spec *resource.Spec) *Collection[thing, thing] {
	return &Collection[thing, thing]{
		Spec:   spec,
		ID:     func(t *thing) string { return t.ID },
		ShowID: func(t *thing) string { return t.ID },
		Key:    func(t *thing) string { return t.Name },
	}
}

// A described resource is read by its description alone, whatever its
// paging style, envelope and filters: the query it sends and the answers
// it accepts follow the Spec, with no method of its own.
func TestCollection_ReadsWhatItsDescriptionSays(t *testing.T) {
	ctx := context.Background()
	tags := things(&resource.Spec{
		Name: "tags", Kind: "tag", List: "tags", Show: "tags/{id}",
		Paging:  resource.Paging{Style: resource.Unpaginated},
		Filters: []resource.Filter{{Arg: "ids", Param: "ids[]", Many: true}},
	})
	t.Run("unpaginated, a plain array, a filter of several values", func(t *testing.T) {
		u := newUpstream(t, expect(t, wantRequest{method: "GET", path: "/api/v1/tags", query: url.Values{"ids[]": {catID, parentID}}},
			http.StatusOK, `[{"id":"`+catID+`","name":"Rent"},{"id":"`+parentID+`","name":"Food"}]`))
		p, err := tags.List(ctx, u.client(t), ListOptions{Page: 3, PerPage: 50, Filters: resource.Values{"ids": {catID, parentID}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 2 || p.Items[1].Name != "Food" || p.Pagination.TotalCount != 2 || p.Pagination.TotalPages != 1 {
			t.Errorf("page = %+v, want both things, one page of 2", p)
		}
	})
	t.Run("a bare show", func(t *testing.T) {
		u := newUpstream(t, expect(t, wantRequest{method: "GET", path: "/api/v1/tags/" + catID}, http.StatusOK, `{"id":"`+catID+`","name":"Rent"}`))
		if got, err := tags.Show(ctx, u.client(t), "{"+catID+"}"); err != nil || got.Name != "Rent" {
			t.Errorf("Show = %+v, %v; want Rent", got, err)
		}
	})
	t.Run("fixed pages: page only", func(t *testing.T) {
		fixed := things(&resource.Spec{
			Name: "things", Kind: "thing", List: "things",
			Envelope: resource.Envelope{Items: "things", Block: "pagination"},
			Paging:   resource.Paging{Style: resource.FixedPages, PerPage: 20},
		})
		u := newUpstream(t, expect(t, wantRequest{method: "GET", path: "/api/v1/things", query: url.Values{"page": {"2"}}},
			http.StatusOK, `{"things":[{"id":"a","name":"x"}],"pagination":{"page":2,"per_page":20,"total_count":21,"total_pages":2}}`))
		p, err := fixed.List(ctx, u.client(t), ListOptions{Page: 2, PerPage: 100})
		if err != nil || p.Pagination.TotalCount != 21 || len(p.Items) != 1 {
			t.Errorf("List = %+v, %v; want the second page of 21", p, err)
		}
	})
	t.Run("answers that are not the description's", func(t *testing.T) {
		for _, body := range []string{
			`{"tags":[]}`,                 // an object, not the array
			`[{"name":"no id"}]`,          // an object without an id
			`null`,                        // no list
			`[{"id":"a","name":"x"}] [1]`, // data after the answer
		} {
			u := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { reply(w, http.StatusOK, body) })
			_, err := tags.List(ctx, u.client(t), ListOptions{})
			var ue *UnavailableError
			if !errors.As(err, &ue) || !ue.NotSure {
				t.Errorf("%s: err = %v, want an answer that is not Sure's", body, err)
			}
		}
	})
	t.Run("a filter value its description refuses costs no call", func(t *testing.T) {
		u := newUpstream(t, refuse(t))
		_, err := Imports.List(ctx, u.client(t), ListOptions{Filters: resource.Values{"status": {"done"}}})
		var bad *badinput.Error
		if !errors.As(err, &bad) || u.count() != 0 {
			t.Errorf("err = %v after %d calls, want a *badinput.Error and none", err, u.count())
		}
	})
}

// Every generic collection is a resource of resource.All (the cache's
// windows, the node kinds and the fake find it there), once.
func TestCollections_AreDescribed(t *testing.T) {
	seen := map[*resource.Spec]bool{}
	for _, c := range Collections {
		spec := c.Describes()
		if resource.Named(spec.Name) != spec || seen[spec] || CollectionOf(spec) != c {
			t.Errorf("%s: not in resource.All, or described twice", spec.Name)
		}
		seen[spec] = true
	}
}
