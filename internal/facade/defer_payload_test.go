package facade_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// mergeAt sets patch's members in the object of data at path, as a client
// applies an incremental payload: an object is merged member by member.
func mergeAt(t *testing.T, data any, path []any, patch map[string]any) {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			obj, ok := data.(map[string]any)
			if !ok {
				t.Fatalf("path %v: %v is not an object", path, data)
			}
			data = obj[p]
		case float64:
			list, ok := data.([]any)
			if !ok || int(p) >= len(list) {
				t.Fatalf("path %v: %v is not a list long enough", path, data)
			}
			data = list[int(p)]
		}
	}
	obj, ok := data.(map[string]any)
	if !ok {
		t.Fatalf("path %v: no object to merge into (%v): the fragment came before its object", path, data)
	}
	for k, v := range patch {
		if sub, ok := v.(map[string]any); ok {
			if into, ok := obj[k].(map[string]any); ok {
				mergeAt(t, into, nil, sub)
				continue
			}
		}
		obj[k] = v
	}
}

// hasKeyAt returns, for every object of data at the place named by keys
// (object members, any list item), whether it has key.
func hasKeyAt(data any, key string, keys ...string) []bool {
	switch v := data.(type) {
	case []any:
		var out []bool
		for _, item := range v {
			out = append(out, hasKeyAt(item, key, keys...)...)
		}
		return out
	case map[string]any:
		if len(keys) == 0 {
			_, ok := v[key]
			return []bool{ok}
		}
		return hasKeyAt(v[keys[0]], key, keys[1:]...)
	}
	return nil
}

// The payloads of a streamed answer leave a deferred fragment's fields
// out of the payload that holds their object, as incremental delivery has
// them (gqlgen writes them null there: its issue #4212): the initial
// payload, and a fragment's payload for a fragment deferred within it. A
// field the executor answers with its object (no resolver) or that is
// also selected outside the fragment stays. The payloads, applied in
// order as a client does, make the answer of the same query in one
// piece.
func TestDefer_DeferredFieldsAreLeftOutOfTheirObjectsPayload(t *testing.T) {
	e := newEnv(t)
	var sub restclienttest.Category
	for _, c := range e.upstream.Categories(restclienttest.DemoKey) {
		if c.ParentID != "" {
			sub = c
			break
		}
	}
	for _, tc := range []struct {
		name  string
		query string
		// where names the objects (by keys from data) that must lack
		// missing in the initial payload, and have present.
		where            []string
		missing, present []string
		// neverNull is a field no payload may hold as null (deferred
		// within a fragment, never null when delivered).
		neverNull string
	}{
		{
			name:    "the issue's query",
			query:   `{ categories(rootsOnly: true, first: 5) { nodes { name ... @defer { subcategories(first: 5) { nodes { name } } } } } }`,
			where:   []string{"categories", "nodes"},
			missing: []string{"subcategories"}, present: []string{"name"},
		},
		{
			name: "nested fragments",
			query: `{ categories(rootsOnly: true, first: 3) { nodes { name ... @defer(label: "subs") {
				subcategories(first: 3) { nodes { name ... @defer(label: "parent") { parent { name } } } } } } } }`,
			where:   []string{"categories", "nodes"},
			missing: []string{"subcategories"}, present: []string{"name"},
			neverNull: "parent",
		},
		{
			name:    "a field also selected outside the fragment stays, and one without a resolver",
			query:   `{ categories(first: 8) { nodes { name parent { name } ... @defer { color parent { name } subcategories(first: 2) { totalCount } } } } }`,
			where:   []string{"categories", "nodes"},
			missing: []string{"subcategories"}, present: []string{"name", "parent", "color"},
		},
		{
			name:    "through an interface",
			query:   fmt.Sprintf(`{ node(id: %q) { id ... on Category { name ... @defer { parent { name } } } } }`, sub.ID),
			where:   []string{"node"},
			missing: []string{"parent"}, present: []string{"id", "name"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, parts := streamed(t, e, restclienttest.DemoKey, tc.query)
			if len(parts) < 2 {
				t.Fatalf("%d parts, want the answer in parts", len(parts))
			}
			var data any
			if err := json.Unmarshal(parts[0]["data"], &data); err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.missing {
				for _, has := range hasKeyAt(data, k, tc.where...) {
					if has {
						t.Errorf("the initial payload holds the deferred %q: %s", k, parts[0]["data"])
						break
					}
				}
			}
			for _, k := range tc.present {
				if got := hasKeyAt(data, k, tc.where...); len(got) == 0 || strings.Contains(fmt.Sprint(got), "false") {
					t.Errorf("the initial payload lacks %q: %s", k, parts[0]["data"])
				}
			}
			for _, p := range parts[1:] {
				var later struct {
					Incremental []struct {
						Data map[string]any
						Path []any
					}
				}
				b, _ := json.Marshal(p)
				if err := json.Unmarshal(b, &later); err != nil {
					t.Fatal(err)
				}
				for _, inc := range later.Incremental {
					if s, _ := json.Marshal(inc.Data); tc.neverNull != "" && strings.Contains(string(s), `"`+tc.neverNull+`":null`) {
						t.Errorf("fragment at %v holds the %s deferred within it as null: %s", inc.Path, tc.neverNull, s)
					}
					// mergeAt fails the test when the fragment's object is
					// not delivered yet.
					mergeAt(t, data, inc.Path, inc.Data)
				}
			}
			// The same query in one piece: the whole answer.
			body, _ := json.Marshal(map[string]any{"query": tc.query})
			whole := postJSON(t, e, string(body), map[string]string{"Accept": "application/json", "X-Api-Key": restclienttest.DemoKey})
			var want struct{ Data any }
			if err := json.Unmarshal([]byte(whole.raw), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(data, want.Data) {
				got, _ := json.Marshal(data)
				t.Errorf("the payloads applied in order make\n%s\nthe answer in one piece is\n%s", got, whole.raw)
			}
		})
	}
}
