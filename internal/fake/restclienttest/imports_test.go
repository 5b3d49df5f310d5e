package restclienttest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestImportShow(t *testing.T) {
	s := newFixed()
	ids := s.ImportIDs(DemoKey)
	if len(ids) != 3 {
		t.Fatalf("ImportIDs: got %d, want 3", len(ids))
	}
	configKeys := []string{"date_col_label", "amount_col_label", "name_col_label", "category_col_label",
		"tags_col_label", "notes_col_label", "account_col_label", "date_format", "number_format", "signage_convention"}

	tests := []struct {
		name          string
		id            string
		wantType      string
		wantStatus    string
		wantError     bool // the "error" key is present
		wantAccount   bool // account_id is not null
		wantCreatedAt string
	}{
		{"complete", ids[0], "TransactionImport", "complete", false, true, "2026-01-10T11:39:18.123Z"},
		{"failed", ids[1], "TradeImport", "failed", true, true, "2026-01-11T08:02:45.007Z"},
		{"pending", ids[2], "TransactionImport", "pending", false, false, "2026-01-12T17:20:05.310Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, s, "/api/v1/imports/"+tt.id, DemoKey)
			raw := decode[struct {
				Data map[string]json.RawMessage `json:"data"`
			}](t, rec).Data
			if _, got := raw["error"]; got != tt.wantError {
				t.Errorf("error key present: got %v, want %v (absent when there is no error)", got, tt.wantError)
			}
			if got := string(raw["account_id"]) != "null"; got != tt.wantAccount {
				t.Errorf("account_id: got %s, want non-null %v", raw["account_id"], tt.wantAccount)
			}
			var config map[string]*string
			if err := json.Unmarshal(raw["configuration"], &config); err != nil {
				t.Fatal(err)
			}
			for _, k := range configKeys {
				if _, ok := config[k]; !ok {
					t.Errorf("configuration: got no %q", k)
				}
			}
			if len(config) != len(configKeys) {
				t.Errorf("configuration: got %d keys, want %d", len(config), len(configKeys))
			}

			imp := decode[importEnvelope](t, rec).Data
			if imp.ID != tt.id || imp.Type != tt.wantType || imp.Status != tt.wantStatus {
				t.Errorf("import: got %s %s %s, want %s %s %s", imp.ID, imp.Type, imp.Status, tt.id, tt.wantType, tt.wantStatus)
			}
			if imp.CreatedAt != tt.wantCreatedAt {
				t.Errorf("created_at: got %s, want %s (milliseconds)", imp.CreatedAt, tt.wantCreatedAt)
			}
		})
	}

	t.Run("pending has unmapped columns", func(t *testing.T) {
		imp := decode[importEnvelope](t, get(t, s, "/api/v1/imports/"+ids[2], DemoKey)).Data
		if imp.Configuration.NameColLabel != nil || imp.Configuration.SignageConvention != nil {
			t.Errorf("configuration: got %+v, want null name_col_label and signage_convention", imp.Configuration)
		}
		if imp.Stats.RowsCount != 18 || imp.Stats.ValidRowsCount != 0 {
			t.Errorf("stats: got %+v, want 18/0", imp.Stats)
		}
	})

	notFound := []struct{ name, key, id string }{
		{"unknown", DemoKey, seedID("no import")},
		{"not a UUID", DemoKey, "1"},
		{"other family's", DemoKey, s.ImportIDs(OtherFamilyKey)[0]},
		{"demo import from the other family", OtherFamilyKey, ids[0]},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) {
			wantJSON(t, get(t, s, "/api/v1/imports/"+tt.id, tt.key), http.StatusNotFound,
				`{"error":"not_found","message":"Import not found"}`)
		})
	}
}

// TestImportShowByVersion: Today's show adds status_detail (six booleans)
// and three more stats; Legacy has neither.
func TestImportShowByVersion(t *testing.T) {
	type detail struct{ uploaded, configured, terminal, cleaned, publishable, revertable bool }
	tests := []struct {
		name       string
		key        string
		index      int // in ImportIDs
		wantStats  [5]int
		wantDetail detail
	}{
		// complete, clean: publishable (Sure does not look at the status) and revertable.
		{"complete", DemoKey, 0, [5]int{120, 120, 0, 9, 0}, detail{true, true, true, true, true, true}},
		// failed with 3 invalid rows.
		{"failed", DemoKey, 1, [5]int{42, 39, 3, 2, 0}, detail{true, true, true, false, false, false}},
		// pending, every row invalid, mappings unassigned.
		{"pending", DemoKey, 2, [5]int{18, 0, 18, 4, 4}, detail{true, true, false, false, false, false}},
		{"other family", OtherFamilyKey, 0, [5]int{3, 3, 0, 3, 0}, detail{true, true, true, true, true, true}},
		// large/import/013: never uploaded, revert_failed.
		{"not uploaded", LargeFamilyKey, 12, [5]int{0, 0, 0, 0, 0}, detail{false, false, true, false, false, true}},
		// large/import/020: uploaded without rows (20%5 == 0), importing.
		{"no rows", LargeFamilyKey, 19, [5]int{0, 0, 0, 0, 0}, detail{true, false, false, false, false, false}},
		// large/import/018: failed with rows: 2 invalid.
		{"large failed", LargeFamilyKey, 17, [5]int{28, 26, 2, 1, 0}, detail{true, true, true, false, false, false}},
		// large/import/004: clean but a mapping is unassigned: not publishable.
		{"unassigned mapping", LargeFamilyKey, 3, [5]int{14, 14, 0, 5, 1}, detail{true, true, false, true, false, false}},
	}
	for _, v := range versions {
		s := newFixedAs(v)
		for _, tt := range tests {
			t.Run(v.String()+" "+tt.name, func(t *testing.T) {
				id := s.ImportIDs(tt.key)[tt.index]
				rec := get(t, s, "/api/v1/imports/"+id, tt.key)
				raw := decode[struct {
					Data struct {
						StatusDetail map[string]json.RawMessage `json:"status_detail"`
						Stats        map[string]int             `json:"stats"`
					} `json:"data"`
				}](t, rec)
				wantStats := map[string]int{"rows_count": tt.wantStats[0], "valid_rows_count": tt.wantStats[1]}
				if v == Today {
					wantStats["invalid_rows_count"] = tt.wantStats[2]
					wantStats["mappings_count"] = tt.wantStats[3]
					wantStats["unassigned_mappings_count"] = tt.wantStats[4]
				}
				if !mapsEqual(raw.Data.Stats, wantStats) {
					t.Errorf("stats: got %v, want %v", raw.Data.Stats, wantStats)
				}
				if v == Legacy {
					if raw.Data.StatusDetail != nil {
						t.Errorf("status_detail: got %v, want no key", raw.Data.StatusDetail)
					}
					return
				}
				d := tt.wantDetail
				want := map[string]bool{"uploaded": d.uploaded, "configured": d.configured, "terminal": d.terminal,
					"cleaned": d.cleaned, "publishable": d.publishable, "revertable": d.revertable}
				if len(raw.Data.StatusDetail) != len(want) {
					t.Errorf("status_detail: got %v, want the six keys of %v", raw.Data.StatusDetail, want)
				}
				for k, w := range want {
					if got := string(raw.Data.StatusDetail[k]); got != strconv.FormatBool(w) {
						t.Errorf("status_detail.%s: got %s, want %v", k, got, w)
					}
				}
			})
		}
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func listImports(t *testing.T, s *Server, key, query string) importList {
	t.Helper()
	return decode[importList](t, get(t, s, "/api/v1/imports?"+query, key))
}

// TestImportsListNewestFirst: walking every page of the large family's 130
// imports gives each once, newest first.
func TestImportsListNewestFirst(t *testing.T) {
	s := newFixed()
	var ids []string
	var created []string
	for page := 1; ; page++ {
		got := listImports(t, s, LargeFamilyKey, "per_page=40&page="+strconv.Itoa(page))
		for _, imp := range got.Data {
			ids = append(ids, imp.ID)
			created = append(created, imp.CreatedAt)
		}
		if got.Meta.NextPage == nil {
			if page != 4 {
				t.Errorf("pages: got %d, want 4", page)
			}
			break
		}
		if *got.Meta.NextPage != page+1 {
			t.Fatalf("next_page: got %d on page %d", *got.Meta.NextPage, page)
		}
	}
	want := slices.Clone(s.ImportIDs(LargeFamilyKey)) // creation order, one hour apart
	slices.Reverse(want)
	if !slices.Equal(ids, want) {
		t.Errorf("ids: got %d, want the %d imports newest first", len(ids), len(want))
	}
	if created[0] != "2025-09-06T17:00:00.250Z" || created[len(created)-1] != "2025-09-01T08:00:00.250Z" {
		t.Errorf("created_at: got %s .. %s, want 2025-09-06T17:00:00.250Z .. 2025-09-01T08:00:00.250Z", created[0], created[len(created)-1])
	}
}

func TestImportsListPaging(t *testing.T) {
	tests := []struct {
		query     string
		wantItems int
		wantMeta  pageMeta
	}{
		{"", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), PrevPage: nil, TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"page=2", 25, pageMeta{CurrentPage: 2, NextPage: intp(3), PrevPage: intp(1), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"page=6", 5, pageMeta{CurrentPage: 6, NextPage: nil, PrevPage: intp(5), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		// Overflow: pagy's last page, reported as such.
		{"page=7", 5, pageMeta{CurrentPage: 6, NextPage: nil, PrevPage: intp(5), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"page=junk", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"page=-1", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"per_page=100", 100, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 2, TotalCount: 130, PerPage: 100}},
		{"per_page=100&page=2", 30, pageMeta{CurrentPage: 2, PrevPage: intp(1), TotalPages: 2, TotalCount: 130, PerPage: 100}},
		{"per_page=1", 1, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 130, TotalCount: 130, PerPage: 1}},
		{"per_page=101", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"per_page=0", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"per_page=junk", 25, pageMeta{CurrentPage: 1, NextPage: intp(2), TotalPages: 6, TotalCount: 130, PerPage: 25}},
		{"per_page=200&page=9", 5, pageMeta{CurrentPage: 6, PrevPage: intp(5), TotalPages: 6, TotalCount: 130, PerPage: 25}},
	}
	s := newFixed()
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := get(t, s, "/api/v1/imports?"+tt.query, LargeFamilyKey)
			got := decode[importList](t, rec)
			if len(got.Data) != tt.wantItems {
				t.Errorf("items: got %d, want %d", len(got.Data), tt.wantItems)
			}
			if !metaEqual(got.Meta, tt.wantMeta) {
				t.Errorf("meta: got %s, want %s", showMeta(got.Meta), showMeta(tt.wantMeta))
			}
			// Null ends are there, as null.
			for _, k := range []string{`"next_page":`, `"prev_page":`} {
				if !strings.Contains(rec.Body.String(), k) {
					t.Errorf("body: got no %s", k)
				}
			}
		})
	}
}

func TestImportsListFilters(t *testing.T) {
	tests := []struct {
		query     string
		wantTotal int
		match     func(importItemJSON) bool
	}{
		{"status=complete", 48, func(i importItemJSON) bool { return i.Status == "complete" }},
		{"status=failed", 17, func(i importItemJSON) bool { return i.Status == "failed" }},
		{"status=revert_failed", 16, func(i importItemJSON) bool { return i.Status == "revert_failed" }},
		{"type=TradeImport", 19, func(i importItemJSON) bool { return i.Type == "TradeImport" }},
		{"type=TradeImport&status=failed", 2, func(i importItemJSON) bool { return i.Type == "TradeImport" && i.Status == "failed" }},
		{"status=Complete", 0, nil},             // exact match
		{"type=Transaction", 0, nil},            // exact match
		{"status=", 130, nil},                   // blank: no filter
		{"status=%20&type=%20", 130, nil},       // whitespace is blank too
		{"status=junk&status=pending", 17, nil}, // the last value wins
	}
	s := newFixed()
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := listImports(t, s, LargeFamilyKey, "per_page=100&"+tt.query)
			if got.Meta.TotalCount != tt.wantTotal {
				t.Errorf("total_count: got %d, want %d", got.Meta.TotalCount, tt.wantTotal)
			}
			for _, imp := range got.Data {
				if tt.match != nil && !tt.match(imp) {
					t.Errorf("import %s (%s %s) should not match %q", imp.ID, imp.Type, imp.Status, tt.query)
				}
			}
		})
	}
}

func TestImportsListItems(t *testing.T) {
	s := newFixed()
	rec := get(t, s, "/api/v1/imports", DemoKey)
	var raw struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	ids := s.ImportIDs(DemoKey)
	want := []struct {
		id, status, created, detail string
		hasError                    bool
	}{
		{ids[2], `"pending"`, `"2026-01-12T17:20:05.310Z"`, `{"uploaded":true,"configured":true,"terminal":false}`, false},
		{ids[1], `"failed"`, `"2026-01-11T08:02:45.007Z"`, `{"uploaded":true,"configured":true,"terminal":true}`, true},
		{ids[0], `"complete"`, `"2026-01-10T11:39:18.123Z"`, `{"uploaded":true,"configured":true,"terminal":true}`, false},
	}
	if len(raw.Data) != len(want) {
		t.Fatalf("items: got %d, want %d", len(raw.Data), len(want))
	}
	keys := []string{"id", "type", "status", "created_at", "updated_at", "account_id", "rows_count", "status_detail"}
	for i, w := range want {
		item := raw.Data[i]
		if string(item["id"]) != strconv.Quote(w.id) || string(item["status"]) != w.status || string(item["created_at"]) != w.created {
			t.Errorf("item %d: got %s %s %s, want %s %s %s", i, item["id"], item["status"], item["created_at"], w.id, w.status, w.created)
		}
		if string(item["status_detail"]) != w.detail {
			t.Errorf("item %d: status_detail got %s, want %s (no validation stats in the list)", i, item["status_detail"], w.detail)
		}
		if _, got := item["error"]; got != w.hasError {
			t.Errorf("item %d: error key present %v, want %v", i, got, w.hasError)
		}
		wantKeys := len(keys)
		if w.hasError {
			wantKeys++
		}
		for _, k := range keys {
			if _, ok := item[k]; !ok {
				t.Errorf("item %d: got no %q", i, k)
			}
		}
		if len(item) != wantKeys {
			t.Errorf("item %d: got %d keys, want %d", i, len(item), wantKeys)
		}
	}
	if got := string(raw.Data[2]["rows_count"]); got != "120" {
		t.Errorf("rows_count: got %s, want 120", got)
	}

	t.Run("other family", func(t *testing.T) {
		got := listImports(t, s, OtherFamilyKey, "")
		if len(got.Data) != 1 || got.Data[0].ID != s.ImportIDs(OtherFamilyKey)[0] {
			t.Errorf("imports: got %+v, want the other family's one", got.Data)
		}
	})
	t.Run("no imports", func(t *testing.T) {
		rec := get(t, s, "/api/v1/imports?status=reverting&page=4", DemoKey)
		got := decode[importList](t, rec)
		want := pageMeta{CurrentPage: 1, TotalPages: 1, TotalCount: 0, PerPage: 25}
		if !metaEqual(got.Meta, want) {
			t.Errorf("meta: got %s, want %s", showMeta(got.Meta), showMeta(want))
		}
		if !strings.Contains(rec.Body.String(), `"data":[]`) {
			t.Errorf("body: got %s, want an empty array", rec.Body)
		}
	})
}

// Ties on created_at list the later-created import first.
func TestImportsListTies(t *testing.T) {
	s := newFixed()
	f := s.keys[OtherFamilyKey].family.load()
	same := at("2026-01-13T09:00:00.000Z")
	for i := range 3 {
		f.addImport(&importRecord{id: seedID("tie/" + strconv.Itoa(i)), kind: "TransactionImport", status: "pending", createdAt: same, updatedAt: same})
	}
	got := listImports(t, s, OtherFamilyKey, "")
	var ids []string
	for _, imp := range got.Data {
		ids = append(ids, imp.ID)
	}
	want := []string{seedID("tie/2"), seedID("tie/1"), seedID("tie/0"), s.ImportIDs(OtherFamilyKey)[0]}
	if !slices.Equal(ids, want) {
		t.Errorf("ids: got %v, want %v", ids, want)
	}
}

func metaEqual(a, b pageMeta) bool {
	eq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.NextPage, b.NextPage) && eq(a.PrevPage, b.PrevPage) &&
		a.CurrentPage == b.CurrentPage && a.TotalPages == b.TotalPages && a.TotalCount == b.TotalCount && a.PerPage == b.PerPage
}

func showMeta(m pageMeta) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// The imports index is Today's: a Legacy server has no such route.
func TestImportsListLegacyIsRoutingError(t *testing.T) {
	s := newFixedAs(Legacy)
	for _, q := range []string{"", "?page=2", "?" + url.Values{"status": {"complete"}}.Encode()} {
		rec := get(t, s, "/api/v1/imports"+q, DemoKey)
		wantJSON(t, rec, http.StatusNotFound, routingError)
		wantNoRateHeaders(t, rec)
	}
	// The show is still there.
	wantStatus(t, get(t, s, "/api/v1/imports/"+s.ImportIDs(DemoKey)[0], DemoKey), http.StatusOK)
}
