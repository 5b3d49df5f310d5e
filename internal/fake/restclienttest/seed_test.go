package restclienttest

import (
	"slices"
	"testing"
)

func TestSeedIsDeterministic(t *testing.T) {
	a, b := New(), New()
	for _, key := range []string{DemoKey, OtherFamilyKey, LargeFamilyKey} {
		if !slices.Equal(a.Categories(key), b.Categories(key)) {
			t.Errorf("%s: categories differ between two servers", key)
		}
		if !slices.Equal(a.Chats(key), b.Chats(key)) {
			t.Errorf("%s: chats differ between two servers", key)
		}
		if !slices.Equal(a.ImportIDs(key), b.ImportIDs(key)) {
			t.Errorf("%s: imports differ between two servers", key)
		}
	}
	if got, want := mustCategory(t, a, DemoKey, "Food & Drink").ID, seedID("demo/category/Food & Drink"); got != want {
		t.Errorf("Food & Drink id: got %s, want %s", got, want)
	}
}

func TestSeedLargeFamilyIsLazy(t *testing.T) {
	s := New()
	if s.keys[LargeFamilyKey].family.seed == nil || s.keys[LargeFamilyKey].user.seed == nil {
		t.Error("large family: got it built by New, want it built on first use")
	}
}

func TestSeedInvariants(t *testing.T) {
	tests := []struct {
		key                   string
		wantTotal, wantRoots  int
		wantIncomeRoots       int
		wantChats, wantImport int
	}{
		{DemoKey, 45, 22, 1, 4, 3},
		{OtherFamilyKey, 5, 4, 1, 2, 1},
		{LargeFamilyKey, 5000, 1000, 333, 250, 130},
		{NoAIKey, 45, 22, 1, 0, 3}, // the demo family, another user
	}
	s := New()
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			cats := s.Categories(tt.key)
			byID := map[string]Category{}
			names := map[string]bool{}
			roots, incomeRoots := 0, 0
			for _, c := range cats {
				byID[c.ID] = c
				if names[c.Name] {
					t.Errorf("name %q: got it twice, want names unique per family", c.Name)
				}
				names[c.Name] = true
			}
			for _, c := range cats {
				if c.ParentID == "" {
					roots++
					if c.Classification == "income" {
						incomeRoots++
					}
					continue
				}
				p, ok := byID[c.ParentID]
				switch {
				case !ok:
					t.Errorf("%q: parent %s not in the family", c.Name, c.ParentID)
				case p.ParentID != "":
					t.Errorf("%q: got a third level, want two levels only", c.Name)
				case p.Classification != c.Classification || p.Color != c.Color:
					t.Errorf("%q: got %s %s, want its parent's %s %s", c.Name, c.Classification, c.Color, p.Classification, p.Color)
				}
			}
			if len(cats) != tt.wantTotal || roots != tt.wantRoots || incomeRoots != tt.wantIncomeRoots {
				t.Errorf("categories: got %d (%d roots, %d income), want %d (%d roots, %d income)",
					len(cats), roots, incomeRoots, tt.wantTotal, tt.wantRoots, tt.wantIncomeRoots)
			}
			if got := len(s.Chats(tt.key)); got != tt.wantChats {
				t.Errorf("chats: got %d, want %d", got, tt.wantChats)
			}
			if got := len(s.ImportIDs(tt.key)); got != tt.wantImport {
				t.Errorf("imports: got %d, want %d", got, tt.wantImport)
			}
		})
	}

	t.Run("families do not share names", func(t *testing.T) {
		for _, c := range s.Categories(OtherFamilyKey) {
			if _, ok := s.CategoryByName(DemoKey, c.Name); ok {
				t.Errorf("%q: got it in both families", c.Name)
			}
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		if s.Categories("nope") != nil || s.Chats("nope") != nil || s.ImportIDs("nope") != nil {
			t.Error("lookups: got data for an unknown key, want nil")
		}
		if _, ok := s.CategoryByName("nope", "Income"); ok {
			t.Error("CategoryByName: got a category for an unknown key")
		}
	})
}

func TestLargeFamilyOverHTTP(t *testing.T) {
	tests := []struct {
		version   Version
		query     string
		wantTotal int
	}{
		{Today, "", 5000},
		{Today, "roots_only=true", 1000},
		{Today, "parent_id=junk", 1000}, // the NULL-cast quirk at scale
		{Today, "classification=income&roots_only=1", 1000},
		{Legacy, "classification=income&roots_only=1", 333},
		{Today, "parent_id=" + seedID("large/category/Root 1000"), 4}, // the last root takes the remainder
		{Today, "parent_id=" + seedID("large/category/Root 0008"), 8},
		{Today, "parent_id=" + seedID("large/category/Root 0009"), 0},
	}
	servers := map[Version]*Server{Today: newFixedAs(Today), Legacy: newFixedAs(Legacy)}
	s := servers[Today]
	for _, tt := range tests {
		t.Run(tt.version.String()+" "+tt.query, func(t *testing.T) {
			got := listCategories(t, servers[tt.version], LargeFamilyKey, "per_page=100&"+tt.query)
			wantPages := max(1, (tt.wantTotal+99)/100)
			if got.Pagination.TotalCount != tt.wantTotal || got.Pagination.TotalPages != wantPages {
				t.Errorf("pagination: got %+v, want total_count %d over %d pages", got.Pagination, tt.wantTotal, wantPages)
			}
		})
	}
	subs := 0
	for _, c := range s.Categories(LargeFamilyKey) {
		if c.ParentID != "" {
			subs++
		}
	}
	if subs != 4000 {
		t.Errorf("subcategories: got %d, want 4000", subs)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		New()
	}
}

func BenchmarkLargeFamilySeed(b *testing.B) {
	for b.Loop() {
		seedLargeFamily(newFamily(nil))
		seedLargeUser(newUser(true, nil))
	}
}
