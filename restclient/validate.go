package restclient

import (
	"errors"
	"fmt"
)

// An answer of 2xx that parses as JSON is not yet an answer of the Sure
// API: a proxy, another app at the upstream URL, or a broken server may
// send `{"hello":"world"}` or `"total_count": -7` with status 200, and
// decoding alone would turn it into an empty list of 0 items. Each answer
// type therefore checks, once after decoding (decodeShared, write), that
// it holds what its endpoint always sends and no value Sure can never
// send. A failed check is an *UnavailableError with NotSure (reason
// "not_sure"), as an undecodable answer is: never data.
//
// The checks read the decoded values only (no second pass over the body,
// no allocation unless they fail). Go's zero values hide an absent key, so
// presence is told by what Sure always sends in it: a list member decodes
// to a non-nil slice even when empty (`[]`), an object's "id" is never
// empty, and a pagy block always has "page" and "total_pages" of at least
// 1, so an absent block (all zero) fails the page check. Keys Sure sends
// only in some versions (a chat's "pagination" and "messages", a
// category's "classification", "per_page" null since v0.6.6) and unknown
// members are not asked for.

// validator is an answer type that can tell whether a decoded value is
// one the Sure API sends.
type validator interface {
	validate() error
}

// notSureError says why a decoded 2xx answer is not one of the Sure API.
type notSureError struct{ why string }

func (e *notSureError) Error() string { return "not an answer of the Sure API: " + e.why }

// notSure returns a *notSureError; it allocates only when an answer fails.
func notSure(format string, args ...any) error {
	return &notSureError{why: fmt.Sprintf(format, args...)}
}

// validateAnswer runs out's checks, when its type has some.
func validateAnswer(out any) error {
	if v, ok := out.(validator); ok {
		return v.validate()
	}
	return nil
}

// unusableAnswer is the error of a 2xx answer of op that could not be
// decoded (err from decodeAnswer) or is not Sure's (a *notSureError).
func unusableAnswer(op string, status int, err error) error {
	if ns := (*notSureError)(nil); !errors.As(err, &ns) {
		err = fmt.Errorf("decode answer: %w", err)
	}
	return &UnavailableError{Op: op, Status: status, Err: err, NotSure: true}
}

// paginationProblem tells what is impossible in a pagy block (or the
// imports' "meta" block, named block) of a page that holds items items, or
// "" when nothing is. per_page 0 is "not given" (Sure sends null for chats
// and messages since v0.6.6). A page past total_pages is pagy's `overflow:
// :empty_page` when it holds nothing (Sure answers the last page instead,
// but a server configured otherwise may not): only a page past the end
// that holds items is impossible.
func paginationProblem(block string, p Pagination, items int) string {
	switch {
	case p == Pagination{}:
		return fmt.Sprintf("no %q block", block)
	case p.Page < 1:
		return fmt.Sprintf("%s: page %d (absent or below 1)", block, p.Page)
	case p.TotalPages < 1:
		return fmt.Sprintf("%s: total_pages %d (absent or below 1)", block, p.TotalPages)
	case p.TotalCount < 0:
		return fmt.Sprintf("%s: negative total_count %d", block, p.TotalCount)
	case p.PerPage < 0:
		return fmt.Sprintf("%s: negative per_page %d", block, p.PerPage)
	case p.PerPage > 0 && items > p.PerPage:
		return fmt.Sprintf("%s: %d items on a page of per_page %d", block, items, p.PerPage)
	case p.Page > p.TotalPages && items > 0:
		return fmt.Sprintf("%s: page %d of total_pages %d holds items (%d)", block, p.Page, p.TotalPages, items)
	}
	return ""
}

// validateIn checks a category: a show, a POST /categories answer, or an
// element of a list (where names which, for the error).
func (c *Category) validateIn(where string) error {
	switch {
	case c.ID == "":
		return notSure("%s without an id", where)
	case c.SubcategoriesCount < 0:
		return notSure("%s %s: negative subcategories_count %d", where, c.ID, c.SubcategoriesCount)
	}
	return nil
}

func (c *Category) validate() error { return c.validateIn("category") }

func (p *CategoryPage) validate() error {
	if p.Categories == nil {
		return notSure(`no "categories" list`)
	}
	if why := paginationProblem("pagination", p.Pagination, len(p.Categories)); why != "" {
		return notSure("%s", why)
	}
	for i := range p.Categories {
		if err := p.Categories[i].validateIn("a listed category"); err != nil {
			return err
		}
	}
	return nil
}

func (p *ChatPage) validate() error {
	if p.Chats == nil {
		return notSure(`no "chats" list`)
	}
	if why := paginationProblem("pagination", p.Pagination, len(p.Chats)); why != "" {
		return notSure("%s", why)
	}
	for i := range p.Chats {
		switch c := &p.Chats[i]; {
		case c.ID == "":
			return notSure("a listed chat without an id")
		case c.MessageCount < 0:
			return notSure("chat %s: negative message_count %d", c.ID, c.MessageCount)
		}
	}
	return nil
}

// validate checks a chat as GET /chats/{id}, POST /chats and PATCH
// /chats/{id} answer it: an id; its pagination block, when it has one
// (v0.7.x writes answer none, and "messages": []); an id on each message.
func (c *Chat) validate() error {
	if c.ID == "" {
		return notSure("chat without an id")
	}
	if c.Pagination != nil {
		if why := paginationProblem("pagination", *c.Pagination, len(c.Messages)); why != "" {
			return notSure("chat %s: %s", c.ID, why)
		}
	}
	for i := range c.Messages {
		if c.Messages[i].ID == "" {
			return notSure("chat %s: a message without an id", c.ID)
		}
	}
	return nil
}

// validate checks the answer of POST /chats/{id}/messages.
func (m *Message) validate() error {
	if m.ID == "" {
		return notSure("message without an id")
	}
	return nil
}
