package restclienttest

import (
	"math"
	"testing"
)

func TestRubyToI(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"3", 3},
		{"  7", 7},
		{"\t\n8", 8},
		{"+4", 4},
		{"-2", -2},
		{"3abc", 3},
		{"2.9", 2},
		{"abc", 0},
		{"1_000", 1000},
		{"1__0", 1},
		{"_1", 0},
		{"1_", 1},
		{"- 1", 0},
		{"99999999999999999999999", math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := rubyToI(tt.in); got != tt.want {
				t.Errorf("rubyToI(%q): got %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestCastUUID(t *testing.T) {
	const canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	tests := []struct {
		in     string
		wantOK bool
	}{
		{canonical, true},
		{"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", true},
		{"a0eebc999c0b4ef8bb6d6bb9bd380a11", true},
		{"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", true},
		{"a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", true}, // hyphens after any group of four
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", true},   // Rails' regexp allows a trailing one
		{"", false},
		{"junk", false},
		{"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", false},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", false},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", false},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111", false},
		{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", false},
		{"a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", false},
		{"urn:uuid:" + canonical, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := castUUID(tt.in)
			if ok != tt.wantOK || (ok && got != canonical) {
				t.Errorf("castUUID(%q): got %q, %v, want %v", tt.in, got, ok, tt.wantOK)
			}
		})
	}
}

func TestPaginate(t *testing.T) {
	tests := []struct {
		name                 string
		total, page, perPage int
		want                 pagination
		wantFrom, wantTo     int
	}{
		{"first", 45, 1, 10, pagination{1, 10, 45, 5}, 0, 10},
		{"last partial", 45, 5, 10, pagination{5, 10, 45, 5}, 40, 45},
		{"overflow", 45, 9, 10, pagination{5, 10, 45, 5}, 40, 45},
		{"below one", 45, -1, 10, pagination{1, 10, 45, 5}, 0, 10},
		{"empty", 0, 3, 25, pagination{1, 25, 0, 1}, 0, 0},
		{"exact", 40, 4, 10, pagination{4, 10, 40, 4}, 30, 40},
		{"huge page", 45, math.MaxInt, 10, pagination{5, 10, 45, 5}, 40, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from, to := paginate(tt.total, tt.page, tt.perPage)
			if got != tt.want || from != tt.wantFrom || to != tt.wantTo {
				t.Errorf("paginate: got %+v [%d:%d], want %+v [%d:%d]", got, from, to, tt.want, tt.wantFrom, tt.wantTo)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{
		"true": true, "TRUE": true, "1": true, "t": true, "T": true, "on": true, "ON": true,
		"": false, "false": false, "0": false, "yes": false, "y": false, " true": false, //nolint:gocritic // mapKey: the space is the case tested
	} {
		if got := truthy(in); got != want {
			t.Errorf("truthy(%q): got %v, want %v", in, got, want)
		}
	}
}

func TestRailsBoolean(t *testing.T) {
	for in, want := range map[string]bool{
		"true": true, "TRUE": true, "1": true, "t": true, "on": true, "yes": true, "no": true,
		"False": true, "Off": true, "F ": true, "2": true, "junk": true,
		"": false, " ": false, "\t": false, "0": false, "f": false, "F": false, "false": false,
		"FALSE": false, "off": false, "OFF": false,
	} {
		if got := railsBoolean(in); got != want {
			t.Errorf("railsBoolean(%q): got %v, want %v", in, got, want)
		}
	}
}
