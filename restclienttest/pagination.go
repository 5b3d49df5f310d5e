package restclienttest

import "math"

// Page sizes the upstream uses.
const (
	categoriesDefaultPerPage = 25
	categoriesMaxPerPage     = 100
	chatsPerPage             = 20 // fixed by the server; per_page is ignored
	messagesPerPage          = 50 // fixed by the server; per_page is ignored
)

// pagination is pagy's block, as the upstream renders it.
type pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// paginate computes the page of total items that the upstream answers for the
// requested page, and the [from, to) slice bounds of its items.
//
// Quirks kept: a page below 1 is 1; a page past the end answers the LAST page
// and reports it (pagy's overflow: :last_page), never an empty one; there is
// always at least one page, even with no items.
func paginate(total, page, perPage int) (p pagination, from, to int) {
	pages := max(1, (total+perPage-1)/perPage)
	page = min(max(page, 1), pages)
	from = min((page-1)*perPage, total)
	to = min(from+perPage, total)
	return pagination{Page: page, PerPage: perPage, TotalCount: total, TotalPages: pages}, from, to
}

// pageParam reads `page` as the upstream does: String#to_i, then anything
// below 1 becomes 1 (paginate clamps).
func pageParam(raw string) int { return rubyToI(raw) }

// categoriesPerPage reads the categories' per_page: 1..100 is used as is and
// anything else (0, 101, 500, junk, missing) silently becomes 25.
func categoriesPerPage(raw string) int {
	n := rubyToI(raw)
	if n < 1 || n > categoriesMaxPerPage {
		return categoriesDefaultPerPage
	}
	return n
}

// rubyToI mimics Ruby's String#to_i, which the upstream applies to paging
// params: leading whitespace is skipped, then an optional sign and the longest
// run of decimal digits (single underscores allowed between digits) are read;
// the rest is ignored, and no digits at all is 0. So "3abc" is 3, " 7" is 7,
// "1_0" is 10 and "abc" is 0. Values beyond int saturate (Ruby has bignums;
// either way they overflow to the last page or fall back to the default).
func rubyToI(s string) int {
	i := 0
	for i < len(s) && isRubySpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '_' && i > 0 && isDigit(s[i-1]) && i+1 < len(s) && isDigit(s[i+1]) {
			continue
		}
		if !isDigit(c) {
			break
		}
		d := int(c - '0')
		if n > (math.MaxInt-d)/10 {
			n = math.MaxInt
			continue
		}
		n = n*10 + d
	}
	if neg {
		return -n
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isRubySpace(c byte) bool {
	return c == ' ' || ('\t' <= c && c <= '\r')
}
