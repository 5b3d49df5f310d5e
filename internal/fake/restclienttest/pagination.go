package restclienttest

import "math"

// Page sizes the upstream uses.
const (
	categoriesDefaultPerPage = 25 // also imports'
	categoriesMaxPerPage     = 100
	chatsPerPage             = 20 // fixed by the server; per_page is ignored
	legacyMessagesPerPage    = 50 // fixed by the server; per_page is ignored
	// From v0.6.6 (pagy 9) the chat controllers' `items:` option is ignored:
	// pagy's default page size, 20, applies to messages too.
	pagyDefaultPerPage = 20
)

// messagesPerPage is the page size of a chat's messages in a release line.
func messagesPerPage(v Version) int {
	if v == Legacy {
		return legacyMessagesPerPage
	}
	return pagyDefaultPerPage
}

// pagination is pagy's block, as the upstream renders it.
type pagination struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// chatPagination is pagy's block as the chat views render it. They read the
// page size from pagy's `items` variable, which pagy 9 (Today) no longer
// has: per_page is then null.
type chatPagination struct {
	Page       int  `json:"page"`
	PerPage    *int `json:"per_page"`
	TotalCount int  `json:"total_count"`
	TotalPages int  `json:"total_pages"`
}

// forChats renders p as the chat views of release line v do.
func (p pagination) forChats(v Version) *chatPagination {
	out := &chatPagination{Page: p.Page, TotalCount: p.TotalCount, TotalPages: p.TotalPages}
	if v == Legacy {
		perPage := p.PerPage
		out.PerPage = &perPage
	}
	return out
}

// pageMeta is the "meta" block of GET /imports (api/v1/imports/index.json.jbuilder):
// pagy's page, next and prev (null at the ends), pages and count, and the
// per_page the controller settled on.
type pageMeta struct {
	CurrentPage int  `json:"current_page"`
	NextPage    *int `json:"next_page"`
	PrevPage    *int `json:"prev_page"`
	TotalPages  int  `json:"total_pages"`
	TotalCount  int  `json:"total_count"`
	PerPage     int  `json:"per_page"`
}

// meta renders p as a "meta" block. An overflowing page has already been
// moved to the last one (pagy's overflow: :last_page), so next_page is null
// there.
func (p pagination) meta() pageMeta {
	m := pageMeta{CurrentPage: p.Page, TotalPages: p.TotalPages, TotalCount: p.TotalCount, PerPage: p.PerPage}
	if p.Page < p.TotalPages {
		next := p.Page + 1
		m.NextPage = &next
	}
	if p.Page > 1 {
		prev := p.Page - 1
		m.PrevPage = &prev
	}
	return m
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

// categoriesPerPage reads the categories' (and the imports') per_page: 1..100
// is used as is and anything else (0, 101, 500, junk, missing) silently
// becomes 25.
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
