package paging_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"suregql/paging"
)

// rawCursor builds a cursor from raw fields, borrowing the list tag of a
// genuine cursor of list, so that tests can craft malformed positions.
func rawCursor(t testing.TB, list, version, offset, total string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(paging.EncodeCursor(list, 0, 1))
	if err != nil {
		t.Fatalf("decode a genuine cursor: %v", err)
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 4 {
		t.Fatalf("genuine cursor %q has %d fields, want 4", raw, len(parts))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(version + ":" + parts[1] + ":" + offset + ":" + total))
}

func TestCursor_RoundTrip(t *testing.T) {
	tests := []struct {
		name          string
		list          string
		offset, total int
	}{
		{name: "first item", list: "categories", offset: 0, total: 1},
		{name: "last item of a page", list: "chats", offset: 19, total: 20},
		{name: "filtered list", list: "categories?classification=income&parent_id=6f1c", offset: 41, total: 120},
		{name: "empty list name", list: "", offset: 5, total: 10},
		{name: "largest position", list: "categories", offset: 1<<30 - 2, total: 1<<30 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := paging.EncodeCursor(tt.list, tt.offset, tt.total)
			if strings.ContainsAny(c, "+/=\n") {
				t.Errorf("EncodeCursor = %q, want URL-safe text without padding", c)
			}
			got, err := paging.DecodeCursor(tt.list, c)
			if err != nil {
				t.Fatalf("DecodeCursor(%q) error: %v", c, err)
			}
			want := paging.Position{Offset: tt.offset, Total: tt.total}
			if got != want {
				t.Errorf("DecodeCursor(EncodeCursor(%d, %d)) = %+v, want %+v", tt.offset, tt.total, got, want)
			}
		})
	}
}

func TestDecodeCursor_Rejects(t *testing.T) {
	const list = "categories"
	valid := paging.EncodeCursor(list, 3, 10)
	tests := []struct {
		name   string
		cursor string
	}{
		{name: "another list", cursor: paging.EncodeCursor("chats", 3, 10)},
		{name: "another filter", cursor: paging.EncodeCursor("categories?classification=income", 3, 10)},
		{name: "empty", cursor: ""},
		{name: "not base64", cursor: "!!!not a cursor!!!"},
		{name: "std base64 with padding", cursor: base64.URLEncoding.EncodeToString([]byte("c1:000000000000:0:1")) + "="},
		{name: "padded valid cursor", cursor: valid + "=="},
		{name: "base64 of junk", cursor: base64.RawURLEncoding.EncodeToString([]byte("foo"))},
		{name: "truncated", cursor: valid[:len(valid)-3]},
		{name: "unknown version", cursor: rawCursor(t, list, "c2", "3", "10")},
		{name: "too few fields", cursor: base64.RawURLEncoding.EncodeToString([]byte("c1:3:10"))},
		{name: "too many fields", cursor: rawCursor(t, list, "c1", "3", "10:0")},
		{name: "offset with leading zero", cursor: rawCursor(t, list, "c1", "03", "10")},
		{name: "total with leading zero", cursor: rawCursor(t, list, "c1", "3", "010")},
		{name: "offset with plus sign", cursor: rawCursor(t, list, "c1", "+3", "10")},
		{name: "negative zero", cursor: rawCursor(t, list, "c1", "-0", "10")},
		{name: "negative offset", cursor: rawCursor(t, list, "c1", "-1", "10")},
		{name: "offset with space", cursor: rawCursor(t, list, "c1", " 3", "10")},
		{name: "hex offset", cursor: rawCursor(t, list, "c1", "0x3", "10")},
		{name: "exponent", cursor: rawCursor(t, list, "c1", "1e1", "100")},
		{name: "empty offset", cursor: rawCursor(t, list, "c1", "", "10")},
		{name: "offset equals total", cursor: paging.EncodeCursor(list, 10, 10)},
		{name: "offset beyond total", cursor: paging.EncodeCursor(list, 11, 10)},
		{name: "empty list", cursor: paging.EncodeCursor(list, 0, 0)},
		{name: "total too large", cursor: rawCursor(t, list, "c1", "3", "1073741824")},
		{name: "offset overflows int", cursor: rawCursor(t, list, "c1", "99999999999999999999", "10")},
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

// TestDecodeCursor_RejectsMalleableBase64 pins that a cursor is accepted in
// exactly one spelling. encoding/base64 ignores CR/LF and, unless Strict,
// non-zero trailing bits, so several strings decode to one valid cursor.
func TestDecodeCursor_RejectsMalleableBase64(t *testing.T) {
	const list = "categories"
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	valid := paging.EncodeCursor(list, 0, 1) // 19 raw bytes: the last symbol carries 4 unused zero bits
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
// what EncodeCursor writes: any accepted cursor re-encodes to exactly itself.
func FuzzDecodeCursor(f *testing.F) {
	lists := []string{"categories", "chats", "chats/6f1c/messages", ""}
	for _, list := range lists {
		for _, pos := range [][2]int{{0, 1}, {19, 20}, {49, 300}, {1<<30 - 2, 1<<30 - 1}} {
			f.Add(list, paging.EncodeCursor(list, pos[0], pos[1]))
		}
	}
	f.Add("categories", "")
	f.Add("categories", "YzE6")
	f.Add("categories", rawCursor(f, "categories", "c1", "03", "10"))
	f.Add("categories", rawCursor(f, "categories", "c1", "3", "3"))
	f.Add("chats", paging.EncodeCursor("categories", 1, 2))
	f.Fuzz(func(t *testing.T, list, cursor string) {
		p, err := paging.DecodeCursor(list, cursor)
		if err != nil {
			if !errors.Is(err, paging.ErrInvalidCursor) {
				t.Fatalf("DecodeCursor(%q, %q) error %v does not wrap ErrInvalidCursor", list, cursor, err)
			}
			return
		}
		if p.Offset < 0 || p.Offset >= p.Total || p.Total >= 1<<30 {
			t.Fatalf("DecodeCursor(%q, %q) = %+v, want 0 <= Offset < Total < 2^30", list, cursor, p)
		}
		if again := paging.EncodeCursor(list, p.Offset, p.Total); again != cursor {
			t.Fatalf("DecodeCursor(%q, %q) = %+v, which re-encodes to %q; want the same string", list, cursor, p, again)
		}
	})
}
