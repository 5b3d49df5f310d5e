// Package paging turns Relay connection arguments (first/after, last/before)
// into the fewest upstream page requests, and upstream pages back into a
// window of items with exact page info.
//
// Upstream lists are pagy pages: a page number and a page size. A Relay
// window is an offset range. A cursor names one item of one specific list
// (kind and filters): its offset, and (version c3) the item's id and sort
// key with the list's length when the cursor was made, so that the next
// window is found from the item even when the list changed meanwhile (see
// Load). The list's length, hasNextPage and totalCount always come from an
// upstream answer (or what the caller knows to be current), never from a
// cursor, which a client may keep for long or edit: the length a cursor
// carries only tells whether the list may have changed.
package paging

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Cursor versions prefix every cursor so that the format can change without
// misreading old cursors. c1 cursors carried the list's length and were
// trusted for it; they are refused. c2 cursors hold a position only and are
// still answered (by position, as when they were made).
const (
	positionVersion = "c2"
	anchoredVersion = "c3"
)

// MaxCursorLen bounds the text of a cursor a caller may send, in bytes. The
// cursors made here stay below it (EncodeAnchored falls back to a position
// when an item's sort key is too long); a longer one is refused before any
// decoding.
const MaxCursorLen = 1024

// maxOffset bounds decoded offsets and lengths; no upstream list is near
// this long, and the bound keeps page arithmetic far from overflow.
const maxOffset = 1 << 30

// ErrInvalidCursor is returned for a cursor that is malformed or was made
// for another list (another kind, filter or parent).
var ErrInvalidCursor = errors.New("invalid cursor")

// Anchor is what identifies an item in its list: its id, and its sort key
// (what the list's order sorts on, e.g. a category's name or a chat's
// creation time).
type Anchor struct {
	ID, Key string
}

// Position is what a cursor holds.
type Position struct {
	Offset int // zero-based index of the item in its list when the cursor was made
	// Anchored: the cursor names its item (c3); Total and Item are set.
	Anchored bool
	Total    int    // the list's length when the cursor was made
	Item     Anchor // the item the cursor was made for
}

// listTag is a short digest of a list's identity: cursors name their list
// without exposing filters or ids.
func listTag(list string) string {
	sum := sha256.Sum256([]byte(list))
	return hex.EncodeToString(sum[:6])
}

// EncodeCursor returns the position-only (c2) cursor of the item at offset
// in list.
func EncodeCursor(list string, offset int) string {
	raw := positionVersion + ":" + listTag(list) + ":" + strconv.Itoa(offset)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// EncodeAnchored returns the cursor of item, at offset in list of total
// items. The text is c3:tag:offset:total:len(id):id followed by the sort
// key. When the item's id and key would make the cursor longer than
// MaxCursorLen, the position-only cursor is returned: it is answered by
// position, as every cursor was before c3; so is an item without an id.
func EncodeAnchored(list string, offset, total int, item Anchor) string {
	if item.ID == "" {
		return EncodeCursor(list, offset)
	}
	raw := anchoredVersion + ":" + listTag(list) + ":" + strconv.Itoa(offset) + ":" + strconv.Itoa(total) + ":" +
		strconv.Itoa(len(item.ID)) + ":" + item.ID + item.Key
	if base64.RawURLEncoding.EncodedLen(len(raw)) > MaxCursorLen {
		return EncodeCursor(list, offset)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor returns the position a cursor made by EncodeCursor or
// EncodeAnchored for the same list holds. Any other input, including a
// cursor of another list, is ErrInvalidCursor.
func DecodeCursor(list, cursor string) (Position, error) {
	if len(cursor) > MaxCursorLen {
		return Position{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalidCursor, MaxCursorLen)
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return Position{}, fmt.Errorf("%w: not base64url", ErrInvalidCursor)
	}
	var p Position
	switch version, _, _ := strings.Cut(string(raw), ":"); version {
	case positionVersion:
		p, err = decodePosition(list, string(raw))
	case anchoredVersion:
		p, err = decodeAnchored(list, string(raw))
	default:
		err = fmt.Errorf("%w: unknown format", ErrInvalidCursor)
	}
	if err != nil {
		return Position{}, err
	}
	// base64 decoding tolerates line breaks and stray trailing bits: accept
	// only the exact text the encoders write, so an item has one cursor.
	if p.encode(list) != cursor {
		return Position{}, fmt.Errorf("%w: not canonical", ErrInvalidCursor)
	}
	return p, nil
}

func (p Position) encode(list string) string {
	if p.Anchored {
		return EncodeAnchored(list, p.Offset, p.Total, p.Item)
	}
	return EncodeCursor(list, p.Offset)
}

// decodePosition reads c2:tag:offset.
func decodePosition(list, raw string) (Position, error) {
	parts := strings.Split(raw, ":")
	if len(parts) != 3 {
		return Position{}, fmt.Errorf("%w: unknown format", ErrInvalidCursor)
	}
	if parts[1] != listTag(list) {
		return Position{}, fmt.Errorf("%w: made for another list or filter", ErrInvalidCursor)
	}
	offset, err := parseBounded(parts[2])
	if err != nil {
		return Position{}, fmt.Errorf("%w: bad position", ErrInvalidCursor)
	}
	return Position{Offset: offset}, nil
}

// decodeAnchored reads c3:tag:offset:total:idlen:id+key.
func decodeAnchored(list, raw string) (Position, error) {
	parts := strings.SplitN(raw, ":", 6)
	if len(parts) != 6 {
		return Position{}, fmt.Errorf("%w: unknown format", ErrInvalidCursor)
	}
	if parts[1] != listTag(list) {
		return Position{}, fmt.Errorf("%w: made for another list or filter", ErrInvalidCursor)
	}
	offset, errOff := parseBounded(parts[2])
	total, errTotal := parseBounded(parts[3])
	idLen, errLen := parseBounded(parts[4])
	if errOff != nil || errTotal != nil || offset >= total {
		return Position{}, fmt.Errorf("%w: bad position", ErrInvalidCursor)
	}
	if errLen != nil || idLen == 0 || idLen > len(parts[5]) {
		return Position{}, fmt.Errorf("%w: bad item", ErrInvalidCursor)
	}
	rest := parts[5]
	return Position{Offset: offset, Anchored: true, Total: total, Item: Anchor{ID: rest[:idLen], Key: rest[idLen:]}}, nil
}

// parseBounded parses a canonical non-negative decimal below maxOffset, so
// that every accepted cursor is exactly what the encoders would write.
func parseBounded(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= maxOffset || strconv.Itoa(n) != s {
		return 0, errors.New("not a canonical offset")
	}
	return n, nil
}
