package paging

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// maxLocateRounds bounds the extra rounds of page requests Load sends to
// find where a cursor's item (or the place it left) is now, before the one
// round that fills the shifted window.
const maxLocateRounds = 2

// ErrStaleCursor is what a *StaleCursorError is: the cursor's item can no
// longer be placed in its list, and any window answered would be a guess.
var ErrStaleCursor = errors.New("stale cursor")

// StaleCursorError says which cursor could not be placed, and why.
type StaleCursorError struct {
	Arg    string // "after" or "before"
	Reason string
}

func (e *StaleCursorError) Error() string {
	return e.Arg + ": the cursor's item is gone and its place in the list could not be found (" + e.Reason + "); page again from the start"
}

// Is makes errors.Is(err, ErrStaleCursor) hold.
func (e *StaleCursorError) Is(target error) bool { return target == ErrStaleCursor }

// Order says how a list identifies and sorts its items, so that cursors name
// their item and a window is found from it when the list changed.
type Order[T any] struct {
	// Identify returns an item's id and sort key.
	Identify func(T) Anchor
	// Compare orders two sort keys as the list does: negative when items
	// of key a come before items of key b.
	Compare func(a, b string) int
	// TieByID: the list orders items of equal keys by id (byte order).
	// Without it their order is unknown, and an item that is gone cannot
	// be placed among items of its own key.
	TieByID bool
}

func (o Order[T]) enabled() bool { return o.Identify != nil && o.Compare != nil }

// rel tells where item stands relative to the item a names: negative
// before it, positive after it, 0 when it is that item; ok is false when
// the order cannot tell (equal keys, unknown tie order).
func (o Order[T]) rel(item T, a Anchor) (c int, ok bool) {
	id := o.Identify(item)
	if id.ID == a.ID {
		return 0, true
	}
	if c := o.Compare(id.Key, a.Key); c != 0 {
		return c, true
	}
	if o.TieByID {
		return strings.Compare(id.ID, a.ID), true
	}
	return 0, false
}

// held is what a read holds of a list: some of its items by offset (or all
// of them, in memory), and its current length.
type held[T any] struct {
	items   map[int]T
	offsets []int // the keys of items below total, ascending
	all     []T   // every item, when the whole list is held
	total   int
}

func holding[T any](items map[int]T, total int) held[T] {
	offsets := make([]int, 0, len(items))
	for off := range items {
		if off < total {
			offsets = append(offsets, off)
		}
	}
	slices.Sort(offsets)
	return held[T]{items: items, offsets: offsets, total: total}
}

func holdingAll[T any](all []T) held[T] { return held[T]{all: all, total: len(all)} }

// at returns the item at off, if held (an item recorded past the list's
// current end, from a page read before it shrank, is not).
func (h held[T]) at(off int) (T, bool) {
	if off >= h.total {
		var zero T
		return zero, false
	}
	if h.all != nil || h.items == nil {
		if off >= 0 && off < len(h.all) {
			return h.all[off], true
		}
		var zero T
		return zero, false
	}
	it, ok := h.items[off]
	return it, ok
}

// each calls fn with each item held, by ascending offset, until fn
// returns false.
func (h held[T]) each(fn func(off int, it T) bool) {
	if h.items == nil {
		for off, it := range h.all {
			if !fn(off, it) {
				return
			}
		}
		return
	}
	for _, off := range h.offsets {
		if !fn(off, h.items[off]) {
			return
		}
	}
}

// place returns where the window the anchored position p delimits begins
// (after: the count of items up to p's item) or ends (before: the count of
// items before it), from what h holds. need >= 0 asks for the item at that
// offset to be read first. The cursor's offset is trusted only when the
// item is there, or when the list's length is unchanged and no item held
// contradicts it: a plain walk costs no call more. The price: as many
// insertions as deletions before the item, all on pages not read, move it
// unseen (the window is then off by what moved; FuzzAnchoredWindow keeps
// that case apart). Reading its page to rule that out would cost every
// walk of fixed 20- or 50-item pages a call per page.
func place[T any](o Order[T], h held[T], p Position, after bool) (boundary, need int, err error) {
	shift := 0
	if after {
		shift = 1
	}
	it, there := h.at(p.Offset)
	if there && o.Identify(it).ID == p.Item.ID {
		return p.Offset + shift, -1, nil
	}
	found := -1
	h.each(func(off int, it T) bool {
		if o.Identify(it).ID == p.Item.ID {
			found = off
		}
		return found < 0
	})
	if found >= 0 {
		return found + shift, -1, nil
	}
	if !there && h.total == p.Total && agrees(o, h, p) {
		return p.Offset + shift, -1, nil
	}
	return locate(o, h, p, after)
}

// agrees reports whether every item held stands on the side of p's item
// its offset says.
func agrees[T any](o Order[T], h held[T], p Position) bool {
	agree := true
	h.each(func(off int, it T) bool {
		c, ok := o.rel(it, p.Item)
		agree = !ok || c == 0 || (c < 0) == (off < p.Offset)
		return agree
	})
	return agree
}

// locate places p's item, which the items held do not hold, by its sort
// key: the window after it begins at the first item that sorts after it,
// the window before it ends at the first item that does not sort before it.
func locate[T any](o Order[T], h held[T], p Position, after bool) (boundary, need int, err error) {
	arg := "before"
	if after {
		arg = "after"
	}
	lastBefore, firstAfter := -1, h.total
	h.each(func(off int, it T) bool {
		c, ok := o.rel(it, p.Item)
		switch {
		case !ok:
			// Same key, order unknown: it tells nothing of the place.
		case c > 0:
			firstAfter = min(firstAfter, off)
		default:
			lastBefore = max(lastBefore, off)
		}
		return true
	})
	if lastBefore >= firstAfter {
		return 0, -1, &StaleCursorError{Arg: arg, Reason: "the list's pages are not in the order expected"}
	}
	if lastBefore+1 == firstAfter {
		return firstAfter, -1, nil
	}
	// Between the last item before it and the first after it: read an
	// offset not read yet, nearest to where the item would be if the
	// list's change in length all happened before it (what insertions at
	// the head of a newest-first list do). When every offset there is read
	// and holds items of its own key, the item is gone from among them and
	// its place is unknown.
	guess := min(max(p.Offset+h.total-p.Total, lastBefore+1), firstAfter-1)
	for d := 0; guess+d < firstAfter || guess-d > lastBefore; d++ {
		for _, off := range []int{guess + d, guess - d} {
			if _, read := h.at(off); !read && off > lastBefore && off < firstAfter {
				return 0, off, nil
			}
		}
	}
	return 0, -1, &StaleCursorError{Arg: arg, Reason: "other items share its sort key"}
}

// withCursorItems widens the window [s, e) to the offsets of the anchored
// cursors that delimit it.
func (r Request) withCursorItems(s, e int) (ws, we int) {
	ws, we = s, e
	if r.after.Anchored && r.after.Offset == s-1 {
		ws = s - 1
	}
	if r.before.Anchored && r.before.Offset == e {
		we = e + 1
	}
	return ws, we
}

// reanchor moves the window of r to where its cursors' items are among the
// pages read so far, reading at most maxLocateRounds rounds of pages more
// when they are not among them.
func reanchor[T any](ctx context.Context, st *loadState[T], r Request) (Request, error) {
	o := st.src.Order
	if !o.enabled() || (!r.after.Anchored && !r.before.Anchored) {
		return r, nil
	}
	for round := 0; ; round++ {
		placed, need, err := placeIn(r, o, holding(st.items, st.total))
		if err != nil || need < 0 {
			return placed, err
		}
		if round == maxLocateRounds {
			arg := "before"
			if r.after.Anchored {
				arg = "after"
			}
			return r, &StaleCursorError{Arg: arg, Reason: "it is too far from where it was"}
		}
		// One page: the one that holds need (with as much of the window
		// after it as a page of the client's choosing can hold).
		if err := st.fetch(ctx, st.plan(need, min(need+max(r.n, 1), st.total))[:1]); err != nil {
			return r, err
		}
	}
}

// placeIn returns r with its window placed on its cursors' items by what h
// holds, or an offset to read first (need >= 0).
func placeIn[T any](r Request, o Order[T], h held[T]) (placed Request, need int, err error) {
	if r.after.Anchored {
		if r.start, need, err = place(o, h, r.after, true); err != nil || need >= 0 {
			return r, need, err
		}
	}
	if r.before.Anchored {
		if r.end, need, err = place(o, h, r.before, false); err != nil || need >= 0 {
			return r, need, err
		}
	}
	return r, -1, nil
}
