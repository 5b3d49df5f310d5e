package paging_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/planning/paging"
)

// keyOf is the sort key of item v in the test lists: its value, with a
// fixed width so that keys sort as text like values do.
func keyOf(v int) string { return fmt.Sprintf("%06d", v) }

// ascending is the order of a list sorted by value, like categories by name
// (ties broken by id); descending sorts newest first, like chats (ties in
// no known order).
var (
	ascending = paging.Order[int]{
		Identify: func(v int) paging.Anchor { return paging.Anchor{ID: "id" + strconv.Itoa(v), Key: keyOf(v)} },
		Compare:  strings.Compare,
		TieByID:  true,
	}
	descending = paging.Order[int]{
		Identify: func(v int) paging.Anchor { return paging.Anchor{ID: "id" + strconv.Itoa(v), Key: keyOf(v)} },
		Compare:  func(a, b string) int { return strings.Compare(b, a) },
	}
)

// tens returns the values 10*from .. 10*(to-1): gaps between them leave room
// for insertions anywhere.
func tens(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, 10*i)
	}
	return out
}

// changingList is a fake upstream whose list changes between requests, kept
// in its order.
type changingList struct {
	*fakeUpstream
	desc bool
}

func newChangingList(values []int, serverPer int, desc bool) *changingList {
	l := &changingList{fakeUpstream: newFake(0, serverPer), desc: desc}
	l.items = slices.Clone(values)
	l.sort()
	return l
}

func (l *changingList) sort() {
	slices.Sort(l.items)
	if l.desc {
		slices.Reverse(l.items)
	}
}

func (l *changingList) insert(values ...int) {
	l.items = append(l.items, values...)
	l.sort()
}

func (l *changingList) remove(values ...int) {
	l.items = slices.DeleteFunc(l.items, func(v int) bool { return slices.Contains(values, v) })
}

func (l *changingList) source(o paging.Order[int]) paging.Source[int] {
	src := l.fakeUpstream.source(l.serverPer)
	src.Order = o
	return src
}

// firstPageHeld reports whether the first page Load asked for holds offset
// off of the list as it is now.
func (l *changingList) firstPageHeld(off int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == 0 {
		return false
	}
	c := l.calls[0]
	size := l.serverPer
	if size == 0 {
		size = c.perPage
		if size < 1 || size > 100 {
			size = 25
		}
	}
	page := min(max(c.page, 1), max(1, (len(l.items)+size-1)/size))
	return off >= (page-1)*size && off < page*size
}

func (l *changingList) resetCalls() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = nil
}

// load answers args on l, failing the test on an error.
func (l *changingList) load(t *testing.T, o paging.Order[int], args paging.Args) paging.Result[int] {
	t.Helper()
	res, err := l.try(t, o, args)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return res
}

func (l *changingList) try(t *testing.T, o paging.Order[int], args paging.Args) (paging.Result[int], error) {
	t.Helper()
	r := mustParse(t, anchorList, args, 20)
	return paging.Load(t.Context(), r, l.source(o))
}

const anchorList = "chats"

// cursorAt returns the cursor of the item at index i of a window.
func cursorAt(t *testing.T, res paging.Result[int], i int) string {
	t.Helper()
	cursors := res.Cursors()
	if i < 0 {
		i += len(cursors)
	}
	if i < 0 || i >= len(cursors) {
		t.Fatalf("window of %d items has no item %d", len(cursors), i)
	}
	return cursors[i]
}

// between returns n values strictly between lo and hi (exclusive), none a
// multiple of ten.
func between(lo, hi, n int) []int {
	var out []int
	for v := lo + 1; v < hi && len(out) < n; v++ {
		if v%10 != 0 {
			out = append(out, v)
		}
	}
	return out
}

func without(values []int, drop ...int) []int {
	return slices.DeleteFunc(slices.Clone(values), func(v int) bool { return slices.Contains(drop, v) })
}

// TestLoad_AfterACursorWhileTheListChanges pages first/after through a
// list sorted ascending (like categories by name), 20 a page, while it
// changes between the two pages: the second page holds exactly the items
// after the cursor's item in today's list (none repeated, none that existed
// skipped, new ones where they belong), at the calls said.
func TestLoad_AfterACursorWhileTheListChanges(t *testing.T) {
	base := tens(0, 100) // 0, 10, ..., 990; the cursor names 190 (offset 19)
	tests := []struct {
		name      string
		change    func(l *changingList)
		want      []int
		wantCalls int
	}{
		{name: "no change", change: func(*changingList) {},
			want: tens(20, 40), wantCalls: 1},
		{name: "one inserted before its item", change: func(l *changingList) { l.insert(5) },
			want: tens(20, 40), wantCalls: 2}, // page 2 shows the item moved to 20; page 3 holds offset 40
		{name: "three inserted before its item", change: func(l *changingList) { l.insert(5, 15, 125) },
			want: tens(20, 40), wantCalls: 2},
		{name: "one inserted right after its item", change: func(l *changingList) { l.insert(195) },
			want: append([]int{195}, tens(20, 39)...), wantCalls: 2}, // page 1 shows the item still at 19
		{name: "its item deleted", change: func(l *changingList) { l.remove(190) },
			want: tens(20, 40), wantCalls: 2}, // placed by its key: 200 is now at 19
		{name: "an item before it deleted", change: func(l *changingList) { l.remove(50) },
			want: tens(20, 40), wantCalls: 2},
		{name: "an item after it deleted", change: func(l *changingList) { l.remove(250) },
			want: without(tens(20, 41), 250), wantCalls: 2},
		{name: "one inserted before, one after deleted: same length", change: func(l *changingList) { l.insert(5); l.remove(250) },
			want: without(tens(20, 41), 250), wantCalls: 2},
		{name: "thirty inserted before its item", change: func(l *changingList) { l.insert(between(0, 190, 30)...) },
			want: tens(20, 40), wantCalls: 3}, // page 2, page 3 where the length says it is, page 4 for the rest
		{name: "the list emptied", change: func(l *changingList) { l.remove(base...) },
			want: nil, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newChangingList(base, 20, false)
			first := l.load(t, ascending, paging.Args{First: new(20)})
			after := cursorAt(t, first, -1)
			tt.change(l)
			l.resetCalls()
			res := l.load(t, ascending, paging.Args{First: new(20), After: &after})
			if !slices.Equal(res.Items, tt.want) {
				t.Errorf("items = %v, want %v", res.Items, tt.want)
			}
			if calls := l.callCount(); calls != tt.wantCalls {
				t.Errorf("%d calls %v, want %d", calls, l.sortedCalls(), tt.wantCalls)
			}
			// Page info and total are today's list's, whatever the cursor held.
			if res.Total != len(l.items) || res.HasNextPage() != (res.End < len(l.items)) {
				t.Errorf("window %+v of a list of %d", res.Window, len(l.items))
			}
			if len(tt.want) > 0 && l.items[res.Start] != tt.want[0] {
				t.Errorf("window starts at offset %d (%d), want the offset of %d", res.Start, l.items[res.Start], tt.want[0])
			}
		})
	}
}

// TestLoad_BeforeACursorWhileTheListChanges pages last/before on a list
// newest first (like chats), 20 a page: the window before the start cursor
// of the second page, after the list changed.
func TestLoad_BeforeACursorWhileTheListChanges(t *testing.T) {
	// Newest first: 990, 980, ...; the cursor names 790 (offset 20).
	base := tens(0, 100)
	// newestFirst returns tens(from, to) newest first.
	newestFirst := func(from, to int) []int {
		v := tens(from, to)
		slices.Reverse(v)
		return v
	}
	tests := []struct {
		name      string
		change    func(l *changingList)
		want      []int
		wantCalls int
	}{
		{name: "no change", change: func(*changingList) {},
			want: newestFirst(80, 100), wantCalls: 1},
		{name: "one created at the head", change: func(l *changingList) { l.insert(1000) },
			want: newestFirst(80, 100), wantCalls: 2}, // page 1, then page 2 where the length says the item is
		{name: "three created at the head", change: func(l *changingList) { l.insert(1000, 1001, 1002) },
			want: newestFirst(80, 100), wantCalls: 2},
		{name: "its item deleted", change: func(l *changingList) { l.remove(790) },
			want: newestFirst(80, 100), wantCalls: 2},
		{name: "an item before it deleted", change: func(l *changingList) { l.remove(900) },
			want: without(newestFirst(80, 100), 900), wantCalls: 1}, // page 1 holds the item, now at 19
		{name: "an item after it deleted", change: func(l *changingList) { l.remove(500) },
			want: newestFirst(80, 100), wantCalls: 2},
		{name: "one created between its item and the window", change: func(l *changingList) { l.insert(795) },
			want: append(newestFirst(80, 99), 795), wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newChangingList(base, 20, true)
			first := l.load(t, descending, paging.Args{First: new(20)})
			end := cursorAt(t, first, -1)
			second := l.load(t, descending, paging.Args{First: new(20), After: &end})
			before := cursorAt(t, second, 0)
			tt.change(l)
			l.resetCalls()
			res := l.load(t, descending, paging.Args{Last: new(20), Before: &before})
			if !slices.Equal(res.Items, tt.want) {
				t.Errorf("items = %v, want %v", res.Items, tt.want)
			}
			if calls := l.callCount(); calls != tt.wantCalls {
				t.Errorf("%d calls %v, want %d", calls, l.sortedCalls(), tt.wantCalls)
			}
			if res.Total != len(l.items) || res.HasPreviousPage() != (res.Start > 0) {
				t.Errorf("window %+v of a list of %d", res.Window, len(l.items))
			}
		})
	}
}

// TestLoad_NewestFirstWalkWhileChatsAreCreated is the walk on a
// list newest first: first/after page by page while a new item is created
// at the head before each page. Every item of the start is seen exactly
// once, and each page costs today's call plus one for the creation it
// noticed.
func TestLoad_NewestFirstWalkWhileChatsAreCreated(t *testing.T) {
	l := newChangingList(tens(0, 70), 20, true)
	start := slices.Clone(l.items)
	var seen []int
	args := paging.Args{First: new(20)}
	for page := 0; ; page++ {
		l.resetCalls()
		res := l.load(t, descending, args)
		wantCalls := 1
		if page > 0 && res.Start < res.Total {
			wantCalls = 2
		}
		if calls := l.callCount(); calls > wantCalls {
			t.Errorf("page %d: %d calls %v, want at most %d", page, calls, l.sortedCalls(), wantCalls)
		}
		seen = append(seen, res.Items...)
		if !res.HasNextPage() {
			break
		}
		args.After = new(cursorAt(t, res, -1))
		l.insert(1000 + page)
	}
	if !slices.Equal(seen, start) {
		t.Errorf("walk saw %v, want each item of the start once, in order: %v", seen, start)
	}
}

// TestLoad_CursorThatCannotBePlaced: when neither the item nor its place
// can be found within the pages allowed, Load says so (ErrStaleCursor)
// rather than answer a window it guessed.
func TestLoad_CursorThatCannotBePlaced(t *testing.T) {
	t.Run("moved too far", func(t *testing.T) {
		// 100 inserted before the item and 100 deleted after it: the length
		// is the same, and every page read shows items before it.
		base := tens(0, 200)
		l := newChangingList(base, 20, false)
		first := l.load(t, ascending, paging.Args{First: new(20)})
		after := cursorAt(t, first, -1)
		l.insert(between(0, 190, 100)...)
		l.remove(tens(20, 120)...)
		l.resetCalls()
		_, err := l.try(t, ascending, paging.Args{First: new(20), After: &after})
		var stale *paging.StaleCursorError
		if !errors.As(err, &stale) || !errors.Is(err, paging.ErrStaleCursor) || stale.Arg != "after" {
			t.Fatalf("Load = %v, want a *StaleCursorError for after", err)
		}
		if calls := l.callCount(); calls != 3 {
			t.Errorf("%d calls %v, want 3 (the window's page, then two to look for the item)", calls, l.sortedCalls())
		}
	})
	t.Run("gone among items of its own key", func(t *testing.T) {
		// Keys are the value's tens: ten items share each key, in an
		// order the list does not tell.
		coarse := paging.Order[int]{
			Identify: func(v int) paging.Anchor { return paging.Anchor{ID: "id" + strconv.Itoa(v), Key: keyOf(v / 10)} },
			Compare:  strings.Compare,
		}
		l := newChangingList(span(0, 100), 20, false)
		first := l.load(t, coarse, paging.Args{First: new(15)})
		after := cursorAt(t, first, -1) // 14, among 10..19
		l.remove(14)
		_, err := l.try(t, coarse, paging.Args{First: new(20), After: &after})
		if !errors.Is(err, paging.ErrStaleCursor) {
			t.Fatalf("Load = %v, want ErrStaleCursor", err)
		}
	})
	t.Run("the budget refuses the extra round", func(t *testing.T) {
		l := newChangingList(tens(0, 100), 20, false)
		first := l.load(t, ascending, paging.Args{First: new(20)})
		after := cursorAt(t, first, -1)
		l.insert(5)
		l.resetCalls()
		errBudget := errors.New("over budget")
		rounds := 0
		src := l.source(ascending)
		src.Reserve = func(ctx context.Context, _ int) (context.Context, func(), error) {
			if rounds++; rounds > 1 {
				return ctx, nil, errBudget
			}
			return ctx, func() {}, nil
		}
		_, err := paging.Load(t.Context(), mustParse(t, anchorList, paging.Args{First: new(20), After: &after}, 20), src)
		if !errors.Is(err, errBudget) {
			t.Fatalf("Load = %v, want the budget's error", err)
		}
		if calls := l.callCount(); calls != 1 {
			t.Errorf("%d calls, want 1: the refused round is not sent", calls)
		}
	})
}

// TestLoad_ClientChosenPagesWhileTheListChanges: on a list whose page size
// the client chooses (categories), a plain walk costs what it did, and a
// change costs one call more only when the page read does not hold the
// moved window.
func TestLoad_ClientChosenPagesWhileTheListChanges(t *testing.T) {
	for _, tt := range []struct {
		name      string
		change    func(l *changingList)
		wantCalls int
	}{
		{"no change", func(*changingList) {}, 1},
		// The page of 38 (offsets 38..75) still holds the moved window.
		{"one inserted before its item", func(l *changingList) { l.insert(5) }, 1},
		{"three inserted before its item", func(l *changingList) { l.insert(5, 15, 25) }, 2},
		// The page of 38 that holds the window holds the item's offset too:
		// the item after it there is the first after the gone one.
		{"its item deleted", func(l *changingList) { l.remove(440) }, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newChangingList(tens(0, 200), 0, false)
			first := l.load(t, ascending, paging.Args{First: new(45)})
			after := cursorAt(t, first, -1) // 440
			tt.change(l)
			l.resetCalls()
			res := l.load(t, ascending, paging.Args{First: new(30), After: &after})
			if want := tens(45, 75); !slices.Equal(res.Items, want) {
				t.Errorf("items = %v, want %v", res.Items, want)
			}
			if calls := l.callCount(); calls != tt.wantCalls {
				t.Errorf("%d calls %v, want %d", calls, l.sortedCalls(), tt.wantCalls)
			}
		})
	}
}

// TestLoad_EditedLengthInACursor: the length a c3 cursor carries only
// tells whether the list may have changed. Edited, it may cost a call to
// find the item, never change the window, totalCount or hasNextPage.
func TestLoad_EditedLengthInACursor(t *testing.T) {
	l := newChangingList(tens(0, 100), 20, false)
	first := l.load(t, ascending, paging.Args{First: new(20)})
	genuine, err := paging.DecodeCursor(anchorList, cursorAt(t, first, -1))
	if err != nil || !genuine.Anchored {
		t.Fatalf("the window's cursor decodes to %+v, %v; want an anchored position", genuine, err)
	}
	for _, total := range []int{genuine.Offset + 1, 21, 99, 101, 5000} {
		edited := paging.EncodeAnchored(anchorList, genuine.Offset, total, genuine.Item)
		res := l.load(t, ascending, paging.Args{First: new(20), After: &edited})
		if !slices.Equal(res.Items, tens(20, 40)) || res.Total != 100 || !res.HasNextPage() {
			t.Errorf("cursor claiming %d items: %v, window %+v; want offsets 20..39 of 100", total, res.Items, res.Window)
		}
	}
}

// TestSlice_Anchored: a list held in memory finds the cursor's item by id,
// or its place by key when it is gone.
func TestSlice_Anchored(t *testing.T) {
	base := tens(0, 30)
	first, err := paging.Slice(mustParse(t, anchorList, paging.Args{First: new(10)}, 20), base, ascending)
	if err != nil {
		t.Fatal(err)
	}
	after, before := cursorAt(t, first, -1), cursorAt(t, first, 0) // 90, 0
	for _, tt := range []struct {
		name string
		list []int
		args paging.Args
		want []int
	}{
		{"unchanged", base, paging.Args{First: new(5), After: &after}, tens(10, 15)},
		{"inserted before", append([]int{1, 2, 3}, base...), paging.Args{First: new(5), After: &after}, tens(10, 15)},
		{"its item gone", without(base, 90), paging.Args{First: new(5), After: &after}, tens(10, 15)},
		{"inserted after it", append(slices.Clone(base[:10]), append([]int{95}, base[10:]...)...), paging.Args{First: new(3), After: &after}, []int{95, 100, 110}},
		{"before its item, some inserted", append([]int{-2, -1}, base...), paging.Args{Last: new(5), Before: &before}, []int{-2, -1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := paging.Slice(mustParse(t, anchorList, tt.args, 20), tt.list, ascending)
			if err != nil {
				t.Fatalf("Slice: %v", err)
			}
			if !slices.Equal(res.Items, tt.want) || res.Total != len(tt.list) {
				t.Errorf("Slice = %v (window %+v), want %v of %d", res.Items, res.Window, tt.want, len(tt.list))
			}
		})
	}
}

// TestLoad_ItemAmongEqualKeysIsFoundByID: items of equal keys in no known
// order (chats created in the same second) do not place a cursor, but its
// item, still listed, is found by id on the page where it now is.
func TestLoad_ItemAmongEqualKeysIsFoundByID(t *testing.T) {
	coarse := paging.Order[int]{
		Identify: func(v int) paging.Anchor { return paging.Anchor{ID: "id" + strconv.Itoa(v), Key: keyOf(v / 10)} },
		Compare:  strings.Compare,
	}
	l := newChangingList(span(0, 100), 20, false)
	first := l.load(t, coarse, paging.Args{First: new(20)})
	end := cursorAt(t, first, -1)
	second := l.load(t, coarse, paging.Args{First: new(20), After: &end})
	before := cursorAt(t, second, 0) // 20, among 20..29
	l.insert(-1)
	l.resetCalls()
	res := l.load(t, coarse, paging.Args{Last: new(20), Before: &before})
	if want := span(0, 20); !slices.Equal(res.Items, want) {
		t.Errorf("items = %v, want %v", res.Items, want)
	}
	if calls := l.callCount(); calls != 2 {
		t.Errorf("%d calls %v, want 2 (page 1, then page 2 where the item now is)", calls, l.sortedCalls())
	}
}

// FuzzAnchoredWindow changes a list (insertions and deletions anywhere)
// after a cursor was made, then answers the window after or before it. The
// answer is exactly the items after (or before) the cursor's item in
// today's list, with today's length, or a *StaleCursorError; never another
// window. Calls stay bounded.
func FuzzAnchoredWindow(f *testing.F) {
	f.Add(uint8(100), uint8(1), uint8(19), uint8(20), true, []byte{1, 5})
	f.Add(uint8(100), uint8(0), uint8(44), uint8(30), true, []byte{0, 44, 1, 3, 1, 90})
	f.Add(uint8(70), uint8(2), uint8(20), uint8(20), false, []byte{1, 0, 1, 0, 0, 30})
	f.Add(uint8(5), uint8(1), uint8(4), uint8(3), false, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, n, policy, at, size uint8, after bool, changes []byte) {
		if n == 0 || len(changes) > 64 {
			return
		}
		fixed := []int{0, 20, 50}[int(policy)%3]
		l := newChangingList(tens(0, int(n)), fixed, false)
		idx := int(at) % len(l.items)
		anchorValue := l.items[idx]
		cursor := paging.EncodeAnchored(anchorList, idx, len(l.items), ascending.Identify(anchorValue))
		// Each change is two bytes: insert a new value near the index the
		// second names (odd first byte), or delete the item there.
		next := 1
		for i := 0; i+1 < len(changes); i += 2 {
			pos := int(changes[i+1])
			if changes[i]%2 == 1 || len(l.items) == 0 {
				v := 10*pos + next%9 + 1 // never a multiple of ten, so never an old value
				next++
				if !slices.Contains(l.items, v) {
					l.insert(v)
				}
				continue
			}
			l.remove(l.items[pos%len(l.items)])
		}
		k := int(size) % (paging.MaxPageSize + 1)
		args := paging.Args{First: &k, After: &cursor}
		if !after {
			args = paging.Args{Last: &k, Before: &cursor}
		}
		l.resetCalls()
		res, err := l.try(t, ascending, args)
		if err != nil {
			if !errors.Is(err, paging.ErrStaleCursor) {
				t.Fatalf("Load: %v", err)
			}
			return
		}
		var want []int
		if after {
			for _, v := range l.items {
				if v > anchorValue && len(want) < k {
					want = append(want, v)
				}
			}
		} else {
			for _, v := range l.items {
				if v < anchorValue {
					want = append(want, v)
				}
			}
			want = want[max(len(want)-k, 0):]
		}
		// The one window Load trusts without seeing the item: the length
		// unchanged and no item read against it. Insertions and deletions
		// that balance, on pages not read, escape it (a documented limit).
		trusted := len(l.items) == int(n) && slices.Index(l.items, anchorValue) != idx && !l.firstPageHeld(idx)
		if res.Total != len(l.items) || (!trusted && !slices.Equal(res.Items, want)) {
			t.Fatalf("anchor %d at %d, after=%t, k=%d, list %v: got %v (window %+v), want %v of %d",
				anchorValue, idx, after, k, l.items, res.Items, res.Window, want, len(l.items))
		}
		pageSize := fixed
		if pageSize == 0 {
			pageSize = paging.MaxPageSize
		}
		if calls, most := l.callCount(), 3+2+(k+pageSize-1)/pageSize; calls > most {
			t.Fatalf("%d calls %v, want at most %d", calls, l.sortedCalls(), most)
		}
	})
}
