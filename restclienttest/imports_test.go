package restclienttest

import (
	"encoding/json"
	"net/http"
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
		if imp.Stats != (importStats{RowsCount: 18, ValidRowsCount: 0}) {
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
