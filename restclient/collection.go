package restclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/suregql/suregql/restclient/resource"
)

// Collection is a described resource (its resource.Spec) with the Go types
// of its list's objects (L) and of its show's (S): its list and show are
// read, decoded and checked through the description, by the same code for
// every resource. A resource described so costs its Spec, its types and
// this value: no endpoint method of its own.
type Collection[L, S any] struct {
	*resource.Spec
	// ID returns a listed object's id, ShowID a shown one's: an object
	// without one is no answer of Sure's.
	ID     func(*L) string
	ShowID func(*S) string
	// Key returns a listed object's value of Spec.Order.By as text that
	// sorts as the list does in ascending order (a time by TimeKey).
	Key func(*L) string
	// Settled and ShowSettled report whether an object has settled
	// (Spec.Fresh.Settles); nil: always.
	Settled     func(*L) bool
	ShowSettled func(*S) bool
	// FromList, when set, is the show's object an element of the list
	// stands for (the same object, when the list sends all of it): a
	// server without the show is answered from the list. nil: none.
	FromList func(*L) *S
}

// Page is one page of a described list.
type Page[T any] struct {
	Items []T
	// Pagination is the page's paging block as pagy spells it (a meta
	// block read into it); for an unpaginated list, one page of it all.
	Pagination Pagination
}

// ListOptions are the page and the filters of one read of a list. Zero
// values are not sent; PerPage is capped at the largest the list honours.
type ListOptions struct {
	Page, PerPage int
	Filters       resource.Values
}

// List fetches one page of the collection's list; the result is shared
// and read-only (see Client). A filter value its description refuses
// costs no call (a *badinput.Error).
func (c *Collection[L, S]) List(ctx context.Context, cl *Client, opts ListOptions) (*Page[L], error) {
	if err := c.Check(opts.Filters); err != nil {
		return nil, err
	}
	q := c.Query(opts.Filters)
	if opts.Page > 0 && c.Paging.Style != resource.Unpaginated {
		q.Set("page", strconv.Itoa(opts.Page))
	}
	if opts.PerPage > 0 && c.Paging.Style == resource.Pagy {
		q.Set("per_page", strconv.Itoa(min(opts.PerPage, c.Paging.MaxPerPage)))
	}
	return getAs(ctx, cl, c.Spec.List, q, c.decodeList)
}

// Show fetches one object by id (a UUID, checked before any call); the
// result is shared and read-only.
func (c *Collection[L, S]) Show(ctx context.Context, cl *Client, id string) (*S, error) {
	id, err := CanonicalID("id", id)
	if err != nil {
		return nil, err
	}
	return getAs(ctx, cl, c.ShowPath(url.PathEscape(id)), nil, c.decodeShow)
}

// decodeList decodes and checks a page of the list, as its envelope holds
// it.
func (c *Collection[L, S]) decodeList(body []byte) (*Page[L], error) {
	p := new(Page[L])
	env := c.Envelope
	if env.Items == "" {
		if err := decodeAnswer(body, &p.Items); err != nil {
			return nil, err
		}
	} else {
		var block pagingBlock
		err := decodeMembers(body, func(name string) any {
			switch name {
			case env.Items:
				return &p.Items
			case env.Block:
				return &block
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		p.Pagination = block.pagination(env.Shape)
	}
	if c.Paging.Style == resource.Unpaginated {
		// The whole list: one page of all of it, as pagy would say.
		p.Pagination = Pagination{Page: 1, PerPage: len(p.Items), TotalCount: len(p.Items), TotalPages: 1}
	}
	return p, c.checkPage(p)
}

// checkPage tells whether a decoded page is one Sure sends (see
// validate.go): its list, its paging block, an id on every object.
func (c *Collection[L, S]) checkPage(p *Page[L]) error {
	if p.Items == nil {
		if c.Envelope.Items == "" {
			return notSure("no list of %s", c.Name)
		}
		return notSure("no %q list", c.Envelope.Items)
	}
	if c.Paging.Style != resource.Unpaginated {
		if why := paginationProblem(c.Envelope.Block, p.Pagination, len(p.Items)); why != "" {
			return notSure("%s", why)
		}
	}
	for i := range p.Items {
		if c.ID(&p.Items[i]) == "" {
			return notSure("a listed %s without an id", c.Kind)
		}
		if err := validateAnswer(&p.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// decodeShow decodes and checks a show answer.
func (c *Collection[L, S]) decodeShow(body []byte) (*S, error) {
	s := new(S)
	var err error
	if c.Envelope.Object == "" {
		err = decodeAnswer(body, s)
	} else {
		err = decodeMembers(body, func(name string) any {
			if name == c.Envelope.Object {
				return s
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	if c.ShowID(s) == "" {
		if c.Envelope.Object != "" {
			return nil, notSure("no %q %s with an id", c.Envelope.Object, c.Kind)
		}
		return nil, notSure("%s without an id", c.Kind)
	}
	return s, validateAnswer(s)
}

// settled reports whether resp, a 200 answer of the collection's list
// (show false) or show, holds only settled objects.
func (c *Collection[L, S]) settled(resp *Response, show bool) bool {
	if resp == nil || resp.Status != http.StatusOK {
		return false
	}
	if !c.Fresh.Settles {
		return true
	}
	if show {
		s, err := decodeSharedAs(resp, c.decodeShow)
		return err == nil && (c.ShowSettled == nil || c.ShowSettled(s))
	}
	p, err := decodeSharedAs(resp, c.decodeList)
	if err != nil {
		return false
	}
	for i := range p.Items {
		if c.Settled != nil && !c.Settled(&p.Items[i]) {
			return false
		}
	}
	return true
}

// pagingBlock is a list's paging block in either shape Sure sends.
type pagingBlock struct {
	Page        int `json:"page"`
	CurrentPage int `json:"current_page"`
	PerPage     int `json:"per_page"`
	TotalCount  int `json:"total_count"`
	TotalPages  int `json:"total_pages"`
}

// pagination reads the block as its shape spells it.
func (b pagingBlock) pagination(shape resource.BlockShape) Pagination {
	page := b.Page
	if shape == resource.MetaBlock {
		page = b.CurrentPage
	}
	return Pagination{Page: page, PerPage: b.PerPage, TotalCount: b.TotalCount, TotalPages: b.TotalPages}
}

// decodeMembers decodes a JSON object member by member, in one pass: each
// member into what into returns for its name, skipping those it returns
// nil for. As decodeAnswer (which runs it), it replaces invalid UTF-8,
// takes a repeated member, and refuses anything but one object.
func decodeMembers(body []byte, into func(name string) any) error {
	m := members(into)
	return decodeAnswer(body, &m)
}

// members reads a JSON object for decodeMembers, on the decoder
// decodeAnswer made over the body (no copy of it).
type members func(name string) any

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (into members) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("a JSON %v where an object was expected", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if out := into(name.String()); out != nil {
			err = jsonv2.UnmarshalDecode(dec, out)
		} else {
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.ReadToken()
	return err
}

// Described is a Collection with its types erased, for the code that
// serves every described resource alike (node lookups, subscriptions'
// polls, the cache's windows).
type Described interface {
	// Describes returns the collection's description.
	Describes() *resource.Spec
	// ListAny fetches a page of the list: its objects (each a *L) and
	// their ids, in order.
	ListAny(ctx context.Context, cl *Client, opts ListOptions) (AnyPage, error)
	// ShowAny fetches one object (a *S).
	ShowAny(ctx context.Context, cl *Client, id string) (any, error)
	// ShownFromList returns the show's object (a *S) an element of the
	// list (a *L) stands for, or nil when the list does not send it
	// (Collection.FromList); ListStandsForShow whether it does.
	ShownFromList(item any) any
	ListStandsForShow() bool
	// SettledAnswer reports whether resp, a GET of the list (show false)
	// or the show, holds only settled objects: one that does not may
	// change by itself, and is never kept fresh.
	SettledAnswer(resp *Response, show bool) bool
}

// AnyPage is a page of a described list with its objects' types erased.
type AnyPage struct {
	IDs        []string
	Items      []any
	Pagination Pagination
}

// Describes implements Described.
func (c *Collection[L, S]) Describes() *resource.Spec { return c.Spec }

// ListAny implements Described.
func (c *Collection[L, S]) ListAny(ctx context.Context, cl *Client, opts ListOptions) (AnyPage, error) {
	p, err := c.List(ctx, cl, opts)
	if err != nil {
		return AnyPage{}, err
	}
	out := AnyPage{IDs: make([]string, len(p.Items)), Items: make([]any, len(p.Items)), Pagination: p.Pagination}
	for i := range p.Items {
		out.IDs[i], out.Items[i] = c.ID(&p.Items[i]), &p.Items[i]
	}
	return out, nil
}

// ShowAny implements Described.
func (c *Collection[L, S]) ShowAny(ctx context.Context, cl *Client, id string) (any, error) {
	return c.Show(ctx, cl, id)
}

// ShownFromList implements Described.
func (c *Collection[L, S]) ShownFromList(item any) any {
	it, ok := item.(*L)
	if c.FromList == nil || !ok {
		return nil
	}
	return c.FromList(it)
}

// ListStandsForShow implements Described.
func (c *Collection[L, S]) ListStandsForShow() bool { return c.FromList != nil }

// SettledAnswer implements Described.
func (c *Collection[L, S]) SettledAnswer(resp *Response, show bool) bool {
	return c.settled(resp, show)
}

// Collections are the described resources the client reads generically,
// by description: a new one is one more line here (and in resource.All).
var Collections = []Described{Imports, Accounts}

// CollectionOf returns the generic collection of a resource, or nil for
// one read by hand-written endpoints (categories, chats).
func CollectionOf(spec *resource.Spec) Described {
	for _, c := range Collections {
		if c.Describes() == spec {
			return c
		}
	}
	return nil
}

// timeKeyLayout has a fixed width, so that keys of times in years 0..9999
// sort as text in time order.
const timeKeyLayout = "2006-01-02T15:04:05.000000000Z"

// TimeKey is a time as an order key (Collection.Key): text that sorts as
// the times do.
func TimeKey(t time.Time) string { return t.UTC().Format(timeKeyLayout) }
