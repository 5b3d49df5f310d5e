package paging_test

import (
	"slices"
	"testing"

	"github.com/suregql/suregql/internal/planning/paging"
)

// FuzzConnectionArgs feeds arbitrary connection arguments (numbers, and
// cursors as raw text or as offsets) to Parse, then answers what it accepts
// from lists of any length with each page-size policy. Parse never panics
// and refuses only with argument errors; an accepted request is answered
// exactly as the reference arithmetic says, with page info from the list
// itself, at no more than two rounds of calls.
func FuzzConnectionArgs(f *testing.F) {
	const list = "chats"
	f.Add(int64(10), false, int64(0), false, "", "", int64(-1), int64(-1), uint16(45), uint8(0))
	f.Add(int64(0), true, int64(5), true, "", "", int64(3), int64(-1), uint16(3), uint8(1))
	f.Add(int64(100), true, int64(0), false, "", "", int64(44), int64(90), uint16(200), uint8(2))
	f.Add(int64(101), true, int64(-1), true, "junk", "", int64(-1), int64(-1), uint16(7), uint8(0))
	f.Add(int64(1<<40), true, int64(0), false, "", "Yzk6eDox", int64(-1), int64(1<<31), uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, first int64, hasFirst bool, last int64, hasLast bool, rawAfter, rawBefore string, after, before int64, n uint16, policy uint8) {
		var args paging.Args
		if hasFirst {
			args.First = new(int(first))
		}
		if hasLast {
			args.Last = new(int(last))
		}
		// A cursor is either raw text (anything a client may send) or the
		// cursor of an offset, possibly past the list's end.
		cursor := func(raw string, offset int64) *string {
			switch {
			case raw != "":
				return &raw
			case offset >= 0 && offset < 1<<30:
				return new(paging.EncodeCursor(list, int(offset)))
			}
			return nil
		}
		args.After, args.Before = cursor(rawAfter, after), cursor(rawBefore, before)

		r, err := paging.Parse(list, args, 20)
		if err != nil {
			if !paging.IsArgumentError(err) {
				t.Fatalf("Parse error %v is not an argument error", err)
			}
			return
		}
		size := int(n % 300)
		fixed := []int{0, 20, 50}[int(policy)%3]
		up := newFake(size, fixed)
		res, err := paging.Load(t.Context(), r, up.source(fixed))
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		// The reference needs offsets: the cursors Parse accepted are ours.
		var w window
		w.first, w.last = args.First, args.Last
		if args.After != nil {
			p, _ := paging.DecodeCursor(list, *args.After)
			w.after = &p.Offset
		}
		if args.Before != nil {
			p, _ := paging.DecodeCursor(list, *args.Before)
			w.before = &p.Offset
		}
		want := reference(size, w, 20)
		if !slices.Equal(res.Items, span(want.Start, want.End)) || res.Total != size {
			t.Fatalf("n=%d %v: got items %v (window %+v), want window %+v", size, w, res.Items, res.Window, want)
		}
		if res.HasNextPage() != (want.End < size) || res.HasPreviousPage() != (want.Start > 0) {
			t.Fatalf("n=%d %v: page info next=%t prev=%t, want next=%t prev=%t", size, w, res.HasNextPage(), res.HasPreviousPage(), want.End < size, want.Start > 0)
		}
		// A probe or first page, then the pages of the window.
		pageSize := fixed
		if pageSize == 0 {
			pageSize = paging.MaxPageSize
		}
		k := want.End - want.Start
		if calls, most := up.callCount(), 2+(k+pageSize-1)/pageSize; calls > most {
			t.Fatalf("n=%d %v: %d calls %v, want at most %d", size, w, calls, up.sortedCalls(), most)
		}
	})
}
