package gqlhttp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// appendAnswer must say what encoding/json says of the same answer: the
// same entries, in the same order, with the same values.
func TestAppendAnswer_SaysWhatEncodingJSONSays(t *testing.T) {
	hasNext := false
	err := gqlerror.Errorf("category 42 not found")
	err.Extensions = map[string]any{"code": "NOT_FOUND"}
	for _, tc := range []struct {
		name     string
		resp     graphql.Response
		withData bool
	}{
		{"data and extensions", graphql.Response{
			Data:       json.RawMessage(`{"categories":{"nodes":[{"name":"Food & Drink <3>"}]}}`),
			Extensions: map[string]any{"upstream": map[string]any{"calls": 1}, "requestId": "r-1"},
		}, true},
		{"errors, null data", graphql.Response{Errors: gqlerror.List{err}}, true},
		{"errors without a data entry", graphql.Response{Errors: gqlerror.List{err}, Extensions: map[string]any{"requestId": "r-2"}}, false},
		{"nothing but data", graphql.Response{Data: json.RawMessage(`{"rateLimit":null}`)}, true},
		{"incremental delivery", graphql.Response{Data: json.RawMessage(`{}`), Label: "l", HasNext: &hasNext}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendAnswer(nil, &tc.resp, tc.withData)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			if tc.withData {
				want, err = json.Marshal(&tc.resp)
			} else {
				want, err = json.Marshal(struct {
					Errors     gqlerror.List  `json:"errors,omitempty"`
					Extensions map[string]any `json:"extensions,omitempty"`
				}{tc.resp.Errors, tc.resp.Extensions})
			}
			if err != nil {
				t.Fatal(err)
			}
			if keys(t, got) != keys(t, want) {
				t.Errorf("entries %s, want %s", keys(t, got), keys(t, want))
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s is not JSON: %v", got, err)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// keys lists the top-level entries of a JSON object, in order.
func keys(t *testing.T, b []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	out := ""
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		out += k.(string) + " "
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
