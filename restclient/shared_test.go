package restclient

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// sharedPage is one upstream answer of 25 categories, about what the
// family's first page of a small family weighs.
var sharedPage = func() string {
	cats := make([]string, 25)
	for i := range cats {
		cats[i] = categoryJSON
	}
	return `{"categories":[` + strings.Join(cats, ",") + `],"pagination":{"page":1,"per_page":25,"total_count":25,"total_pages":1}}`
}()

// sharingFetcher answers every GET with one Response, as the cache, the
// coalescer and the per-operation memo do for callers that share a call.
func sharingFetcher(resp *Response) Fetcher {
	return fetcherFunc(func(context.Context, RequestKey, func(context.Context) (*Response, error)) (*Response, error) {
		return resp, nil
	})
}

func TestClient_SharedResponseIsDecodedOnce(t *testing.T) {
	resp := &Response{Status: http.StatusOK, Body: []byte(sharedPage)}
	c := newUpstream(t, refuse(t)).client(t).WithFetcher(sharingFetcher(resp))
	opts := ListCategoriesOptions{Page: 1, PerPage: 25}

	// Two callers at the same moment (coalesced callers), then a third
	// later (a cache hit): one decode, the same value for all.
	var (
		wg    sync.WaitGroup
		pages [3]*CategoryPage
		errs  [3]error
	)
	for i := range 2 {
		wg.Go(func() { pages[i], errs[i] = c.ListCategories(t.Context(), opts) })
	}
	wg.Wait()
	pages[2], errs[2] = c.ListCategories(t.Context(), opts)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: ListCategories error: %v", i, err)
		}
	}
	if pages[0] != pages[1] || pages[1] != pages[2] {
		t.Errorf("callers of one Response got pages %p, %p, %p, want one decoded page shared", pages[0], pages[1], pages[2])
	}
	if n := len(pages[0].Categories); n != 25 || !reflect.DeepEqual(pages[0].Categories[0], wantCategory(t)) {
		t.Errorf("decoded %d categories, first %+v; want 25 of the fixture", n, pages[0].Categories[0])
	}
	// Each later hit costs no decoding: a decode of this page allocates
	// hundreds of times (one per string and time of 25 categories).
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := c.ListCategories(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > maxAllocsPerSharedHit {
		t.Errorf("a shared hit allocates %.0f times, want at most %d (no decoding)", allocs, maxAllocsPerSharedHit)
	}
}

// maxAllocsPerSharedHit bounds the allocations of a typed call answered by
// a Response already decoded: building the query and the request key only.
const maxAllocsPerSharedHit = 16

func TestClient_SharedResponseDecodedPerType(t *testing.T) {
	// One Response read as several Go types (never done by the facade,
	// whose paths name one endpoint each) gets one value, or one error,
	// per type: a category that also carries an import's "data" member is
	// both, and no page of chats.
	body := strings.TrimSuffix(categoryJSON, "}") + `,"data":{"id":"` + importID + `"}}`
	resp := &Response{Status: http.StatusOK, Body: []byte(body)}
	c := newUpstream(t, refuse(t)).client(t).WithFetcher(sharingFetcher(resp))
	cat, err := c.GetCategory(t.Context(), catID)
	if err != nil {
		t.Fatalf("GetCategory error: %v", err)
	}
	imp, err := Imports.Show(t.Context(), c, importID)
	if err != nil {
		t.Fatalf("GetImport error: %v", err)
	}
	if cat.ID != catID || imp.ID != importID {
		t.Errorf("GetCategory id %q, GetImport id %q; want %q and %q", cat.ID, imp.ID, catID, importID)
	}
	if _, err := c.ListChats(t.Context(), 1); !isNotSure(err) {
		t.Errorf("ListChats error = %v, want a not_sure *UnavailableError", err)
	}
	again, err := c.GetCategory(t.Context(), catID)
	if err != nil || again != cat {
		t.Errorf("second GetCategory = (%p, %v), want the first decoded value %p", again, err, cat)
	}
}

func TestClient_SharedResponseUndecodable(t *testing.T) {
	resp := &Response{Status: http.StatusOK, Body: []byte(`<html>not JSON</html>`)}
	c := newUpstream(t, refuse(t)).client(t).WithFetcher(sharingFetcher(resp))
	for i := range 2 {
		_, err := c.ListChats(t.Context(), 1)
		var ue *UnavailableError
		if !errors.As(err, &ue) || !ue.NotSure || ue.Op != "GET /chats?page=1" {
			t.Errorf("call %d: error = %#v, want an *UnavailableError (NotSure) of GET /chats?page=1", i, err)
		}
	}
}

// BenchmarkClient_SharedHit measures one typed call answered by a
// Response that other callers share (a cache hit, a coalesced caller):
// with -benchmem, its allocations per call.
func BenchmarkClient_SharedHit(b *testing.B) {
	resp := &Response{Status: http.StatusOK, Body: []byte(sharedPage)}
	c, err := New("http://sure.test")
	if err != nil {
		b.Fatal(err)
	}
	c = c.WithAPIKey(testKey).WithFetcher(sharingFetcher(resp))
	opts := ListCategoriesOptions{Page: 1, PerPage: 25}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ListCategories(b.Context(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
