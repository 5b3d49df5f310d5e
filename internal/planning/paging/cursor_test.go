package paging_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/planning/paging"
)

// rawCursor builds a cursor from a version and raw fields, borrowing the
// list tag of a genuine cursor of list, so that tests can craft malformed
// positions and cursors of other formats: the text is
// version:tag:fields[0]:fields[1]...
func rawCursor(t testing.TB, list, version string, fields ...string) string { //nolint:unparam // list names the cursor kind at each call site
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(paging.EncodeCursor(list, 0))
	if err != nil {
		t.Fatalf("decode a genuine cursor: %v", err)
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 {
		t.Fatalf("genuine cursor %q has %d fields, want 3", raw, len(parts))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(append([]string{version, parts[1]}, fields...), ":")))
}

func TestCursor_RoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		list   string
		offset int
	}{
		{name: "first item", list: "categories", offset: 0},
		{name: "last item of a page", list: "chats", offset: 19},
		{name: "filtered list", list: "categories?classification=income&parent_id=6f1c", offset: 41},
		{name: "empty list name", list: "", offset: 5},
		{name: "largest position", list: "categories", offset: 1<<30 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := paging.EncodeCursor(tt.list, tt.offset)
			if strings.ContainsAny(c, "+/=\n") {
				t.Errorf("EncodeCursor = %q, want URL-safe text without padding", c)
			}
			got, err := paging.DecodeCursor(tt.list, c)
			if err != nil {
				t.Fatalf("DecodeCursor(%q) error: %v", c, err)
			}
			want := paging.Position{Offset: tt.offset}
			if got != want {
				t.Errorf("DecodeCursor(EncodeCursor(%d)) = %+v, want %+v", tt.offset, got, want)
			}
		})
	}
}

// TestCursor_Format pins the two formats: c2 holds the list's tag and the
// offset; c3 adds the list's length when the cursor was made, the id's
// length, the id and the sort key (the caller's own data). Neither exposes
// the list's name. The length a c3 cursor holds is never answered as
// totalCount (see TestLoad_EditedLengthInACursor).
func TestCursor_Format(t *testing.T) {
	const list = "categories"
	for _, tt := range []struct {
		name   string
		cursor string
		want   string // the text after the version and tag
	}{
		{"position", paging.EncodeCursor(list, 41), "41"},
		{"anchored", paging.EncodeAnchored(list, 41, 45, paging.Anchor{ID: "6f1c", Key: "Rent: home"}), "41:45:4:6f1cRent: home"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := base64.RawURLEncoding.DecodeString(tt.cursor)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			version, rest, _ := strings.Cut(string(raw), ":")
			tag, fields, _ := strings.Cut(rest, ":")
			if (version != "c2" && version != "c3") || len(tag) != 12 || fields != tt.want {
				t.Errorf("cursor text = %q, want c2|c3:<12 hex digits>:%s", raw, tt.want)
			}
			if strings.Contains(string(raw), list) {
				t.Errorf("cursor text %q exposes the list's name", raw)
			}
		})
	}
}

func TestCursor_AnchoredRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name         string
		offset, tot  int
		item         paging.Anchor
		wantAnchored bool
	}{
		{"category", 0, 45, paging.Anchor{ID: "a81662fb-0221-5d66-9a77-8ac3c3fb0ccc", Key: "Coffee Shops"}, true},
		{"key with colons and unicode", 19, 20, paging.Anchor{ID: "c1", Key: "2026-01-12T09:15:00.000000000Z: café"}, true},
		{"empty key", 3, 4, paging.Anchor{ID: "x", Key: ""}, true},
		// Too long for a cursor: answered by position, as c2 cursors are.
		{"key too long", 7, 9, paging.Anchor{ID: "x", Key: strings.Repeat("k", paging.MaxCursorLen)}, false},
		{"no id", 7, 9, paging.Anchor{Key: "Food"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := paging.EncodeAnchored("categories", tt.offset, tt.tot, tt.item)
			if len(c) > paging.MaxCursorLen {
				t.Errorf("cursor of %d bytes, want at most %d", len(c), paging.MaxCursorLen)
			}
			got, err := paging.DecodeCursor("categories", c)
			if err != nil {
				t.Fatalf("DecodeCursor: %v", err)
			}
			want := paging.Position{Offset: tt.offset}
			if tt.wantAnchored {
				want = paging.Position{Offset: tt.offset, Anchored: true, Total: tt.tot, Item: tt.item}
			}
			if got != want {
				t.Errorf("DecodeCursor = %+v, want %+v", got, want)
			}
		})
	}
}

func TestDecodeCursor_Rejects(t *testing.T) {
	const list = "categories"
	valid := paging.EncodeCursor(list, 3)
	tests := []struct {
		name   string
		cursor string
	}{
		{name: "another list", cursor: paging.EncodeCursor("chats", 3)},
		{name: "another filter", cursor: paging.EncodeCursor("categories?classification=income", 3)},
		{name: "empty", cursor: ""},
		{name: "not base64", cursor: "!!!not a cursor!!!"},
		{name: "std base64 with padding", cursor: base64.URLEncoding.EncodeToString([]byte("c2:000000000000:0")) + "="},
		{name: "padded valid cursor", cursor: valid + "=="},
		{name: "base64 of junk", cursor: base64.RawURLEncoding.EncodeToString([]byte("foo"))},
		{name: "truncated", cursor: valid[:len(valid)-3]},
		{name: "unknown version", cursor: rawCursor(t, list, "c4", "3")},
		{name: "c3 without its item", cursor: rawCursor(t, list, "c3", "3")},
		{name: "c3 without an id", cursor: rawCursor(t, list, "c3", "3", "10", "0", "Food")},
		{name: "c3 id longer than the rest", cursor: rawCursor(t, list, "c3", "3", "10", "9", "id1")},
		{name: "c3 offset at its length", cursor: rawCursor(t, list, "c3", "10", "10", "3", "id1Food")},
		{name: "c3 offset past its length", cursor: rawCursor(t, list, "c3", "11", "10", "3", "id1Food")},
		{name: "c3 length with leading zero", cursor: rawCursor(t, list, "c3", "3", "010", "3", "id1Food")},
		{name: "c3 id length with plus sign", cursor: rawCursor(t, list, "c3", "3", "10", "+3", "id1Food")},
		{name: "c3 length too large", cursor: rawCursor(t, list, "c3", "3", "1073741824", "3", "id1Food")},
		{name: "c3 of another list", cursor: paging.EncodeAnchored("chats", 3, 10, paging.Anchor{ID: "id1", Key: "Food"})},
		{name: "longer than 1 KB", cursor: strings.Repeat("A", paging.MaxCursorLen+1)},
		// c1 cursors carried the list's length as a fourth field; a client
		// may still hold one. Its length must not be trusted, and its
		// offset is not read either: the client pages again from the start.
		{name: "c1 cursor", cursor: rawCursor(t, list, "c1", "3", "10")},
		{name: "c1 cursor past its length", cursor: rawCursor(t, list, "c1", "10", "10")},
		{name: "c1 fields without total", cursor: rawCursor(t, list, "c1", "3")},
		{name: "c2 with a total appended", cursor: rawCursor(t, list, "c2", "3", "10")},
		{name: "too few fields", cursor: base64.RawURLEncoding.EncodeToString([]byte("c2:3"))},
		{name: "no offset field", cursor: rawCursor(t, list, "c2")},
		{name: "offset with leading zero", cursor: rawCursor(t, list, "c2", "03")},
		{name: "offset with plus sign", cursor: rawCursor(t, list, "c2", "+3")},
		{name: "negative zero", cursor: rawCursor(t, list, "c2", "-0")},
		{name: "negative offset", cursor: rawCursor(t, list, "c2", "-1")},
		{name: "offset with space", cursor: rawCursor(t, list, "c2", " 3")},
		{name: "hex offset", cursor: rawCursor(t, list, "c2", "0x3")},
		{name: "exponent", cursor: rawCursor(t, list, "c2", "1e1")},
		{name: "empty offset", cursor: rawCursor(t, list, "c2", "")},
		{name: "offset too large", cursor: rawCursor(t, list, "c2", "1073741824")},
		{name: "offset overflows int", cursor: rawCursor(t, list, "c2", "99999999999999999999")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := paging.DecodeCursor(list, tt.cursor)
			if !errors.Is(err, paging.ErrInvalidCursor) {
				t.Errorf("DecodeCursor(%q) = %+v, %v; want ErrInvalidCursor", tt.cursor, got, err)
			}
			if got != (paging.Position{}) {
				t.Errorf("DecodeCursor(%q) position = %+v, want zero on error", tt.cursor, got)
			}
		})
	}
}

// TestDecodeCursor_AcceptsAnyOffset: a cursor cannot know the list's
// current length, so an offset at or past any end is a valid position (the
// window after it is empty once the upstream tells the length), and a
// hand-written cursor of the right format decodes like a genuine one.
func TestDecodeCursor_AcceptsAnyOffset(t *testing.T) {
	const list = "categories"
	for _, off := range []string{"0", "9", "10", "5000", "1073741823"} {
		c := rawCursor(t, list, "c2", off)
		p, err := paging.DecodeCursor(list, c)
		if err != nil {
			t.Errorf("DecodeCursor(c2 offset %s) error: %v", off, err)
			continue
		}
		if again := paging.EncodeCursor(list, p.Offset); again != c {
			t.Errorf("DecodeCursor(c2 offset %s) = %+v, which re-encodes to %q, want %q", off, p, again, c)
		}
	}
}

// TestDecodeCursor_RejectsMalleableBase64 pins that a cursor is accepted in
// exactly one spelling. encoding/base64 ignores CR/LF and, unless Strict,
// non-zero trailing bits, so several strings decode to one valid cursor.
func TestDecodeCursor_RejectsMalleableBase64(t *testing.T) {
	const list = "categories"
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	valid := paging.EncodeCursor(list, 0)
	raw, err := base64.RawURLEncoding.DecodeString(valid)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	// 17 raw bytes: the last symbol carries 2 unused zero bits, which the
	// tweak below sets.
	if len(raw)%3 == 0 || valid[len(valid)-1] == '_' {
		t.Fatalf("cursor %q (%d raw bytes) has no unused trailing bits to set", valid, len(raw))
	}
	tweaked := valid[:len(valid)-1] + string(alphabet[strings.IndexByte(alphabet, valid[len(valid)-1])+1])
	tests := []struct {
		name   string
		cursor string
	}{
		{name: "embedded newline", cursor: valid[:4] + "\n" + valid[4:]},
		{name: "embedded carriage return", cursor: valid[:4] + "\r" + valid[4:]},
		{name: "trailing newline", cursor: valid + "\n"},
		{name: "non-zero trailing bits", cursor: tweaked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := paging.DecodeCursor(list, tt.cursor); err == nil {
				t.Errorf("DecodeCursor(%q) = %+v, nil; want ErrInvalidCursor (only %q is canonical)", tt.cursor, got, valid)
			}
		})
	}
}

// FuzzDecodeCursor checks that DecodeCursor never panics and accepts only
// what the encoders write: any accepted cursor re-encodes to exactly
// itself, is at most MaxCursorLen long, and its offset is in [0, 2^30)
// (below its length, for an anchored one, whose item has an id).
func FuzzDecodeCursor(f *testing.F) {
	lists := []string{"categories", "chats", "chats/6f1c/messages", ""}
	for _, list := range lists {
		for _, off := range []int{0, 19, 49, 1<<30 - 1} {
			f.Add(list, paging.EncodeCursor(list, off))
		}
	}
	f.Add("categories", "")
	f.Add("categories", "YzI6")
	f.Add("categories", rawCursor(f, "categories", "c2", "03"))
	f.Add("categories", rawCursor(f, "categories", "c2", "1073741824"))
	f.Add("categories", rawCursor(f, "categories", "c1", "3", "10"))
	f.Add("categories", rawCursor(f, "categories", "c2", "3", "10"))
	f.Add("chats", paging.EncodeCursor("categories", 1))
	f.Add("categories", paging.EncodeAnchored("categories", 3, 10, paging.Anchor{ID: "id1", Key: "Food: dining"}))
	f.Add("chats", paging.EncodeAnchored("chats", 19, 20, paging.Anchor{ID: "c", Key: "2026-01-12T09:15:00.000000000Z"}))
	f.Add("categories", rawCursor(f, "categories", "c3", "3", "10", "0", "Food"))
	f.Add("categories", rawCursor(f, "categories", "c3", "10", "10", "3", "id1Food"))
	f.Add("categories", rawCursor(f, "categories", "c3", "3", "10", "03", "id1Food"))
	f.Fuzz(func(t *testing.T, list, cursor string) {
		p, err := paging.DecodeCursor(list, cursor)
		if err != nil {
			if !errors.Is(err, paging.ErrInvalidCursor) {
				t.Fatalf("DecodeCursor(%q, %q) error %v does not wrap ErrInvalidCursor", list, cursor, err)
			}
			if p != (paging.Position{}) {
				t.Fatalf("DecodeCursor(%q, %q) = %+v on error, want zero", list, cursor, p)
			}
			return
		}
		if p.Offset < 0 || p.Offset >= 1<<30 || len(cursor) > paging.MaxCursorLen {
			t.Fatalf("DecodeCursor(%q, %q) = %+v, want 0 <= Offset < 2^30 from at most %d bytes", list, cursor, p, paging.MaxCursorLen)
		}
		again := paging.EncodeCursor(list, p.Offset)
		if p.Anchored {
			if p.Offset >= p.Total || p.Item.ID == "" {
				t.Fatalf("DecodeCursor(%q, %q) = %+v, want Offset < Total and an id", list, cursor, p)
			}
			again = paging.EncodeAnchored(list, p.Offset, p.Total, p.Item)
		}
		if again != cursor {
			t.Fatalf("DecodeCursor(%q, %q) = %+v, which re-encodes to %q; want the same string", list, cursor, p, again)
		}
	})
}
