package restclienttest

import "testing"

func TestVersionOption(t *testing.T) {
	tests := []struct {
		name string
		s    *Server
		want Version
	}{
		{"default", New(), Today},
		{"Today", New(WithVersion(Today)), Today},
		{"Legacy", New(WithVersion(Legacy)), Legacy},
		{"last option wins", New(WithVersion(Legacy), WithVersion(Today)), Today},
		{"with other options", New(WithUnlimited(), WithVersion(Legacy)), Legacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Version(); got != tt.want {
				t.Errorf("Version: got %v, want %v", got, tt.want)
			}
		})
	}
	if Today.String() != "today" || Legacy.String() != "legacy" || Version(9).String() != "unknown" {
		t.Error("String: got unexpected names")
	}
}

// Both release lines share the seed: same ids, same data.
func TestVersionsShareTheSeed(t *testing.T) {
	a, b := New(), New(WithVersion(Legacy))
	if len(a.Categories(DemoKey)) != len(b.Categories(DemoKey)) || a.Categories(DemoKey)[0] != b.Categories(DemoKey)[0] {
		t.Error("categories: got different seeds")
	}
	if a.ImportIDs(LargeFamilyKey)[129] != b.ImportIDs(LargeFamilyKey)[129] {
		t.Error("imports: got different seeds")
	}
}
