package paging

import (
	"errors"
	"fmt"
	"github.com/suregql/suregql/internal/limits/badinput"
)

// MaxPageSize is the largest first or last a caller may ask for.
const MaxPageSize = 100

// Args are the Relay connection arguments of a field.
type Args struct {
	First  *int
	After  *string
	Last   *int
	Before *string
}

// Request is a validated connection request on one list.
type Request struct {
	List    string // identity of the list (kind and filters), for cursors
	start   int    // first offset the window may hold (after + 1)
	end     int    // offset of the before cursor (exclusive), or -1
	n       int    // first or last
	fromEnd bool   // last was given
	known   int    // list length known to be current, or -1
	// after and before are the positions the cursors held (Anchored is
	// false when absent or c2); Load re-anchors the window on their items.
	after, before Position
}

// Parse validates args for list. defaultSize applies when neither first nor
// last is given. Errors are *badinput.Error (wrapping ErrInvalidCursor
// for a cursor).
func Parse(list string, args Args, defaultSize int) (Request, error) {
	r := Request{List: list, end: -1, known: -1, n: defaultSize}
	if args.First != nil && args.Last != nil {
		return r, badinput.New("first", "give first or last, not both")
	}
	for name, v := range map[string]*int{"first": args.First, "last": args.Last} {
		if v == nil {
			continue
		}
		if *v < 0 {
			return r, badinput.New(name, "must not be negative")
		}
		if *v > MaxPageSize {
			return r, badinput.New(name, fmt.Sprintf("must be at most %d", MaxPageSize))
		}
		r.n = *v
	}
	r.fromEnd = args.Last != nil
	if args.After != nil {
		p, err := DecodeCursor(list, *args.After)
		if err != nil {
			return r, badinput.Wrap("after", err)
		}
		r.start = p.Offset + 1
		r.after = p
	}
	if args.Before != nil {
		p, err := DecodeCursor(list, *args.Before)
		if err != nil {
			return r, badinput.Wrap("before", err)
		}
		r.end = p.Offset
		r.before = p
	}
	return r, nil
}

// WithKnownTotal returns r for a list whose current length is known without
// a call (a chat's message_count, a category's subcategories_count), so that
// `last` and windows past the end need no probing request.
func (r Request) WithKnownTotal(total int) Request {
	r.known = total
	return r
}

// Size returns how many items the window asks for: first, last or the
// default size.
func (r Request) Size() int { return r.n }

// FromStart reports whether the window starts at the list's beginning (no
// after cursor, not counted from the end).
func (r Request) FromStart() bool { return r.start == 0 && !r.fromEnd }

// IsArgumentError reports whether err is the caller's fault: a bad
// first/last or a bad cursor.
func IsArgumentError(err error) bool {
	var bad *badinput.Error
	return errors.As(err, &bad)
}

// Window is a resolved offset range [Start, End) of a list of Total items.
type Window struct {
	Start, End, Total int
}

// HasPreviousPage reports whether items precede the window.
func (w Window) HasPreviousPage() bool { return w.Start > 0 && w.Total > 0 }

// HasNextPage reports whether items follow the window.
func (w Window) HasNextPage() bool { return w.End < w.Total }

// span returns the window when it is known without knowing the list's
// length: ok is false for last without before. The range may run past the
// list's end.
func (r Request) span() (start, end int, ok bool) {
	switch {
	case !r.fromEnd:
		end = r.start + r.n
		if r.end >= 0 {
			end = min(end, r.end)
		}
		return r.start, max(end, r.start), true
	case r.end >= 0:
		return max(r.start, r.end-r.n), max(r.end, r.start), true
	case r.known >= 0:
		return max(r.start, r.known-r.n), max(r.known, r.start), true
	default:
		return 0, 0, false
	}
}

// Empty reports whether the window holds no item by arithmetic alone, and
// the window to answer then (totalKnown is false unless WithKnownTotal told
// the list's length, which the window's Total then is). Empty windows with
// a known length cost no upstream call.
func (r Request) Empty() (w Window, empty, totalKnown bool) {
	if r.drifted() {
		// The list changed since a cursor was made: its item may have
		// moved, and only the items tell where the window is now.
		r.known = -1
	}
	s, e, ok := r.span()
	if !ok {
		if r.n == 0 && r.known >= 0 {
			return Window{Start: r.known, End: r.known, Total: r.known}, true, true
		}
		return Window{}, r.n == 0, false
	}
	if r.known >= 0 && s >= r.known && r.end < 0 {
		// After the last item of a list whose length is current.
		return Window{Start: r.known, End: r.known, Total: r.known}, true, true
	}
	if e <= s {
		if r.known >= 0 {
			return Window{Start: min(s, r.known), End: min(s, r.known), Total: r.known}, true, true
		}
		return Window{Start: s, End: s}, true, false
	}
	return Window{}, false, false
}

// drifted reports whether a cursor names its item and the list's length
// known to be current differs from the length when the cursor was made.
func (r Request) drifted() bool {
	return r.known >= 0 && ((r.after.Anchored && r.after.Total != r.known) || (r.before.Anchored && r.before.Total != r.known))
}

// Clip returns the window for a list of total items.
func (r Request) Clip(total int) Window {
	s, e, ok := r.span()
	if !ok {
		e = total
		s = max(r.start, total-r.n)
	}
	e = min(e, total)
	s = min(s, e)
	return Window{Start: s, End: e, Total: total}
}

// Range returns the request of the n items from offset start of list, for
// reading a whole list (n may exceed MaxPageSize; it is not a caller's
// window).
func Range(list string, start, n int) Request {
	return Request{List: list, start: start, n: n, end: -1, known: -1}
}

// Calls returns how many page requests answering r costs at least, for a
// list whose page size is fixed (fixedPageSize > 0) or chosen up to
// maxPerPage: the requests of Load's first round. That is exact when the
// list's length is known (the caller tells it), and 1 when it
// is not (the first page, or the overflow probe); 0 when the window is
// empty by arithmetic on a known length.
func (r Request) Calls(fixedPageSize, maxPerPage int) int {
	if _, empty, known := r.Empty(); empty && known {
		return 0
	}
	s, e, ok := r.span()
	if !ok || e <= s {
		return 1
	}
	st := loadState[struct{}]{src: Source[struct{}]{FixedPageSize: fixedPageSize, MaxPerPage: maxPerPage}, pageSize: fixedPageSize}
	if st.src.MaxPerPage <= 0 {
		st.src.MaxPerPage = MaxPageSize
	}
	// Without a known length only the first page is certain to be needed.
	return len(r.firstRound(&st, s, e))
}
