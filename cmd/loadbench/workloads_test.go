package main

import (
	"encoding/json"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

func TestVerify(t *testing.T) {
	const data = `{"categories":{"nodes":[
		{"name":"a","subcategories":{"nodes":[{"name":"a1"},{"name":"a2"}]}},
		{"name":"b","subcategories":{"nodes":[]}},
		{"name":"","subcategories":null}]},
		"category":{"parent":{"color":"#fff"}},"import":{"status":null}}`
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path []string
		want int
		ok   bool
	}{
		"list items":            {[]string{"categories", "nodes"}, 3, true},
		"names, empty excluded": {[]string{"categories", "nodes", "name"}, 2, true},
		"nested lists":          {[]string{"categories", "nodes", "subcategories", "nodes", "name"}, 2, true},
		"scalar leaf":           {[]string{"category", "parent", "color"}, 1, true},
		"null leaf":             {[]string{"import", "status"}, 0, true},
		"absent":                {[]string{"chats", "nodes"}, 0, true},
		"wrong count":           {[]string{"categories", "nodes"}, 10, false},
	} {
		t.Run(name, func(t *testing.T) {
			err := verify(v, []check{{tc.path, tc.want}})
			if (err == nil) != tc.ok {
				t.Errorf("verify: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// W2's expected counts are those of the demo family: 22 roots holding 23
// subcategories (the figures BENCHMARKS.md and the issue use).
func TestTreeSizes(t *testing.T) {
	cats := restclienttest.New().Categories(restclienttest.DemoKey)
	roots, subs := treeSizes(cats, 100, 50)
	if roots != 22 || subs != 23 {
		t.Errorf("got %d roots and %d subcategories, want 22 and 23", roots, subs)
	}
}
