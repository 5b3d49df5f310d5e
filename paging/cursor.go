// Package paging turns Relay connection arguments (first/after, last/before)
// into the fewest upstream page requests, and upstream pages back into a
// window of items with exact page info.
//
// Upstream lists are pagy pages: a page number and a page size. A Relay
// window is an offset range. Cursors here are opaque encodings of an offset
// in one specific list (kind and filters), and of nothing else: the list's
// length, hasNextPage and totalCount always come from an upstream answer
// (or what the caller knows to be current), never from a cursor, which a
// client may keep for long or edit.
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

// cursorVersion prefixes every cursor so that the format can change without
// misreading old cursors.
// c1 cursors also carried the list's length; they are refused.
const cursorVersion = "c2"

// maxOffset bounds decoded offsets; no upstream list is near this long, and
// the bound keeps page arithmetic far from overflow.
const maxOffset = 1 << 30

// ErrInvalidCursor is returned for a cursor that is malformed or was made
// for another list (another kind, filter or parent).
var ErrInvalidCursor = errors.New("invalid cursor")

// Position is what a cursor holds.
type Position struct {
	Offset int // zero-based index of the item in its list
}

// listTag is a short digest of a list's identity: cursors name their list
// without exposing filters or ids.
func listTag(list string) string {
	sum := sha256.Sum256([]byte(list))
	return hex.EncodeToString(sum[:6])
}

// EncodeCursor returns the cursor of the item at offset in list.
func EncodeCursor(list string, offset int) string {
	raw := cursorVersion + ":" + listTag(list) + ":" + strconv.Itoa(offset)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor returns the position a cursor made by EncodeCursor for the
// same list holds. Any other input, including a cursor of another list, is
// ErrInvalidCursor.
func DecodeCursor(list, cursor string) (Position, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return Position{}, fmt.Errorf("%w: not base64url", ErrInvalidCursor)
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return Position{}, fmt.Errorf("%w: unknown format", ErrInvalidCursor)
	}
	if parts[1] != listTag(list) {
		return Position{}, fmt.Errorf("%w: made for another list or filter", ErrInvalidCursor)
	}
	offset, err := parseBounded(parts[2])
	if err != nil {
		return Position{}, fmt.Errorf("%w: bad position", ErrInvalidCursor)
	}
	// base64 decoding tolerates line breaks and stray trailing bits: accept
	// only the exact text EncodeCursor writes, so a position has one cursor.
	if EncodeCursor(list, offset) != cursor {
		return Position{}, fmt.Errorf("%w: not canonical", ErrInvalidCursor)
	}
	return Position{Offset: offset}, nil
}

// parseBounded parses a canonical non-negative decimal below maxOffset, so
// that every accepted cursor is exactly what EncodeCursor would write.
func parseBounded(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= maxOffset || strconv.Itoa(n) != s {
		return 0, errors.New("not a canonical offset")
	}
	return n, nil
}
