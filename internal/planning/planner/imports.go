package planner

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/suregql/suregql/internal/limits/badinput"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// ImportFilter is the filter of the imports list; the zero value is every
// import of the family.
type ImportFilter struct {
	Status string
	Type   string
}

// List names the list for cursors: a cursor is valid only on the list
// (and filter) it was made for.
func (f ImportFilter) List() string {
	return "imports?" + url.Values{"status": {f.Status}, "type": {f.Type}}.Encode()
}

// DefaultImportPage is the window of the imports list when neither first
// nor last is given.
const DefaultImportPage = 25

// ImportStatuses are the states of an import (Sure's Import#status): a
// status filter names one of them.
var ImportStatuses = []string{"pending", "importing", "complete", "failed", "reverting", "revert_failed"}

// maxImportType bounds the type filter: a Ruby class name such as
// TransactionImport.
const maxImportType = 64

// ParseImports checks the imports list's arguments locally: the window, a
// status Sure has, and a type that can be a class name (letters, digits,
// "::"); anything else matches no import and costs no call, as a
// *badinput.Error.
func ParseImports(f ImportFilter, args paging.Args) (paging.Request, error) {
	if f.Status != "" && !slices.Contains(ImportStatuses, f.Status) {
		return paging.Request{}, badinput.New("status", badinput.Quote(f.Status)+" is not an import status: one of "+strings.Join(ImportStatuses, ", "))
	}
	if f.Type != "" && !className(f.Type) {
		return paging.Request{}, badinput.New("type", badinput.Quote(f.Type)+" is not an import type such as TransactionImport")
	}
	return paging.Parse(f.List(), args, DefaultImportPage)
}

// className reports whether s can name a Ruby class (Sure's import types
// are its Import subclasses).
func className(s string) bool {
	if len(s) > maxImportType || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (c < '0' || c > '9') && c != '_' && c != ':' {
			return false
		}
	}
	return true
}

// Imports answers a window of the family's imports (newest first) with the
// fewest pages (GET /imports, v0.6.7; pages of up to 100, placed by its
// "meta" block). Against an older server, whose router does not know the
// endpoint, it is an *UnsupportedError, and no call once that is known.
//
// The list sends no configuration, of the stats only the row count, and
// some of the status detail: the imports of the window for which lookup
// says the selection reads more are looked up together (one show each,
// in parallel, reserved as one batch), so that their fields answer from
// the operation's memo. A nil lookup looks nothing up.
func (l *Planner) Imports(ctx context.Context, f ImportFilter, r paging.Request, lookup func(*restclient.ImportSummary) bool) (paging.Result[*restclient.ImportSummary], error) {
	if l.routeMissing(restcache.TraitListImports) {
		return paging.Result[*restclient.ImportSummary]{}, errNoImportsList
	}
	res, err := paging.Load(ctx, r, paging.Source[*restclient.ImportSummary]{
		MaxPerPage: restclient.ImportsMaxPerPage,
		Reserve:    l.budget.Reserve,
		Order:      importOrder,
		Fetch: func(ctx context.Context, page, perPage int) (paging.Page[*restclient.ImportSummary], error) {
			p, err := l.client.ListImports(ctx, restclient.ListImportsOptions{Page: page, PerPage: perPage, Status: f.Status, Type: f.Type})
			l.learnRoute(restcache.TraitListImports, err)
			if restclient.IsNoRoute(err) {
				return paging.Page[*restclient.ImportSummary]{}, errNoImportsList
			}
			if err != nil {
				return paging.Page[*restclient.ImportSummary]{}, err
			}
			items := make([]*restclient.ImportSummary, len(p.Imports))
			for i := range p.Imports {
				items[i] = &p.Imports[i]
				l.remember(KindImport, p.Imports[i].ID)
			}
			pg := p.Meta.Pagination()
			return paging.Page[*restclient.ImportSummary]{Items: items, Page: pg.Page, PerPage: pg.Size(len(items)), Total: pg.TotalCount}, nil
		},
	})
	if err != nil || lookup == nil {
		return res, err
	}
	var wanted []*restclient.ImportSummary
	for _, it := range res.Items {
		if lookup(it) {
			wanted = append(wanted, it)
		}
	}
	if len(wanted) > 0 {
		l.lookUpImports(ctx, wanted)
	}
	return res, nil
}

// lookUpImports reads the imports of a window with one show each, in
// parallel, when the budget holds them all; the answers (or errors) stay
// in the operation's memo for the fields that asked. When it does not, the
// fields ask one by one, and those past the budget are refused.
func (l *Planner) lookUpImports(ctx context.Context, items []*restclient.ImportSummary) {
	ctx, release, err := l.budget.Reserve(ctx, len(items))
	if err != nil {
		return
	}
	defer release()
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Go(func() {
			// The outcome, answer or error, stays in the memo for the
			// field that asks; a panic must not end the process.
			defer recoverInto(new(error))
			_, _ = l.client.GetImport(ctx, it.ID)
		})
	}
	wg.Wait()
}
