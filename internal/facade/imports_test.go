package facade_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// fakeStatusDetail is an import's status_detail as the fake sends it; a
// member it leaves out is nil.
type fakeStatusDetail struct {
	Uploaded    *bool `json:"uploaded"`
	Configured  *bool `json:"configured"`
	Terminal    *bool `json:"terminal"`
	Cleaned     *bool `json:"cleaned"`
	Publishable *bool `json:"publishable"`
	Revertable  *bool `json:"revertable"`
}

// fakeImport is an import as the fake's show (GET /imports/{id}) or list
// sends it.
type fakeImport struct {
	ID            string            `json:"id"`
	Type          string            `json:"type"`
	Status        string            `json:"status"`
	RowsCount     *int              `json:"rows_count"` // the list's
	StatusDetail  *fakeStatusDetail `json:"status_detail"`
	Configuration struct {
		DateColLabel *string `json:"date_col_label"`
	} `json:"configuration"`
	Stats *struct {
		RowsCount               *int `json:"rows_count"`
		ValidRowsCount          *int `json:"valid_rows_count"`
		InvalidRowsCount        *int `json:"invalid_rows_count"`
		MappingsCount           *int `json:"mappings_count"`
		UnassignedMappingsCount *int `json:"unassigned_mappings_count"`
	} `json:"stats"`
}

// importNode is an Import as the facade answers it.
type importNode struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	Status        string  `json:"status"`
	Error         *string `json:"error"`
	Configuration *struct {
		DateColLabel *string `json:"dateColLabel"`
	} `json:"configuration"`
	Stats *struct {
		RowsCount               *int `json:"rowsCount"`
		ValidRowsCount          *int `json:"validRowsCount"`
		InvalidRowsCount        *int `json:"invalidRowsCount"`
		MappingsCount           *int `json:"mappingsCount"`
		UnassignedMappingsCount *int `json:"unassignedMappingsCount"`
	} `json:"stats"`
	StatusDetail *struct {
		Uploaded    *bool `json:"uploaded"`
		Configured  *bool `json:"configured"`
		Terminal    *bool `json:"terminal"`
		Cleaned     *bool `json:"cleaned"`
		Publishable *bool `json:"publishable"`
		Revertable  *bool `json:"revertable"`
	} `json:"statusDetail"`
}

type importConn struct {
	TotalCount int          `json:"totalCount"`
	Nodes      []importNode `json:"nodes"`
	PageInfo   pageInfo     `json:"pageInfo"`
}

func importIDs(nodes []importNode) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

// fakeImportList returns the imports of key's family that the fake lists
// (newest first) with the given filters ("" for none), read from it
// directly, 100 a page.
func fakeImportList(t *testing.T, e *env, key, status, typ string) []fakeImport {
	t.Helper()
	var all []fakeImport
	for page := 1; ; page++ {
		q := url.Values{"page": {fmt.Sprint(page)}, "per_page": {"100"}}
		if status != "" {
			q.Set("status", status)
		}
		if typ != "" {
			q.Set("type", typ)
		}
		var p struct {
			Data []fakeImport
			Meta struct {
				CurrentPage int `json:"current_page"`
				TotalPages  int `json:"total_pages"`
			}
		}
		seedFakeGET(t, e.upstream, key, "/api/v1/imports?"+q.Encode(), &p)
		all = append(all, p.Data...)
		if p.Meta.CurrentPage >= p.Meta.TotalPages {
			return all
		}
	}
}

func fakeImportIDs(imps []fakeImport) []string {
	out := make([]string, len(imps))
	for i, imp := range imps {
		out[i] = imp.ID
	}
	return out
}

// fakeImportShown is the fake's show answer of one import.
func fakeImportShown(t *testing.T, e *env, key, id string) fakeImport {
	t.Helper()
	var out struct{ Data fakeImport }
	seedFakeGET(t, e.upstream, key, "/api/v1/imports/"+id, &out)
	return out.Data
}

func eqIntPtr(a, b *int) bool   { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func eqBoolPtr(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func showPtr[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

const importQuery = `query($id: ID!) { import(id: $id) { id type status error
  stats { rowsCount validRowsCount invalidRowsCount mappingsCount unassignedMappingsCount }
  statusDetail { uploaded configured terminal cleaned publishable revertable } } }`

// import(id) shows what today's server sends (status_detail, the
// validation and mapping counts) and, against an older server that sends
// none of it, null: never a default. One call either way.
func TestImport_TodaysFields(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testImportTodaysFields)
}

func testImportTodaysFields(t *testing.T, e *env, v restclienttest.Version) {
	key := restclienttest.LargeFamilyKey
	ids := e.upstream.ImportIDs(key)
	// Imports of every kind of detail: failed with invalid rows, never
	// uploaded, uploaded without rows, with an unassigned mapping, complete.
	for _, n := range []int{2, 13, 5, 4, 3} {
		t.Run(fmt.Sprintf("import %d", n), func(t *testing.T) {
			id := ids[n-1]
			want := fakeImportShown(t, e, key, id)
			var out struct{ Import importNode }
			r := e.ok(key, importQuery, map[string]any{"id": id}, &out)
			wantCalls(t, r, 1)
			got := out.Import
			if got.ID != id || got.Status != want.Status || got.Type != want.Type || got.Stats == nil {
				t.Fatalf("import = %+v, want %s %s %s", got, id, want.Type, want.Status)
			}
			if v == restclienttest.Legacy {
				if got.StatusDetail != nil || got.Stats.InvalidRowsCount != nil || got.Stats.MappingsCount != nil || got.Stats.UnassignedMappingsCount != nil {
					t.Errorf("legacy import = %s, want statusDetail and the three new counts null", r.data)
				}
				if want.StatusDetail != nil || want.Stats.InvalidRowsCount != nil {
					t.Fatalf("the legacy fake sent today's fields")
				}
			} else {
				if want.StatusDetail == nil || want.Stats.MappingsCount == nil {
					t.Fatalf("today's fake sent no status_detail or mappings_count")
				}
				d, w := got.StatusDetail, want.StatusDetail
				if d == nil || !eqBoolPtr(d.Uploaded, w.Uploaded) || !eqBoolPtr(d.Configured, w.Configured) || !eqBoolPtr(d.Terminal, w.Terminal) ||
					!eqBoolPtr(d.Cleaned, w.Cleaned) || !eqBoolPtr(d.Publishable, w.Publishable) || !eqBoolPtr(d.Revertable, w.Revertable) {
					t.Errorf("statusDetail = %s, want what the server sent: uploaded %s configured %s terminal %s cleaned %s publishable %s revertable %s",
						r.data, showPtr(w.Uploaded), showPtr(w.Configured), showPtr(w.Terminal), showPtr(w.Cleaned), showPtr(w.Publishable), showPtr(w.Revertable))
				}
				if !eqIntPtr(got.Stats.InvalidRowsCount, want.Stats.InvalidRowsCount) || !eqIntPtr(got.Stats.MappingsCount, want.Stats.MappingsCount) ||
					!eqIntPtr(got.Stats.UnassignedMappingsCount, want.Stats.UnassignedMappingsCount) {
					t.Errorf("stats = %s, want invalid %s, mappings %s, unassigned %s", r.data,
						showPtr(want.Stats.InvalidRowsCount), showPtr(want.Stats.MappingsCount), showPtr(want.Stats.UnassignedMappingsCount))
				}
			}
			if !eqIntPtr(got.Stats.RowsCount, want.Stats.RowsCount) || !eqIntPtr(got.Stats.ValidRowsCount, want.Stats.ValidRowsCount) {
				t.Errorf("stats = %s, want rows %s, valid %s", r.data, showPtr(want.Stats.RowsCount), showPtr(want.Stats.ValidRowsCount))
			}
		})
	}
}

const importsPage = `query($first: Int, $after: String, $last: Int, $before: String, $status: String, $type: String) {
  imports(first: $first, after: $after, last: $last, before: $before, status: $status, type: $type) {
    totalCount
    nodes { id type status }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

// fewestImportCalls is the fewest calls of the window [s, e) of a list
// whose page size the client chooses up to 100: one when some page size
// holds the whole window in one page (offsets 45..89 are page 2 of 45),
// else the pages of 100 that cover it.
func fewestImportCalls(s, e int) int {
	if e <= s {
		return 1
	}
	for p := e - s; p <= 100; p++ {
		if s/p == (e-1)/p {
			return 1
		}
	}
	return pagesCovering(s, e, 100)
}

// tailCalls is the fewest calls of the last n items of a list of total
// items whose length is not known: the page past the end (the list's
// last page of 100) and, when that holds fewer than n, one page more.
func tailCalls(n, total int) int {
	tail := total % 100
	if tail == 0 {
		tail = 100
	}
	if n <= min(tail, total) {
		return 1
	}
	return 2
}

// walkImports walks the imports list with the filter vars in windows of n,
// forward then backward, and checks each window against want (the fake's
// list, newest first) and its calls against the fewest its pages allow.
func walkImports(t *testing.T, e *env, key string, filter map[string]any, n int, want []string) {
	t.Helper()
	total := len(want)
	window := func(vars map[string]any) (importConn, result) {
		t.Helper()
		for k, v := range filter {
			vars[k] = v
		}
		var out struct{ Imports importConn }
		r := e.ok(key, importsPage, vars, &out)
		if out.Imports.TotalCount != total {
			t.Errorf("totalCount = %d, want %d", out.Imports.TotalCount, total)
		}
		return out.Imports, r
	}

	var got []string
	var forward, backward int
	vars := map[string]any{"first": n}
	for s := 0; ; s += n {
		c, r := window(vars)
		forward += r.calls
		end := min(s+n, total)
		if ids := importIDs(c.Nodes); !slices.Equal(ids, want[s:end]) {
			t.Fatalf("forward window at %d = %d imports %v, want [%d, %d) %v", s, len(ids), ids, s, end, want[s:end])
		}
		if w := fewestImportCalls(s, end); r.calls != w {
			t.Errorf("forward window [%d, %d): %d calls, want %d", s, end, r.calls, w)
		}
		if c.PageInfo.HasNextPage != (end < total) || c.PageInfo.HasPreviousPage != (s > 0) {
			t.Errorf("forward window [%d, %d): pageInfo %+v", s, end, c.PageInfo)
		}
		got = append(got, importIDs(c.Nodes)...)
		if !c.PageInfo.HasNextPage {
			break
		}
		vars = map[string]any{"first": n, "after": *c.PageInfo.EndCursor}
	}
	if !slices.Equal(got, want) {
		t.Errorf("forward walk saw %d imports, want each of the %d once, newest first", len(got), total)
	}

	got = nil
	vars = map[string]any{"last": n}
	for end := total; ; end -= n {
		c, r := window(vars)
		backward += r.calls
		s := max(end-n, 0)
		if ids := importIDs(c.Nodes); !slices.Equal(ids, want[s:end]) {
			t.Fatalf("backward window before %d = %d imports, want [%d, %d)", end, len(ids), s, end)
		}
		w := fewestImportCalls(s, end)
		if end == total {
			w = tailCalls(n, total)
		}
		if r.calls != w {
			t.Errorf("backward window [%d, %d): %d calls, want %d", s, end, r.calls, w)
		}
		if c.PageInfo.HasPreviousPage != (s > 0) || c.PageInfo.HasNextPage != (end < total) {
			t.Errorf("backward window [%d, %d): pageInfo %+v", s, end, c.PageInfo)
		}
		got = append(importIDs(c.Nodes), got...)
		if !c.PageInfo.HasPreviousPage {
			break
		}
		vars = map[string]any{"last": n, "before": *c.PageInfo.StartCursor}
	}
	if !slices.Equal(got, want) {
		t.Errorf("backward walk saw %d imports, want each of the %d once, newest first", len(got), total)
	}
	t.Logf("%d imports %v, windows of %d: %d calls forward, %d backward", total, filter, n, forward, backward)
}

// The large family's 130 imports, walked forward and backward in windows
// of 30 and 45: every import once, newest first, each window in the fewest
// calls the upstream's pages allow (one when a page size holds it whole);
// totalCount is the list's; the status and type filters list what the
// server lists with them.
func TestImports_WalkedForwardAndBackward(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	all := fakeImportList(t, e, key, "", "")
	if len(all) != 130 {
		t.Fatalf("the fake lists %d imports, want 130", len(all))
	}
	// Newest first: the reverse of the order they were created in.
	created := e.upstream.ImportIDs(key)
	slices.Reverse(created)
	if !slices.Equal(fakeImportIDs(all), created) {
		t.Fatal("the fake's list is not newest first")
	}
	for _, n := range []int{30, 45} {
		t.Run(fmt.Sprintf("windows of %d", n), func(t *testing.T) {
			walkImports(t, e, key, nil, n, fakeImportIDs(all))
		})
	}

	for _, tc := range []struct {
		name, status, typ string
		n                 int
	}{
		{"status complete", "complete", "", 20},
		{"type TransactionImport", "", "TransactionImport", 7},
		{"status failed and type TradeImport", "failed", "TradeImport", 1},
		{"a type no import has", "reverting", "NoSuchImport", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := fakeImportList(t, e, key, tc.status, tc.typ)
			if tc.typ != "NoSuchImport" && len(want) == 0 {
				t.Fatalf("the fake lists no import of %s %s", tc.status, tc.typ)
			}
			for _, imp := range want {
				if (tc.status != "" && imp.Status != tc.status) || (tc.typ != "" && imp.Type != tc.typ) {
					t.Fatalf("the fake's filter let %+v through", imp)
				}
			}
			filter := map[string]any{}
			if tc.status != "" {
				filter["status"] = tc.status
			}
			if tc.typ != "" {
				filter["type"] = tc.typ
			}
			if len(want) == 0 {
				var out struct{ Imports importConn }
				vars := map[string]any{"first": tc.n}
				for k, v := range filter {
					vars[k] = v
				}
				r := e.ok(key, importsPage, vars, &out)
				wantCalls(t, r, 1)
				if out.Imports.TotalCount != 0 || len(out.Imports.Nodes) != 0 || out.Imports.PageInfo.HasNextPage || out.Imports.PageInfo.HasPreviousPage {
					t.Errorf("imports = %+v, want none", out.Imports)
				}
				return
			}
			walkImports(t, e, key, filter, tc.n, fakeImportIDs(want))
			// The filters are the server's: every node is of them.
			var out struct{ Imports importConn }
			e.ok(key, importsPage, map[string]any{"first": 100, "status": tc.status, "type": tc.typ}, &out)
			for _, n := range out.Imports.Nodes {
				if (tc.status != "" && n.Status != tc.status) || (tc.typ != "" && n.Type != tc.typ) {
					t.Errorf("import %s is %s %s, outside the filter", n.ID, n.Type, n.Status)
				}
			}
		})
	}
}

// The list sends no configuration and, of the stats, only the row count:
// a selection that reads more costs one lookup per import, all planned
// together; rowsCount alone costs nothing more. What the lookups answer is
// the server's show of each import.
func TestImports_DetailsCostOneLookupEach(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.LargeFamilyKey
	all := fakeImportList(t, e, key, "", "")
	const n = 10
	for _, tc := range []struct {
		name, selection string
		calls           int
	}{
		{"rowsCount only", `stats { rowsCount }`, 1},
		{"statusDetail as listed", `statusDetail { uploaded configured terminal }`, 1},
		{"validRowsCount", `stats { rowsCount validRowsCount }`, 1 + n},
		{"configuration", `configuration { dateColLabel }`, 1 + n},
		{"configuration and every count", `configuration { dateColLabel } stats { rowsCount validRowsCount invalidRowsCount mappingsCount unassignedMappingsCount }`, 1 + n},
		{"through edges", `stats { rowsCount validRowsCount }`, 1 + n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := fmt.Sprintf(`{ imports(first: %d) { totalCount nodes { id %s } } }`, n, tc.selection)
			if tc.name == "through edges" {
				q = fmt.Sprintf(`{ imports(first: %d) { totalCount edges { node { id %s } } } }`, n, tc.selection)
			}
			var out struct {
				Imports struct {
					TotalCount int
					Nodes      []importNode
					Edges      []struct{ Node importNode }
				}
			}
			r := e.ok(key, q, nil, &out)
			wantCalls(t, r, tc.calls)
			nodes := out.Imports.Nodes
			for _, edge := range out.Imports.Edges {
				nodes = append(nodes, edge.Node)
			}
			if len(nodes) != n || out.Imports.TotalCount != len(all) {
				t.Fatalf("%d imports of %d, want %d of %d", len(nodes), out.Imports.TotalCount, n, len(all))
			}
			for i, got := range nodes {
				listed := all[i]
				if got.ID != listed.ID {
					t.Fatalf("import %d = %s, want %s", i, got.ID, listed.ID)
				}
				shown := fakeImportShown(t, e, key, got.ID)
				if got.Stats != nil {
					if !eqIntPtr(got.Stats.RowsCount, listed.RowsCount) {
						t.Errorf("%s: rowsCount %s, want %s", got.ID, showPtr(got.Stats.RowsCount), showPtr(listed.RowsCount))
					}
					if tc.calls > 1 && (!eqIntPtr(got.Stats.ValidRowsCount, shown.Stats.ValidRowsCount) ||
						(got.Stats.MappingsCount != nil && !eqIntPtr(got.Stats.MappingsCount, shown.Stats.MappingsCount))) {
						t.Errorf("%s: stats %s/%s, want the show's %s/%s", got.ID, showPtr(got.Stats.ValidRowsCount), showPtr(got.Stats.MappingsCount),
							showPtr(shown.Stats.ValidRowsCount), showPtr(shown.Stats.MappingsCount))
					}
				}
				if got.Configuration != nil && !eqStrPtr(got.Configuration.DateColLabel, shown.Configuration.DateColLabel) {
					t.Errorf("%s: dateColLabel %s, want %s", got.ID, showPtr(got.Configuration.DateColLabel), showPtr(shown.Configuration.DateColLabel))
				}
				if d := got.StatusDetail; d != nil {
					w := listed.StatusDetail
					if !eqBoolPtr(d.Uploaded, w.Uploaded) || !eqBoolPtr(d.Configured, w.Configured) || !eqBoolPtr(d.Terminal, w.Terminal) {
						t.Errorf("%s: statusDetail %+v, want the list's %+v", got.ID, d, w)
					}
				}
			}
		})
	}
}

func eqStrPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// A server older than v0.6.7 has no GET /imports: its router answers 404.
// The field is null with UNSUPPORTED_BY_UPSTREAM, for the one call that
// shows it, then for no call, for every key of that server; import(id)
// still answers.
func TestImports_UnsupportedByALegacyServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withUpstream(restclienttest.WithVersion(restclienttest.Legacy)))
	key := restclienttest.LargeFamilyKey
	r := e.do(key, importsPage, map[string]any{"first": 10})
	wantCalls(t, r, 1)
	got := wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	if string(r.data) != `{"imports":null}` {
		t.Errorf("data = %s, want the field null", r.data)
	}
	if len(r.errs) != 1 || !containsAll(got.Message, "version", "imports") {
		t.Errorf("errors = %v, want one saying the server's version has no list of imports", r.errs)
	}
	for _, k := range []string{key, restclienttest.DemoKey, restclienttest.OtherFamilyKey} {
		r = e.do(k, importsPage, map[string]any{"last": 5, "status": "complete"})
		wantCalls(t, r, 0)
		wantError(t, r, "UNSUPPORTED_BY_UPSTREAM")
	}
	var out struct{ Import importNode }
	r = e.ok(key, importQuery, map[string]any{"id": e.upstream.ImportIDs(key)[0]}, &out)
	wantCalls(t, r, 1)
	if out.Import.ID == "" {
		t.Errorf("import(id) = %s, want the import", r.data)
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A filter no import can match (a status Sure does not have, a type that
// is no class name, a huge string) is the caller's to fix: BAD_USER_INPUT
// naming the argument, at no call.
func TestImports_FiltersCheckedLocally(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := `query($s: String, $t: String) { imports(first: 5, status: $s, type: $t) { totalCount } }`
	for _, tc := range []struct {
		name, arg string
		vars      map[string]any
	}{
		{"unknown status", "status", map[string]any{"s": "bogus"}},
		{"status in capitals", "status", map[string]any{"s": "COMPLETE"}},
		{"huge status", "status", map[string]any{"s": strings.Repeat("x", 20_000)}},
		{"type with a NUL", "type", map[string]any{"t": "Transaction\x00Import"}},
		{"type with a query string", "type", map[string]any{"t": "A&status=complete"}},
		{"huge type", "type", map[string]any{"t": "T" + strings.Repeat("x", 100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(restclienttest.LargeFamilyKey, q, tc.vars)
			wantCalls(t, r, 0)
			if got := wantError(t, r, "BAD_USER_INPUT"); got.Extensions["argument"] != tc.arg {
				t.Errorf("argument = %v, want %s", got.Extensions["argument"], tc.arg)
			}
		})
	}
	var out struct{ Imports struct{ TotalCount int } }
	e.ok(restclienttest.LargeFamilyKey, q, map[string]any{"s": "revert_failed", "t": "TransactionImport"}, &out)
}
