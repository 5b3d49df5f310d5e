package planner

import (
	"context"
	"strings"
	"sync"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// The described resources (restclient.Collections), planned alike from
// their descriptions: a window of the list with the fewest pages, its
// objects looked up together when the selection reads what the list did
// not send, one show by id, the kind of every id handed out, and what the
// server's router lacks. The resources tuned by hand (the category tree,
// chats and their messages) have their own files.

// DefaultListPage is the window of a described list when neither first
// nor last is given.
const DefaultListPage = 25

// ParseList checks a described list's arguments locally: the window, and
// each filter value by its description (a value Sure would choke on, or
// that matches nothing, costs no call, as a *badinput.Error).
func ParseList(spec *resource.Spec, f resource.Values, args paging.Args) (paging.Request, error) {
	if err := spec.Check(f); err != nil {
		return paging.Request{}, err
	}
	return paging.Parse(spec.ListName(f), args, DefaultListPage)
}

// List answers a window of a described list with the fewest pages (its
// paging style's: pagy pages of up to its largest per_page, its fixed
// pages, or the whole unpaginated list). Against a server whose router
// lacks the list, it is an *UnsupportedError, at no call once that is
// known.
//
// The objects of the window for which lookup says the selection reads
// what the list did not send are looked up together (one show each, in
// parallel, reserved as one batch), so that their fields answer from the
// operation's memo. A nil lookup looks nothing up.
func List[L, S any](ctx context.Context, l *Planner, c *restclient.Collection[L, S], f resource.Values, r paging.Request, lookup func(*L) bool) (paging.Result[*L], error) {
	if err := l.listMissing(c.Spec); err != nil {
		return paging.Result[*L]{}, err
	}
	kind := KindOf(c.Spec)
	fetch := func(ctx context.Context, page, perPage int) (paging.Page[*L], error) {
		p, err := c.List(ctx, l.client, restclient.ListOptions{Page: page, PerPage: perPage, Filters: f})
		if err = l.learnList(c.Spec, err); err != nil {
			return paging.Page[*L]{}, err
		}
		items := make([]*L, len(p.Items))
		for i := range p.Items {
			items[i] = &p.Items[i]
			l.remember(kind, c.ID(items[i]))
		}
		pg := p.Pagination
		return paging.Page[*L]{Items: items, Page: pg.Page, PerPage: pg.Size(len(items)), Total: pg.TotalCount}, nil
	}
	order := listOrder(c)
	var (
		res paging.Result[*L]
		err error
	)
	switch c.Paging.Style {
	case resource.Unpaginated:
		var all paging.Page[*L]
		if all, err = fetch(ctx, 0, 0); err == nil {
			res, err = paging.Slice(r, all.Items, order)
		}
	default:
		src := paging.Source[*L]{Reserve: l.budget.Reserve, Order: order, Fetch: fetch}
		if c.Paging.Style == resource.FixedPages {
			src.FixedPageSize = c.Paging.PerPage
		} else {
			src.MaxPerPage = c.Paging.MaxPerPage
		}
		res, err = paging.Load(ctx, r, src)
	}
	if err != nil || lookup == nil {
		return res, err
	}
	var wanted []string
	for _, it := range res.Items {
		if lookup(it) {
			wanted = append(wanted, c.ID(it))
		}
	}
	if len(wanted) > 0 {
		l.lookUpShows(ctx, c, wanted)
	}
	return res, nil
}

// listOrder is the order of a described list, for cursors that name
// their item.
func listOrder[L, S any](c *restclient.Collection[L, S]) paging.Order[*L] {
	cmp := strings.Compare
	if c.Order.Desc {
		cmp = func(a, b string) int { return strings.Compare(b, a) }
	}
	return paging.Order[*L]{
		Identify: func(it *L) paging.Anchor { return paging.Anchor{ID: c.ID(it), Key: c.Key(it)} },
		Compare:  cmp,
		TieByID:  c.Order.TieByID,
	}
}

// lookUpShows reads the objects of a window with one show each, in
// parallel, when the budget holds them all; the answers (or errors) stay
// in the operation's memo for the fields that asked. When it does not,
// the fields ask one by one, and those past the budget are refused.
func (l *Planner) lookUpShows(ctx context.Context, c restclient.Described, ids []string) {
	ctx, release, err := l.budget.Reserve(ctx, len(ids))
	if err != nil {
		return
	}
	defer release()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			// The outcome, answer or error, stays in the memo for the
			// field that asks; a panic must not end the process.
			defer recoverInto(new(error))
			_, _ = c.ShowAny(ctx, l.client, id)
		})
	}
	wg.Wait()
}

// Show reads one object of a described resource with one call (none
// when the operation read it already); an id that names none is a
// *NotFoundError of its kind. Against a server without the show (its
// router's 404, learnt once), an object its list sends whole
// (Collection.FromList) is found in the list: its first page, and the
// rest only when the list is longer and does not hold it (reserved
// whole); any other is an *UnsupportedError.
func Show[L, S any](ctx context.Context, l *Planner, c *restclient.Collection[L, S], id string) (*S, error) {
	obj, err := l.show(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return obj.(*S), nil // a *S, as the collection's ShowAny and ShownFromList give it
}

// ShowAny is Show for a resource known by its description only (a
// subscription's poll): the object is a *S of its collection.
func (l *Planner) ShowAny(ctx context.Context, spec *resource.Spec, id string) (any, error) {
	c := restclient.CollectionOf(spec)
	if c == nil {
		return nil, &UnsupportedError{What: "lookup of one " + spec.Kind}
	}
	return l.show(ctx, c, id)
}

// show is Show with the collection's types erased.
func (l *Planner) show(ctx context.Context, c restclient.Described, id string) (any, error) {
	spec := c.Describes()
	if l.showMissing(spec) {
		return l.showFromList(ctx, c, id)
	}
	obj, err := c.ShowAny(ctx, l.client, id)
	if spec.ShowSince != "" {
		l.learnRoute(spec.ShowRouteTrait(), err)
		if restclient.IsNoRoute(err) {
			return l.showFromList(ctx, c, id)
		}
	}
	if err != nil {
		return nil, notFound(err, spec.Kind, id)
	}
	l.remember(KindOf(spec), id)
	return obj, nil
}

// showMissing reports whether the server's router is known to lack
// spec's show.
func (l *Planner) showMissing(spec *resource.Spec) bool {
	return spec.ShowSince != "" && l.routeMissing(spec.ShowRouteTrait())
}

// showFromList finds id in the list of a server without the show.
func (l *Planner) showFromList(ctx context.Context, c restclient.Described, id string) (any, error) {
	spec := c.Describes()
	if !c.ListStandsForShow() || spec.List == "" {
		return nil, &UnsupportedError{What: "lookup of one " + spec.Kind, Since: string(spec.ShowSince)}
	}
	size := spec.Paging.Largest()
	read := func(ctx context.Context, page int) (any, int, error) {
		p, err := c.ListAny(ctx, l.client, restclient.ListOptions{Page: page, PerPage: size})
		if err = l.learnList(spec, err); err != nil {
			return nil, 0, err
		}
		l.remember(KindOf(spec), p.IDs...)
		for i, got := range p.IDs {
			if got == id {
				return c.ShownFromList(p.Items[i]), 0, nil
			}
		}
		return nil, p.Pagination.TotalCount, nil
	}
	obj, total, err := read(ctx, 1)
	if obj != nil || err != nil {
		return obj, err
	}
	if size > 0 && total > size {
		rest := (total+size-1)/size - 1
		ctx, release, err := l.budget.Reserve(ctx, rest)
		if err != nil {
			return nil, err
		}
		defer release()
		found := make([]any, rest)
		errs := make([]error, rest)
		var wg sync.WaitGroup
		for i := range rest {
			wg.Go(func() {
				defer recoverInto(&errs[i])
				found[i], _, errs[i] = read(ctx, i+2)
			})
		}
		wg.Wait()
		for i := range rest {
			if found[i] != nil {
				return found[i], nil
			}
			if errs[i] != nil {
				return nil, errs[i]
			}
		}
	}
	return nil, &NotFoundError{Kind: spec.Kind, ID: id}
}

// listMissing is the error of a list the server's router is known to
// lack, or nil.
func (l *Planner) listMissing(spec *resource.Spec) error {
	if spec.ListSince != "" && l.routeMissing(spec.RouteTrait()) {
		return unsupportedList(spec)
	}
	return nil
}

// learnList records what a read of spec's list that ended with err showed
// of the server's router, and returns err, or the *UnsupportedError of a
// list the router lacks.
func (l *Planner) learnList(spec *resource.Spec, err error) error {
	if spec.ListSince == "" {
		return err
	}
	l.learnRoute(spec.RouteTrait(), err)
	if restclient.IsNoRoute(err) {
		return unsupportedList(spec)
	}
	return err
}

// unsupportedList is the error of a list the server lacks.
func unsupportedList(spec *resource.Spec) error {
	return &UnsupportedError{What: "list of " + string(spec.Name), Since: string(spec.ListSince)}
}
