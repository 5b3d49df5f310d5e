package paging_test

import (
	"testing"

	"github.com/suregql/suregql/internal/planning/paging"
)

// BenchmarkSlice measures answering a 100-item window of a 5,000-item list
// held in memory (a family read), cursors included.
func BenchmarkSlice(b *testing.B) {
	all := make([]int, 5000)
	for i := range all {
		all[i] = i
	}
	const list = "categories?classification=&roots_only=false&parent_id="
	first := 100
	after := paging.EncodeCursor(list, 2499)
	b.ReportAllocs()
	for b.Loop() {
		req, err := paging.Parse(list, paging.Args{First: &first, After: &after}, 25)
		if err != nil {
			b.Fatal(err)
		}
		res, err := paging.Slice(req, all, paging.Order[int]{})
		if err != nil {
			b.Fatal(err)
		}
		_ = res.Cursors()
	}
}
