package restclient

import (
	"net/http"
	"testing"
)

// BenchmarkClient_FirstDecode measures one typed call answered by a
// Response nobody decoded yet (a fresh upstream answer): the decoding of a
// page of 25 categories, and the checks that it is Sure's.
func BenchmarkClient_FirstDecode(b *testing.B) {
	c, err := New("http://sure.test")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(sharedPage)
	c = c.WithAPIKey(testKey)
	opts := ListCategoriesOptions{Page: 1, PerPage: 25}
	b.ReportAllocs()
	for b.Loop() {
		resp := &Response{Status: http.StatusOK, Body: body}
		if _, err := c.WithFetcher(sharingFetcher(resp)).ListCategories(b.Context(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
