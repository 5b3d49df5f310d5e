package paging_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/suregql/suregql/internal/limits/badinput"
	"slices"
	"sync"
	"testing"

	"github.com/suregql/suregql/internal/planning/paging"
)

// fetchCall is one page request Load sent to a fake upstream.
type fetchCall struct{ page, perPage int }

// fakeUpstream is an in-memory list served with pagy's semantics exactly:
// a page below 1 is 1, a page past the end answers the LAST page and reports
// its number, there is always at least one page, and per_page outside 1..100
// becomes 25 — unless the server imposes its own page size (chats: 20,
// messages: 50), in which case per_page is ignored. Item i of the list is i.
type fakeUpstream struct {
	items     []int
	serverPer int // page size imposed by the server, 0 when the client chooses

	mu    sync.Mutex
	calls []fetchCall
	err   error // answered to every fetch when set
}

func newFake(n, serverPer int) *fakeUpstream {
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	return &fakeUpstream{items: items, serverPer: serverPer}
}

func (f *fakeUpstream) fetch(_ context.Context, page, perPage int) (paging.Page[int], error) {
	f.mu.Lock()
	f.calls = append(f.calls, fetchCall{page, perPage})
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return paging.Page[int]{}, err
	}
	size := f.serverPer
	if size == 0 {
		size = perPage
		if size < 1 || size > 100 {
			size = 25
		}
	}
	n := len(f.items)
	pages := max(1, (n+size-1)/size)
	page = min(max(page, 1), pages)
	from := min((page-1)*size, n)
	to := min(from+size, n)
	return paging.Page[int]{Items: slices.Clone(f.items[from:to]), Page: page, PerPage: size, Total: n}, nil
}

// source returns a Source over f; fixed is the page size the client assumes
// (0 when it chooses per_page), which may differ from what f really uses.
func (f *fakeUpstream) source(fixed int) paging.Source[int] {
	return paging.Source[int]{FixedPageSize: fixed, MaxPerPage: 100, Fetch: f.fetch}
}

// sortedCalls returns the page requests made so far, in a stable order
// (Load sends the pages of one round in parallel).
func (f *fakeUpstream) sortedCalls() []fetchCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := slices.Clone(f.calls)
	slices.SortFunc(calls, func(a, b fetchCall) int {
		return cmp.Or(cmp.Compare(a.page, b.page), cmp.Compare(a.perPage, b.perPage))
	})
	return calls
}

func (f *fakeUpstream) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// span returns the items [s, e) of a reference list 0..n-1.
func span(s, e int) []int {
	out := make([]int, 0, max(e-s, 0))
	for i := s; i < e; i++ {
		out = append(out, i)
	}
	return out
}

// window describes connection arguments by offsets; cursors are built for
// list.
type window struct {
	first, last   *int
	after, before *int // offsets of the cursor items
}

func (w window) String() string {
	s := ""
	for _, f := range []struct {
		name string
		v    *int
	}{{"first", w.first}, {"last", w.last}, {"after", w.after}, {"before", w.before}} {
		if f.v != nil {
			s += fmt.Sprintf(" %s:%d", f.name, *f.v)
		}
	}
	if s == "" {
		return "(default)"
	}
	return s[1:]
}

func (w window) args(list string) paging.Args {
	a := paging.Args{First: w.first, Last: w.last}
	if w.after != nil {
		a.After = new(paging.EncodeCursor(list, *w.after))
	}
	if w.before != nil {
		a.Before = new(paging.EncodeCursor(list, *w.before))
	}
	return a
}

func mustParse(t testing.TB, list string, args paging.Args, defaultSize int) paging.Request {
	t.Helper()
	r, err := paging.Parse(list, args, defaultSize)
	if err != nil {
		t.Fatalf("Parse(%q, ...) error: %v", list, err)
	}
	return r
}

func TestParse_Errors(t *testing.T) {
	const list = "categories"
	tests := []struct {
		name    string
		args    paging.Args
		wantArg string // the ArgumentError's Arg, or "" for a cursor error
	}{
		{name: "first and last", args: paging.Args{First: new(1), Last: new(1)}, wantArg: "first"},
		{name: "negative first", args: paging.Args{First: new(-1)}, wantArg: "first"},
		{name: "negative last", args: paging.Args{Last: new(-1)}, wantArg: "last"},
		{name: "first above 100", args: paging.Args{First: new(101)}, wantArg: "first"},
		{name: "last above 100", args: paging.Args{Last: new(101)}, wantArg: "last"},
		{name: "garbage after", args: paging.Args{After: new("garbage")}},
		{name: "garbage before", args: paging.Args{Before: new("garbage")}},
		// A cursor of the old format, which also carried the list's length.
		{name: "c1 after", args: paging.Args{After: new(rawCursor(t, list, "c1", "9", "10"))}},
		{name: "after of another list", args: paging.Args{After: new(paging.EncodeCursor("chats", 1))}},
		{name: "before of another filter", args: paging.Args{Before: new(paging.EncodeCursor(list+"?roots_only=true", 1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := paging.Parse(list, tt.args, 25)
			if err == nil {
				t.Fatal("Parse error = nil, want an error")
			}
			if !paging.IsArgumentError(err) {
				t.Errorf("IsArgumentError(%v) = false, want true", err)
			}
			var ae *badinput.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Parse error = %T %v, want *badinput.Error", err, err)
			}
			if tt.wantArg == "" {
				if !errors.Is(err, paging.ErrInvalidCursor) || (ae.Arg != "after" && ae.Arg != "before") {
					t.Errorf("Parse error = %v (argument %q), want one for a cursor wrapping ErrInvalidCursor", err, ae.Arg)
				}
				return
			}
			if ae.Arg != tt.wantArg {
				t.Errorf("badinput.Error.Arg = %q, want %q", ae.Arg, tt.wantArg)
			}
		})
	}
}

func TestParse_Accepts(t *testing.T) {
	const list = "categories"
	tests := []struct {
		name  string
		args  paging.Args
		total int
		want  paging.Window
	}{
		{name: "defaults", args: paging.Args{}, total: 200, want: paging.Window{Start: 0, End: 25, Total: 200}},
		{name: "first 100", args: paging.Args{First: new(100)}, total: 200, want: paging.Window{Start: 0, End: 100, Total: 200}},
		{name: "last 100", args: paging.Args{Last: new(100)}, total: 200, want: paging.Window{Start: 100, End: 200, Total: 200}},
		{name: "first 0", args: paging.Args{First: new(0)}, total: 200, want: paging.Window{Start: 0, End: 0, Total: 200}},
		{name: "after", args: paging.Args{After: new(paging.EncodeCursor(list, 9))}, total: 200, want: paging.Window{Start: 10, End: 35, Total: 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, list, tt.args, 25)
			if r.List != list {
				t.Errorf("Request.List = %q, want %q", r.List, list)
			}
			if got := r.Clip(tt.total); got != tt.want {
				t.Errorf("Clip(%d) = %+v, want %+v", tt.total, got, tt.want)
			}
		})
	}
}

func TestRequest_EmptyAndClip(t *testing.T) {
	const list = "categories"
	tests := []struct {
		name      string
		w         window
		known     int // WithKnownTotal, or -1
		wantEmpty bool
		wantKnown bool
		wantW     paging.Window // Empty's window, when empty
		clipTotal int
		wantClip  paging.Window
	}{
		{
			name: "first 10 from start", w: window{first: new(10)}, known: -1,
			clipTotal: 5, wantClip: paging.Window{Start: 0, End: 5, Total: 5},
		},
		{
			// A cursor holds no length: whether items follow the cursor is
			// the upstream's to tell, so the window is not empty by
			// arithmetic.
			name: "after a cursor, length unknown", w: window{first: new(10), after: new(9)}, known: -1,
			wantEmpty: false, wantKnown: false,
			clipTotal: 10, wantClip: paging.Window{Start: 10, End: 10, Total: 10},
		},
		{
			name: "after a cursor, the list grew", w: window{first: new(10), after: new(9)}, known: -1,
			clipTotal: 12, wantClip: paging.Window{Start: 10, End: 12, Total: 12},
		},
		{
			name: "after the last item of a known length", w: window{first: new(10), after: new(9)}, known: 10,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 10, End: 10, Total: 10},
			clipTotal: 10, wantClip: paging.Window{Start: 10, End: 10, Total: 10},
		},
		{
			// Empty, but hasNextPage needs the length, which nothing told.
			name: "last 5 before the first item", w: window{last: new(5), before: new(0)}, known: -1,
			wantEmpty: true, wantKnown: false, wantW: paging.Window{Start: 0, End: 0},
			clipTotal: 7, wantClip: paging.Window{Start: 0, End: 0, Total: 7},
		},
		{
			name: "last 5 before the first item of a known length", w: window{last: new(5), before: new(0)}, known: 7,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 0, End: 0, Total: 7},
			clipTotal: 7, wantClip: paging.Window{Start: 0, End: 0, Total: 7},
		},
		{
			name: "first 0 without cursor", w: window{first: new(0)}, known: -1,
			wantEmpty: true, wantKnown: false, wantW: paging.Window{},
			clipTotal: 3, wantClip: paging.Window{Start: 0, End: 0, Total: 3},
		},
		{
			name: "last 0 without cursor", w: window{last: new(0)}, known: -1,
			wantEmpty: true, wantKnown: false, wantW: paging.Window{},
			clipTotal: 3, wantClip: paging.Window{Start: 3, End: 3, Total: 3},
		},
		{
			name: "last 0 of a known length", w: window{last: new(0)}, known: 3,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 3, End: 3, Total: 3},
			clipTotal: 3, wantClip: paging.Window{Start: 3, End: 3, Total: 3},
		},
		{
			name: "first 0 after a cursor", w: window{first: new(0), after: new(3)}, known: -1,
			wantEmpty: true, wantKnown: false, wantW: paging.Window{Start: 4, End: 4},
			clipTotal: 10, wantClip: paging.Window{Start: 4, End: 4, Total: 10},
		},
		{
			name: "first 0 after a cursor of a known length", w: window{first: new(0), after: new(3)}, known: 10,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 4, End: 4, Total: 10},
			clipTotal: 10, wantClip: paging.Window{Start: 4, End: 4, Total: 10},
		},
		{
			name: "last 10, length unknown", w: window{last: new(10)}, known: -1,
			clipTotal: 95, wantClip: paging.Window{Start: 85, End: 95, Total: 95},
		},
		{
			name: "last 10 of a short list", w: window{last: new(10)}, known: -1,
			clipTotal: 3, wantClip: paging.Window{Start: 0, End: 3, Total: 3},
		},
		{
			name: "last 10 with known total", w: window{last: new(10)}, known: 95,
			clipTotal: 95, wantClip: paging.Window{Start: 85, End: 95, Total: 95},
		},
		{
			name: "known empty list", w: window{first: new(10)}, known: 0,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 0, End: 0, Total: 0},
			clipTotal: 0, wantClip: paging.Window{Start: 0, End: 0, Total: 0},
		},
		{
			// The cursor was made when the list was longer (or forged): the
			// known length wins, the window sits at today's end.
			name: "after cursor past the known end", w: window{first: new(10), after: new(50)}, known: 40,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 40, End: 40, Total: 40},
			clipTotal: 40, wantClip: paging.Window{Start: 40, End: 40, Total: 40},
		},
		{
			name: "after cursor past the end, length unknown", w: window{first: new(10), after: new(50)}, known: -1,
			clipTotal: 40, wantClip: paging.Window{Start: 40, End: 40, Total: 40},
		},
		{
			name: "after and before cross", w: window{first: new(10), after: new(6), before: new(4)}, known: -1,
			wantEmpty: true, wantKnown: false, wantW: paging.Window{Start: 7, End: 7},
			clipTotal: 10, wantClip: paging.Window{Start: 7, End: 7, Total: 10},
		},
		{
			name: "after and before cross, known length", w: window{first: new(10), after: new(6), before: new(4)}, known: 10,
			wantEmpty: true, wantKnown: true, wantW: paging.Window{Start: 7, End: 7, Total: 10},
			clipTotal: 10, wantClip: paging.Window{Start: 7, End: 7, Total: 10},
		},
		{
			name: "between after and before", w: window{first: new(10), after: new(2), before: new(6)}, known: -1,
			clipTotal: 10, wantClip: paging.Window{Start: 3, End: 6, Total: 10},
		},
		{
			name: "last 2 between after and before", w: window{last: new(2), after: new(2), before: new(6)}, known: -1,
			clipTotal: 10, wantClip: paging.Window{Start: 4, End: 6, Total: 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, list, tt.w.args(list), 25)
			if tt.known >= 0 {
				r = r.WithKnownTotal(tt.known)
			}
			w, empty, known := r.Empty()
			if empty != tt.wantEmpty || known != tt.wantKnown {
				t.Errorf("Empty() empty, known = %t, %t; want %t, %t", empty, known, tt.wantEmpty, tt.wantKnown)
			}
			if tt.wantEmpty && w != tt.wantW {
				t.Errorf("Empty() window = %+v, want %+v", w, tt.wantW)
			}
			if got := r.Clip(tt.clipTotal); got != tt.wantClip {
				t.Errorf("Clip(%d) = %+v, want %+v", tt.clipTotal, got, tt.wantClip)
			}
		})
	}
}

func TestWindow_PageInfo(t *testing.T) {
	tests := []struct {
		w              paging.Window
		wantPrev, want bool
	}{
		{w: paging.Window{Start: 0, End: 0, Total: 0}},
		{w: paging.Window{Start: 0, End: 10, Total: 10}},
		{w: paging.Window{Start: 0, End: 5, Total: 10}, want: true},
		{w: paging.Window{Start: 5, End: 10, Total: 10}, wantPrev: true},
		{w: paging.Window{Start: 3, End: 5, Total: 10}, wantPrev: true, want: true},
		{w: paging.Window{Start: 10, End: 10, Total: 10}, wantPrev: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d of %d", tt.w.Start, tt.w.End, tt.w.Total), func(t *testing.T) {
			if got := tt.w.HasPreviousPage(); got != tt.wantPrev {
				t.Errorf("HasPreviousPage() = %t, want %t", got, tt.wantPrev)
			}
			if got := tt.w.HasNextPage(); got != tt.want {
				t.Errorf("HasNextPage() = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	const list = "categories"
	tests := []struct {
		name      string
		n         int // list length
		serverPer int // page size the fake server imposes, 0: client chooses
		fixed     int // FixedPageSize the client assumes
		w         window
		known     *int // WithKnownTotal
		wantStart int
		wantEnd   int
		wantCalls []fetchCall
	}{
		{
			name: "first 10 of 200", n: 200, w: window{first: new(10)},
			wantStart: 0, wantEnd: 10, wantCalls: []fetchCall{{1, 10}},
		},
		{
			name: "default size", n: 200, w: window{},
			wantStart: 0, wantEnd: 25, wantCalls: []fetchCall{{1, 25}},
		},
		{
			name: "first 30 after offset 44 is page 2 of 38", n: 200, w: window{first: new(30), after: new(44)},
			wantStart: 45, wantEnd: 75, wantCalls: []fetchCall{{2, 38}},
		},
		{
			// A cursor tells no length: page 1 of 100 first (50..99, and the
			// length), then the rest, 100..149, as page 3 of 50.
			name: "first 100 after offset 49 needs two pages", n: 200, w: window{first: new(100), after: new(49)},
			wantStart: 50, wantEnd: 150, wantCalls: []fetchCall{{1, 100}, {3, 50}},
		},
		{
			// A known length lets both pages go at once.
			name: "first 100 after offset 49 of a known 200 needs two pages", n: 200, w: window{first: new(100), after: new(49)}, known: new(200),
			wantStart: 50, wantEnd: 150, wantCalls: []fetchCall{{1, 100}, {2, 100}},
		},
		{
			name: "first 100 after offset 99 is page 2 of 100", n: 250, w: window{first: new(100), after: new(99)},
			wantStart: 100, wantEnd: 200, wantCalls: []fetchCall{{2, 100}},
		},
		{
			name: "first 10 running past the end", n: 95, w: window{first: new(10), after: new(89)},
			wantStart: 90, wantEnd: 95, wantCalls: []fetchCall{{10, 10}},
		},
		{
			// Page 1 of 100 tells the length: the rest, 100..119, is page 6
			// of 20.
			name: "first 100 after offset 49 of 120: the rest fits a page of 20", n: 120, w: window{first: new(100), after: new(49)},
			wantStart: 50, wantEnd: 120, wantCalls: []fetchCall{{1, 100}, {6, 20}},
		},
		{
			// A cursor tells no length: page 1 of 100 comes first, holds
			// 50..89 and tells the list ends there; page 2 is never asked.
			name: "first 100 after offset 49 of 90: the first page tells the length", n: 90, w: window{first: new(100), after: new(49)},
			wantStart: 50, wantEnd: 90, wantCalls: []fetchCall{{1, 100}},
		},
		{
			// With the length known (as a resolver knows it from this
			// operation's own answers), the window is 50..89, page 2 of 45.
			name: "first 100 after offset 49 of a known 90", n: 90, w: window{first: new(100), after: new(49)}, known: new(90),
			wantStart: 50, wantEnd: 90, wantCalls: []fetchCall{{2, 45}},
		},
		{
			name: "last 10 of 95 is the overflow page", n: 95, w: window{last: new(10)},
			wantStart: 85, wantEnd: 95, wantCalls: []fetchCall{{1_000_000, 100}},
		},
		{
			name: "last 10 of 250", n: 250, w: window{last: new(10)},
			wantStart: 240, wantEnd: 250, wantCalls: []fetchCall{{1_000_000, 100}},
		},
		{
			name: "last 100 of 250 refills once", n: 250, w: window{last: new(100)},
			wantStart: 150, wantEnd: 250, wantCalls: []fetchCall{{4, 50}, {1_000_000, 100}},
		},
		{
			name: "last 10 with known total", n: 95, w: window{last: new(10)}, known: new(95),
			wantStart: 85, wantEnd: 95, wantCalls: []fetchCall{{8, 12}},
		},
		{
			name: "last 10 before offset 50", n: 200, w: window{last: new(10), before: new(50)},
			wantStart: 40, wantEnd: 50, wantCalls: []fetchCall{{5, 10}},
		},
		{
			name: "last 10 before offset 5", n: 200, w: window{last: new(10), before: new(5)},
			wantStart: 0, wantEnd: 5, wantCalls: []fetchCall{{1, 5}},
		},
		{
			// Empty by arithmetic, but hasNextPage needs the current length:
			// the smallest page tells it.
			name: "last 5 before the first item", n: 200, w: window{last: new(5), before: new(0)},
			wantStart: 0, wantEnd: 0, wantCalls: []fetchCall{{1, 1}},
		},
		{
			name: "last 5 before the first item of a known length costs nothing", n: 200, w: window{last: new(5), before: new(0)}, known: new(200),
			wantStart: 0, wantEnd: 0,
		},
		{
			// The cursor does not say the list ends there (it may have
			// grown): the page that would hold the window tells the length.
			name: "after the last item", n: 200, w: window{first: new(10), after: new(199)},
			wantStart: 200, wantEnd: 200, wantCalls: []fetchCall{{21, 10}},
		},
		{
			name: "after the last item of a known length costs nothing", n: 200, w: window{first: new(10), after: new(199)}, known: new(200),
			wantStart: 200, wantEnd: 200,
		},
		{
			// The list grew past the cursor since it was made: the new items
			// follow it.
			name: "after the item that was last, the list grew", n: 12, w: window{first: new(5), after: new(9)},
			wantStart: 10, wantEnd: 12, wantCalls: []fetchCall{{3, 5}},
		},
		{
			name: "first 0 after a cursor", n: 200, w: window{first: new(0), after: new(20)},
			wantStart: 21, wantEnd: 21, wantCalls: []fetchCall{{1, 1}},
		},
		{
			name: "first 0 after a cursor of a known length costs nothing", n: 200, w: window{first: new(0), after: new(20)}, known: new(200),
			wantStart: 21, wantEnd: 21,
		},
		{
			name: "between after and before", n: 200, w: window{first: new(10), after: new(5), before: new(9)},
			wantStart: 6, wantEnd: 9, wantCalls: []fetchCall{{3, 3}},
		},
		{
			name: "first 0 learns the length with the smallest page", n: 200, w: window{first: new(0)},
			wantStart: 0, wantEnd: 0, wantCalls: []fetchCall{{1, 1}},
		},
		{
			name: "first 10 of an empty list", n: 0, w: window{first: new(10)},
			wantStart: 0, wantEnd: 0, wantCalls: []fetchCall{{1, 10}},
		},
		{
			name: "last 10 of an empty list", n: 0, w: window{last: new(10)},
			wantStart: 0, wantEnd: 0, wantCalls: []fetchCall{{1_000_000, 100}},
		},
		{
			name: "known empty list costs nothing", n: 0, w: window{last: new(10)}, known: new(0),
			wantStart: 0, wantEnd: 0,
		},
		{
			// A cursor made when the list was longer, or forged: the
			// window sits at today's end, with today's length.
			name: "after cursor past the shrunken end", n: 50, w: window{first: new(10), after: new(60)},
			wantStart: 50, wantEnd: 50, wantCalls: []fetchCall{{6, 12}},
		},
		{
			name: "after cursor past the end of an empty list", n: 0, w: window{first: new(10), after: new(5)},
			wantStart: 0, wantEnd: 0, wantCalls: []fetchCall{{1, 16}},
		},
		{
			name: "fixed 20: first 50 from offset 10", n: 100, serverPer: 20, fixed: 20, w: window{first: new(50), after: new(9)},
			wantStart: 10, wantEnd: 60, wantCalls: []fetchCall{{1, 0}, {2, 0}, {3, 0}},
		},
		{
			name: "fixed 20: first 10 from start", n: 45, serverPer: 20, fixed: 20, w: window{first: new(10)},
			wantStart: 0, wantEnd: 10, wantCalls: []fetchCall{{1, 0}},
		},
		{
			name: "fixed 20: last 10 of 45 refills the page before the last", n: 45, serverPer: 20, fixed: 20, w: window{last: new(10)},
			wantStart: 35, wantEnd: 45, wantCalls: []fetchCall{{2, 0}, {1_000_000, 0}},
		},
		{
			// The length is unknown: page 1 first, which tells it; page 3
			// (past the end) is never asked.
			name: "fixed 20: first 50 of a list of 30 asks only the pages that exist", n: 30, serverPer: 20, fixed: 20, w: window{first: new(50)},
			wantStart: 0, wantEnd: 30, wantCalls: []fetchCall{{1, 0}, {2, 0}},
		},
		{
			name: "fixed 50: first 100 from offset 25", n: 300, serverPer: 50, fixed: 50, w: window{first: new(100), after: new(24)},
			wantStart: 25, wantEnd: 125, wantCalls: []fetchCall{{1, 0}, {2, 0}, {3, 0}},
		},
		{
			name: "fixed 20 assumed, 25 served: first 50 from offset 10", n: 100, serverPer: 25, fixed: 20, w: window{first: new(50), after: new(9)},
			wantStart: 10, wantEnd: 60, wantCalls: []fetchCall{{1, 0}, {2, 0}, {3, 0}},
		},
		{
			name: "fixed 20 assumed, 25 served: first 20 from offset 40", n: 100, serverPer: 25, fixed: 20, w: window{first: new(20), after: new(39)},
			wantStart: 40, wantEnd: 60, wantCalls: []fetchCall{{2, 0}, {3, 0}},
		},
		{
			name: "fixed 20 assumed, 25 served: last 10 of 95", n: 95, serverPer: 25, fixed: 20, w: window{last: new(10)},
			wantStart: 85, wantEnd: 95, wantCalls: []fetchCall{{1_000_000, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(tt.n, tt.serverPer)
			r := mustParse(t, list, tt.w.args(list), 25)
			if tt.known != nil {
				r = r.WithKnownTotal(*tt.known)
			}
			res, err := paging.Load(t.Context(), r, f.source(tt.fixed))
			if err != nil {
				t.Fatalf("Load error: %v", err)
			}
			if want := span(tt.wantStart, tt.wantEnd); !slices.Equal(res.Items, want) {
				t.Errorf("Load items = %v, want %v", res.Items, want)
			}
			wantW := paging.Window{Start: tt.wantStart, End: tt.wantEnd, Total: tt.n}
			if res.Window != wantW {
				t.Errorf("Load window = %+v, want %+v", res.Window, wantW)
			}
			if got := f.sortedCalls(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("Load page requests = %v (%d calls), want %v (%d calls)", got, len(got), tt.wantCalls, len(tt.wantCalls))
			}
		})
	}
}

func TestLoad_FetchError(t *testing.T) {
	wantErr := errors.New("upstream down")
	tests := []struct {
		name  string
		fixed int
		w     window
	}{
		{name: "one page", w: window{first: new(10)}},
		{name: "two pages", w: window{first: new(100), after: new(49)}},
		{name: "overflow page", w: window{last: new(10)}},
		{name: "fixed pages in parallel", fixed: 20, w: window{first: new(60)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(200, tt.fixed)
			f.err = wantErr
			r := mustParse(t, "categories", tt.w.args("categories"), 25)
			res, err := paging.Load(t.Context(), r, f.source(tt.fixed))
			if !errors.Is(err, wantErr) {
				t.Fatalf("Load error = %v, want %v", err, wantErr)
			}
			if res.Items != nil || res.Window != (paging.Window{}) {
				t.Errorf("Load result on error = %+v, want zero", res)
			}
		})
	}
}

// TestLoad_ContextReachesFetch checks that Load hands its context to Fetch.
func TestLoad_ContextReachesFetch(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, "marker")
	src := paging.Source[int]{Fetch: func(ctx context.Context, page, perPage int) (paging.Page[int], error) {
		if got := ctx.Value(key{}); got != "marker" {
			t.Errorf("Fetch context value = %v, want marker", got)
		}
		return paging.Page[int]{Items: []int{0}, Page: 1, PerPage: perPage, Total: 1}, nil
	}}
	r := mustParse(t, "categories", paging.Args{First: new(1)}, 25)
	if _, err := paging.Load(ctx, r, src); err != nil {
		t.Fatalf("Load error: %v", err)
	}
}

// TestLoad_CursorDoesNotTellTheLength: whatever offset a cursor holds (one
// kept while the list changed, or one written by hand), Load's Total and
// page info are those of the list as the upstream answers it now.
func TestLoad_CursorDoesNotTellTheLength(t *testing.T) {
	const list = "categories"
	for _, fixed := range []int{0, 20} {
		for _, n := range []int{0, 5, 30, 120} {
			offsets := []int{0, n, n + 1, 5000, 1<<30 - 1}
			if n > 0 {
				offsets = append(offsets, n-1)
			}
			for _, o := range offsets {
				for _, w := range []window{
					{first: new(10), after: new(o)},
					{first: new(0), after: new(o)},
					{last: new(10), before: new(o)},
				} {
					f := newFake(n, fixed)
					r := mustParse(t, list, w.args(list), 25)
					res, err := paging.Load(t.Context(), r, f.source(fixed))
					if err != nil {
						t.Fatalf("fixed=%d n=%d %v: Load error: %v", fixed, n, w, err)
					}
					want := reference(n, w, 25)
					if res.Window != want {
						t.Errorf("fixed=%d n=%d %v: window = %+v, want %+v", fixed, n, w, res.Window, want)
					}
					if wantItems := span(want.Start, want.End); !slices.Equal(res.Items, wantItems) {
						t.Errorf("fixed=%d n=%d %v: items = %v, want %v", fixed, n, w, res.Items, wantItems)
					}
					// At or past the end, one call tells the length and
					// that the window is empty.
					if w.after != nil && o >= n-1 {
						if got := f.callCount(); got != 1 {
							t.Errorf("fixed=%d n=%d %v: %d calls %v, want 1", fixed, n, w, got, f.sortedCalls())
						}
					}
				}
			}
		}
	}
}

// TestRequest_Calls pins the lower bound of calls the cost guard uses: exact
// when the caller tells the list's length, the first page only when not (a
// cursor tells no length).
func TestRequest_Calls(t *testing.T) {
	const list = "categories"
	tests := []struct {
		name       string
		w          window
		known      int // WithKnownTotal, or -1
		fixed, max int
		want       int
	}{
		{name: "first 10", w: window{first: new(10)}, known: -1, max: 100, want: 1},
		{name: "first 100 after offset 49", w: window{first: new(100), after: new(49)}, known: -1, max: 100, want: 1},
		{name: "first 100 after offset 49 of a known 200", w: window{first: new(100), after: new(49)}, known: 200, max: 100, want: 2},
		{name: "first 100 after offset 49 of a known 90", w: window{first: new(100), after: new(49)}, known: 90, max: 100, want: 1},
		{name: "after the last item", w: window{first: new(10), after: new(199)}, known: -1, max: 100, want: 1},
		{name: "after the last item of a known length", w: window{first: new(10), after: new(199)}, known: 200, max: 100, want: 0},
		{name: "first 0 after a cursor", w: window{first: new(0), after: new(20)}, known: -1, max: 100, want: 1},
		{name: "first 0 after a cursor of a known length", w: window{first: new(0), after: new(20)}, known: 200, max: 100, want: 0},
		{name: "last 10", w: window{last: new(10)}, known: -1, max: 100, want: 1},
		{name: "fixed 20: first 100 after offset 0", w: window{first: new(100), after: new(0)}, known: -1, fixed: 20, want: 1},
		{name: "fixed 20: first 100 after offset 0 of a known 250", w: window{first: new(100), after: new(0)}, known: 250, fixed: 20, want: 6},
		{name: "fixed 20: first 40 after offset 9 of a known 30", w: window{first: new(40), after: new(9)}, known: 30, fixed: 20, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, list, tt.w.args(list), 25)
			if tt.known >= 0 {
				r = r.WithKnownTotal(tt.known)
			}
			if got := r.Calls(tt.fixed, tt.max); got != tt.want {
				t.Errorf("Calls(%d, %d) = %d, want %d", tt.fixed, tt.max, got, tt.want)
			}
		})
	}
}

// reference answers a window from the semantics alone: the items strictly
// between the after and before cursors, then the first or last n of them.
// An empty window sits at the after cursor (or the before cursor for last).
func reference(n int, w window, defaultSize int) paging.Window {
	lo, hi := 0, n
	if w.after != nil {
		lo = *w.after + 1
	}
	if w.before != nil {
		hi = *w.before
	}
	var s, e int
	if w.last != nil {
		k := *w.last
		e = max(hi, lo)
		s = max(lo, hi-k)
	} else {
		k := defaultSize
		if w.first != nil {
			k = *w.first
		}
		s = lo
		e = max(lo, min(lo+k, hi))
	}
	e = min(e, n)
	s = min(s, e)
	return paging.Window{Start: s, End: e, Total: n}
}

// windowsFor returns a spread of windows over a list of n items, with
// cursors on page boundaries of the usual page sizes.
func windowsFor(n int) []window {
	var offsets []int
	for _, o := range []int{0, 1, 19, 20, 24, 25, 48, 49, 50, 99, 100, 101, n / 3, n / 2, n - 2, n - 1} {
		if o >= 0 && o < n && !slices.Contains(offsets, o) {
			offsets = append(offsets, o)
		}
	}
	cursors := []*int{nil}
	for _, o := range offsets {
		cursors = append(cursors, new(o))
	}
	var ws []window
	for _, k := range []int{0, 1, 7, 20, 25, 38, 50, 99, 100} {
		for _, c := range cursors {
			ws = append(ws,
				window{first: new(k), after: c},
				window{last: new(k), before: c},
			)
		}
		for _, pair := range [][2]int{{0, n - 1}, {n / 4, 3 * n / 4}, {n / 2, n / 2}, {n - 1, 0}} {
			if n == 0 {
				break
			}
			a, b := new(pair[0]), new(pair[1])
			ws = append(ws,
				window{first: new(k), after: a, before: b},
				window{last: new(k), after: a, before: b},
				window{last: new(k), after: a},
			)
		}
	}
	return append(ws, window{})
}

// TestLoad_MatchesReference checks Load and Slice against the reference
// slice for every list length up to 250 and a spread of windows, on a
// source that chooses per_page and on fixed-size sources.
func TestLoad_MatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive run: skipped with -short")
	}
	const list = "categories"
	const defaultSize = 25
	sources := []struct {
		name      string
		fixed     int
		lenStep   int
		callBound func(k int) int // most calls a window of k items may cost
	}{
		{name: "chooseable", fixed: 0, lenStep: 1, callBound: func(int) int { return 2 }},
		{name: "fixed20", fixed: 20, lenStep: 3, callBound: func(k int) int { return 2 + k/20 }},
		{name: "fixed50", fixed: 50, lenStep: 3, callBound: func(k int) int { return 2 + k/50 }},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			for n := 0; n <= 250; n += src.lenStep {
				all := span(0, n)
				for _, w := range windowsFor(n) {
					r := mustParse(t, list, w.args(list), defaultSize)
					want := reference(n, w, defaultSize)
					f := newFake(n, src.fixed)
					res, err := paging.Load(t.Context(), r, f.source(src.fixed))
					if err != nil {
						t.Fatalf("n=%d %v: Load error: %v", n, w, err)
					}
					if wantItems := all[want.Start:want.End]; !slices.Equal(res.Items, wantItems) {
						t.Errorf("n=%d %v: Load items = %v, want %v", n, w, res.Items, wantItems)
					}
					if got, want := res.HasPreviousPage(), want.Start > 0; got != want {
						t.Errorf("n=%d %v: HasPreviousPage = %t (window %+v), want %t", n, w, got, res.Window, want)
					}
					if got, want := res.HasNextPage(), want.End < n; got != want {
						t.Errorf("n=%d %v: HasNextPage = %t (window %+v), want %t", n, w, got, res.Window, want)
					}
					if res.Total != n {
						t.Errorf("n=%d %v: Total = %d, want %d", n, w, res.Total, n)
					}
					k := defaultSize
					if w.first != nil {
						k = *w.first
					} else if w.last != nil {
						k = *w.last
					}
					calls := f.callCount()
					if bound := src.callBound(k); calls > bound {
						t.Errorf("n=%d %v: Load made %d calls %v, want at most %d", n, w, calls, f.sortedCalls(), bound)
					}
					// After the last item: the cursor tells no length, so the
					// window costs the one call that tells the current one.
					if w.first != nil && w.after != nil && w.before == nil && *w.after == n-1 && calls != 1 {
						t.Errorf("n=%d %v: Load after the last item made %d calls %v, want 1", n, w, calls, f.sortedCalls())
					}
					// Calls is the lower bound the cost guard refuses by: it
					// must never exceed what Load really sends.
					if lb := r.Calls(src.fixed, 100); calls < lb {
						t.Errorf("n=%d %v: Load made %d calls, fewer than Calls() = %d", n, w, calls, lb)
					}
					if sl, err := paging.Slice(r, all, paging.Order[int]{}); err != nil || !slices.Equal(sl.Items, all[want.Start:want.End]) || sl.HasNextPage() != (want.End < n) || sl.HasPreviousPage() != (want.Start > 0) {
						t.Errorf("n=%d %v: Slice = %+v, want window %+v", n, w, sl, want)
					}
				}
			}
		})
	}
}

func TestSlice(t *testing.T) {
	const list = "chats/1/messages"
	all := span(0, 30)
	tests := []struct {
		name string
		w    window
		want paging.Window
	}{
		{name: "first 10", w: window{first: new(10)}, want: paging.Window{Start: 0, End: 10, Total: 30}},
		{name: "last 10", w: window{last: new(10)}, want: paging.Window{Start: 20, End: 30, Total: 30}},
		{name: "after the last item", w: window{first: new(10), after: new(29)}, want: paging.Window{Start: 30, End: 30, Total: 30}},
		{name: "last 5 before 3", w: window{last: new(5), before: new(3)}, want: paging.Window{Start: 0, End: 3, Total: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, list, tt.w.args(list), 25)
			got, err := paging.Slice(r, all, paging.Order[int]{})
			if err != nil {
				t.Fatalf("Slice: %v", err)
			}
			if got.Window != tt.want {
				t.Errorf("Slice window = %+v, want %+v", got.Window, tt.want)
			}
			if want := all[tt.want.Start:tt.want.End]; !slices.Equal(got.Items, want) {
				t.Errorf("Slice items = %v, want %v", got.Items, want)
			}
		})
	}
}

func BenchmarkEncodeCursor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = paging.EncodeCursor("categories?classification=expense", 4711)
	}
}

func BenchmarkDecodeCursor(b *testing.B) {
	c := paging.EncodeCursor("categories?classification=expense", 4711)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := paging.DecodeCursor("categories?classification=expense", c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	f := newFake(1000, 0)
	src := paging.Source[int]{MaxPerPage: 100, Fetch: func(_ context.Context, page, perPage int) (paging.Page[int], error) {
		// No call log: only Load's own cost is measured.
		from := min((page-1)*perPage, len(f.items))
		return paging.Page[int]{Items: f.items[from:min(from+perPage, len(f.items))], Page: page, PerPage: perPage, Total: len(f.items)}, nil
	}}
	r := mustParse(b, "categories", paging.Args{First: new(100), After: new(paging.EncodeCursor("categories", 199))}, 25)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		res, err := paging.Load(ctx, r, src)
		if err != nil || len(res.Items) != 100 {
			b.Fatalf("Load = %d items, %v; want 100 items", len(res.Items), err)
		}
	}
}
