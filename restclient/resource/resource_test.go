package resource

import (
	"errors"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/limits/badinput"
)

// Every description is found by its paths, and names its kind, paging and
// freshness: generic code reads nothing else, so a gap is a resource
// served wrongly.
func TestAll_DescribesEachResourceWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All {
		if seen[string(s.Name)] || seen["kind "+s.Kind] {
			t.Errorf("%s: its name or kind %q is another resource's", s.Name, s.Kind)
		}
		seen[string(s.Name)], seen["kind "+s.Kind] = true, true
		if s.Kind == "" || s.Paging.Style == 0 || s.Fresh.List == 0 || s.Fresh.Show == 0 {
			t.Errorf("%s: kind %q, paging %+v, freshness %+v: something is not said", s.Name, s.Kind, s.Paging, s.Fresh)
		}
		for _, path := range []string{s.List + "?page=2", "/" + s.ShowPath("0b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d")} {
			if Of(path) != s {
				t.Errorf("Of(%q) = %v, want %s", path, Of(path), s.Name)
			}
		}
		if s.Paging.Style == Pagy && (s.Paging.PerPage < 1 || s.Paging.MaxPerPage < s.Paging.PerPage) {
			t.Errorf("%s: pagy paging %+v has no bounds", s.Name, s.Paging)
		}
	}
	if Of("transfers_of_nothing") != nil || Of("") != nil {
		t.Errorf("a path of no resource has one")
	}
}

func TestVersion_Before(t *testing.T) {
	for _, tc := range []struct {
		v, w Version
		want bool
	}{
		{"", "v0.6.7", true}, {"v0.6.5", "v0.6.7", true}, {"v0.6.7", "v0.6.7", false},
		{"v0.7.4-alpha.7", "v0.7.1", false}, {"v0.6.10", "v0.6.9", false}, {"v0.7.1", "", false},
	} {
		if got := tc.v.Before(tc.w); got != tc.want {
			t.Errorf("%q.Before(%q) = %v, want %v", tc.v, tc.w, got, tc.want)
		}
	}
}

// A filter is sent as its description says, refused locally when its
// check refuses it, and names the list for cursors with every filter, set
// or not: a cursor of the imports list made before the layer stays valid.
func TestSpec_Filters(t *testing.T) {
	v := Values{"status": {"complete"}, "type": nil}
	if got := Imports.ListName(v); got != "imports?status=complete&type=" {
		t.Errorf("ListName = %q", got)
	}
	if got := Imports.ListName(nil); got != "imports?status=&type=" {
		t.Errorf("ListName(nil) = %q", got)
	}
	if got := Imports.Query(Values{"status": {"complete"}, "type": {""}}).Encode(); got != "status=complete" {
		t.Errorf("Query = %q, want status only", got)
	}
	var bad *badinput.Error
	for _, v := range []Values{{"status": {"done"}}, {"type": {"transaction import"}}, {"type": {strings.Repeat("A", 65)}}} {
		if err := Imports.Check(v); !errors.As(err, &bad) {
			t.Errorf("Check(%v) = %v, want a *badinput.Error", v, err)
		}
	}
	if err := Imports.Check(Values{"status": {"complete"}, "type": {"TransactionImport"}}); err != nil {
		t.Errorf("Check of good values: %v", err)
	}
	if err := Imports.Check(Values{"color": {"red"}}); err == nil {
		t.Errorf("Check of a filter the list has not: no error")
	}
}
