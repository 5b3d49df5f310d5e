package paging

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// overflowPage is a page number past the end of any real list. The upstream
// answers a page past the end with its LAST page (pagy overflow), which
// gives the list's tail and length in one call; that is how `last` without
// `before` is answered.
const overflowPage = OverflowPage

// OverflowPage is a page number past the end of any real list; see
// overflowPage.
const OverflowPage = 1_000_000

// maxRounds bounds the rounds of page requests of one Load: the first
// round, then refills when the server reported another page size or the
// list's end was unknown.
const maxRounds = 4

// ErrIncomplete is returned when the upstream's pages do not add up to the
// window (the list changed while it was read, or the server pages in a way
// it does not report): answering with a silently shorter window would be
// wrong.
var ErrIncomplete = errors.New("paging: the upstream's pages do not cover the window")

// Page is one upstream page as the server reported it.
type Page[T any] struct {
	Items   []T
	Page    int // the page the server answered (lower than asked on overflow)
	PerPage int // the page size the server used
	Total   int // pagination.total_count
}

// Source reads the pages of one list.
type Source[T any] struct {
	// FixedPageSize is the page size the server imposes (chats: 20,
	// messages: 50), or 0 when the client chooses per_page.
	FixedPageSize int
	// MaxPerPage is the largest per_page the server honours when the client
	// chooses (categories: 100; a larger value is silently reset to 25).
	MaxPerPage int
	// Fetch reads one page; perPage is 0 for fixed-size lists.
	Fetch func(ctx context.Context, page, perPage int) (Page[T], error)
	// Reserve, when set, sets each round of requests aside in the caller's
	// call budget before any is sent, so that a round is sent whole or not
	// at all: an error stops Load there. The round's requests are sent with
	// the context it returns, and release is called once they have ended.
	Reserve func(ctx context.Context, n int) (ctx2 context.Context, release func(), err error)
	// Order, when set, identifies the list's items and tells its order:
	// cursors then name their item, and Load finds a cursor's window from
	// its item when the list changed since the cursor was made.
	Order Order[T]
}

// Result is a window of items with the window's position.
type Result[T any] struct {
	Window
	Items []T

	list     string         // the list's identity, for cursors
	identify func(T) Anchor // nil: cursors hold positions only
}

// Cursors returns the cursor of each item of the window, in order: each
// names its item when the list's Order identifies items.
func (r Result[T]) Cursors() []string {
	cursors := make([]string, len(r.Items))
	for i, it := range r.Items {
		if r.identify == nil {
			cursors[i] = EncodeCursor(r.list, r.Start+i)
			continue
		}
		cursors[i] = EncodeAnchored(r.list, r.Start+i, r.Total, r.identify(it))
	}
	return cursors
}

func newResult[T any](r Request, w Window, items []T, o Order[T]) Result[T] {
	return Result[T]{Window: w, Items: items, list: r.List, identify: o.Identify}
}

type pageRequest struct{ page, perPage int }

// Load answers r from src with as few page requests as the upstream allows:
// a window that is empty by arithmetic costs nothing, a window that fits one
// page of some size costs one request, and pages of fixed-size lists are
// fetched in parallel. Items are placed by the page and page size the server
// reported, so overflow answers and ignored per_page values never duplicate
// items.
//
// A cursor that names its item (src.Order set) is checked against the
// pages of that first round: when its item is where the cursor says, or
// the list's length is unchanged and no item read says otherwise, the
// window is the one its offset gives, at no extra cost. Otherwise the
// window moves to the item's current offset (found by id among the items
// read, or by its sort key when it is gone, reading at most
// maxLocateRounds more rounds), and the rounds that read what the window
// lacks read what the moved window lacks. A cursor that cannot be placed is a
// *StaleCursorError, never a guessed window.
func Load[T any](ctx context.Context, r Request, src Source[T]) (Result[T], error) {
	if w, empty, known := r.Empty(); empty && known {
		return newResult(r, w, []T(nil), src.Order), nil
	}
	st := loadState[T]{src: src, items: map[int]T{}, total: -1, pageSize: src.FixedPageSize}
	if st.src.MaxPerPage <= 0 {
		st.src.MaxPerPage = MaxPageSize
	}

	s, e, spanKnown := r.span()
	var first []pageRequest
	switch {
	case !spanKnown:
		// last without before: the overflow page is the list's tail.
		first = []pageRequest{{page: overflowPage, perPage: st.perPage(st.src.MaxPerPage)}}
	case e <= s:
		// Empty window, but the list's length is unknown: the smallest
		// page tells it.
		first = []pageRequest{{page: 1, perPage: st.perPage(1)}}
	default:
		first = r.firstRound(&st, s, e)
		// Reading the cursors' items too shows whether the window is still
		// where their offsets say: worth it when it costs no more requests
		// nor more than a couple more items (a page size of the client's
		// choosing often stretches that far; doubling the page would double
		// what every such read decodes, for a check the list's length
		// mostly makes anyway).
		if ws, we := r.withCursorItems(s, e); ws != s || we != e {
			wide, narrow := st.plan(ws, we), st.plan(s, e)
			if len(wide) <= len(narrow) && itemsAsked(wide) <= itemsAsked(narrow)+2 {
				first = r.firstRound(&st, ws, we)
			}
		}
	}
	if err := st.fetch(ctx, first); err != nil {
		return Result[T]{}, err
	}
	// The cursors' items tell whether the window is still where their
	// offsets say; the rounds that follow read what the window lacks.
	r, err := reanchor(ctx, &st, r)
	if err != nil {
		return Result[T]{}, err
	}
	for round := 1; round < maxRounds; round++ {
		ms, me, missing := st.missing(r.Clip(st.total))
		if !missing {
			break
		}
		if err := st.fetch(ctx, st.plan(ms, me)); err != nil {
			return Result[T]{}, err
		}
	}
	w := r.Clip(st.total)
	if _, _, missing := st.missing(w); missing {
		return Result[T]{}, ErrIncomplete
	}
	items := make([]T, 0, w.End-w.Start)
	for off := w.Start; off < w.End; off++ {
		items = append(items, st.items[off])
	}
	return newResult(r, w, items, src.Order), nil
}

// itemsAsked is how many items a plan's requests ask for (0 for a list
// whose pages have a fixed size: there, only the number of requests
// differs).
func itemsAsked(plan []pageRequest) int {
	n := 0
	for _, p := range plan {
		n += p.perPage
	}
	return n
}

// firstRound returns the pages to fetch first for the window [s, e). When
// the window spans several pages and the list's length is unknown, only
// the first is fetched: the list may end before the others, and a page past
// the end would cost a call for nothing (the upstream answers it with the
// last page again). When the caller tells the length, the pages up to it
// are fetched at once, in parallel.
func (r Request) firstRound(st planner, s, e int) []pageRequest {
	plan := st.plan(s, e)
	if len(plan) <= 1 {
		return plan
	}
	if total := r.known; total >= 0 {
		if end := min(e, total); end > s {
			return st.plan(s, end)
		}
	}
	return plan[:1]
}

// planner plans the pages of a window.
type planner interface {
	plan(s, e int) []pageRequest
}

// Slice answers r from a complete, ordered list held in memory. A cursor
// that names its item (order set) is placed by that item's id, or by its
// sort key when the item is gone; one that cannot be placed is a
// *StaleCursorError.
func Slice[T any](r Request, all []T, order Order[T]) (Result[T], error) {
	if w, empty, known := r.Empty(); empty && known {
		return newResult(r, w, []T(nil), order), nil
	}
	if order.enabled() && (r.after.Anchored || r.before.Anchored) {
		placed, need, err := placeIn(r, order, holdingAll(all))
		if err == nil && need >= 0 {
			err = &StaleCursorError{Arg: "after", Reason: "the list does not hold its place"} // unreachable: every item is held
		}
		if err != nil {
			return Result[T]{}, err
		}
		r = placed
	}
	w := r.Clip(len(all))
	return newResult(r, w, all[w.Start:w.End], order), nil
}

type loadState[T any] struct {
	src      Source[T]
	mu       sync.Mutex
	items    map[int]T
	total    int
	pageSize int // the fixed page size, as last reported
}

// perPage is what to send as per_page: the wanted size for lists whose page
// size the client chooses, 0 (nothing) for fixed-size lists.
func (st *loadState[T]) perPage(want int) int {
	if st.src.FixedPageSize > 0 {
		return 0
	}
	return min(max(want, 1), st.src.MaxPerPage)
}

// plan returns the fewest pages that cover [s, e).
func (st *loadState[T]) plan(s, e int) []pageRequest {
	if st.src.FixedPageSize > 0 {
		p := st.pageSize
		return pageRange(s, e, p, 0)
	}
	maxPer := st.src.MaxPerPage
	// The smallest page size whose page boundaries do not cut the window
	// answers it in one request (e.g. offsets 45..74 are page 2 of 38).
	for p := e - s; p <= maxPer; p++ {
		if s/p == (e-1)/p {
			return []pageRequest{{page: s/p + 1, perPage: p}}
		}
	}
	return pageRange(s, e, maxPer, maxPer)
}

func pageRange(s, e, size, perPage int) []pageRequest {
	var reqs []pageRequest
	for k := s/size + 1; k <= (e-1)/size+1; k++ {
		reqs = append(reqs, pageRequest{page: k, perPage: perPage})
	}
	return reqs
}

// missing returns the smallest range holding every offset of w not yet
// known.
func (st *loadState[T]) missing(w Window) (start, end int, ok bool) {
	start, end = -1, -1
	for off := w.Start; off < w.End; off++ {
		if _, have := st.items[off]; !have {
			if start < 0 {
				start = off
			}
			end = off + 1
		}
	}
	return start, end, start >= 0
}

// fetch sends reqs in parallel and records their items by the position the
// server reported. A single request is sent from the caller's goroutine:
// most windows need one page, and a goroutine of its own would cost its
// start and the growth of its stack for nothing.
func (st *loadState[T]) fetch(ctx context.Context, reqs []pageRequest) error {
	if st.src.Reserve != nil {
		rctx, release, err := st.src.Reserve(ctx, len(reqs))
		if err != nil {
			return err
		}
		defer release()
		ctx = rctx
	}
	if len(reqs) == 1 {
		return st.fetchOne(ctx, reqs[0])
	}
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, pr := range reqs {
		wg.Go(func() { errs[i] = st.fetchOne(ctx, pr) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fetchOne sends one request and records its items.
func (st *loadState[T]) fetchOne(ctx context.Context, pr pageRequest) (err error) {
	defer func() {
		// On a goroutine of fetch's, a panic would end the process: gqlgen
		// recovers only on the resolver's own goroutine.
		if v := recover(); v != nil {
			err = fmt.Errorf("paging: fetch page %d panicked: %v", pr.page, v)
		}
	}()
	pg, err := st.src.Fetch(ctx, pr.page, pr.perPage)
	if err != nil {
		return err
	}
	st.record(pr, pg)
	return nil
}

func (st *loadState[T]) record(pr pageRequest, pg Page[T]) {
	st.mu.Lock()
	defer st.mu.Unlock()
	size := pg.PerPage
	if size <= 0 {
		size = max(pr.perPage, st.pageSize, len(pg.Items))
	}
	page := max(pg.Page, 1)
	if st.src.FixedPageSize > 0 {
		// Trust the size the server reports over the one assumed.
		st.pageSize = size
	} else if pr.perPage > 0 && size < pr.perPage && size < st.src.MaxPerPage {
		// The server honours smaller pages than asked (a lower cap than
		// documented): plan the rest with the size it uses.
		st.src.MaxPerPage = size
	}
	st.total = max(pg.Total, 0)
	base := (page - 1) * size
	for i, it := range pg.Items {
		st.items[base+i] = it
	}
}
