package gqlhttp

import (
	"encoding/json"
	"testing"
)

// The shaper reads the executor's JSON member by member: strings with
// escaped quotes and brackets, nested values and white space are read
// whole, and what is not an object or a list is refused, not guessed.
func TestJSONMembers(t *testing.T) {
	const obj = ` { "a" : "x\"}]y" , "b":[1,{"c":null},"]"], "d":{"e":"\\"},"f\u0067":true,"h":-1.5e3 } `
	ms, ok := members([]byte(obj))
	if !ok {
		t.Fatal("not read")
	}
	got := map[string]string{}
	for _, m := range ms {
		got[m.key] = obj[m.start:m.end]
	}
	want := map[string]string{"a": `"x\"}]y"`, "b": `[1,{"c":null},"]"]`, "d": `{"e":"\\"}`, "fg": "true", "h": "-1.5e3"}
	if len(got) != len(want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("member %q = %s, want %s", k, got[k], v)
		}
		if !json.Valid([]byte(got[k])) {
			t.Errorf("member %q: %s is not a JSON value", k, got[k])
		}
	}
	items, ok := elements([]byte(`[ {"a":"]"} , null,[[]] ]`))
	if !ok || len(items) != 3 || string(items[0]) != `{"a":"]"}` || string(items[1]) != "null" || string(items[2]) != "[[]]" {
		t.Errorf("elements %q (%v)", items, ok)
	}
	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `{"a":"x}`, `[1,`, `null`, `{"a":1,}`} {
		if _, ok := members([]byte(bad)); ok {
			t.Errorf("members(%s) read", bad)
		}
	}
	if ms, ok := members([]byte(`{}`)); !ok || len(ms) != 0 {
		t.Errorf("members({}) = %v, %v", ms, ok)
	}
}
