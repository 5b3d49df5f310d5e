package restclienttest

import (
	"strings"

	"github.com/google/uuid"
)

// seedNamespace is the fixed UUID namespace of every id the fake mints. Ids are
// name-based (uuid.NewSHA1), e.g. seedID("demo/category/Food & Drink"), so they
// are the same on every run and in every Server.
var seedNamespace = uuid.MustParse("5c1d3a8e-7f42-4b6a-9e0d-2a6f4c8b1e37")

// seedID derives the deterministic id of a seeded (or created) record.
func seedID(name string) string {
	return uuid.NewSHA1(seedNamespace, []byte(name)).String()
}

// castUUID converts s the way ActiveRecord's PostgreSQL uuid type does before
// a query: a string matching Rails' ACCEPTABLE_UUID
// (\A(\{)?([a-fA-F0-9]{4}-?){8}(?(1)\}|)\z — optional braces, 32 hex digits in
// groups of four, each group optionally followed by a hyphen) is normalised to
// the canonical lowercase form; anything else becomes NULL (ok is false).
//
// That cast is the reason behind two upstream behaviours: an id that is not a
// UUID is simply "not found", and a parent_id filter that is not a UUID turns
// into "parent_id IS NULL", listing the root categories.
func castUUID(s string) (canonical string, ok bool) {
	inner := s
	if strings.HasPrefix(s, "{") {
		if len(s) < 2 || !strings.HasSuffix(s, "}") {
			return "", false
		}
		inner = s[1 : len(s)-1]
	}
	hex := make([]byte, 0, 32)
	for i := 0; i < len(inner); {
		if len(hex) == 32 || i+4 > len(inner) {
			return "", false
		}
		for _, c := range []byte(inner[i : i+4]) {
			switch {
			case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
				hex = append(hex, c)
			case 'A' <= c && c <= 'F':
				hex = append(hex, c+('a'-'A'))
			default:
				return "", false
			}
		}
		i += 4
		if i < len(inner) && inner[i] == '-' {
			i++
		}
	}
	if len(hex) != 32 {
		return "", false
	}
	h := string(hex)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}
