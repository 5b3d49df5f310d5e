package facade_test

import (
	"net/http"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// For production: no playground page, no scripts.
func TestHTTP_PlaygroundOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.DisablePlayground = true }))
	for _, path := range []string{"/", "/graphiql/graphiql.min.js"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+path, nil)
		if r := send(t, req); r.status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, r.status)
		}
	}
	// The endpoint still answers.
	if r := e.do(restclienttest.DemoKey, `{ categories(first: 1) { totalCount } }`, nil); len(r.errs) > 0 {
		t.Errorf("errors: %v", r.errs)
	}
}

// With introspection off, __schema and __type are refused with their own
// code, before any resolver runs and with or without a key; __typename
// still answers, and so does the rest of the schema.
func TestHTTP_IntrospectionOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.DisableIntrospection = true }))
	for _, tc := range []struct{ name, key, query string }{
		{"__schema", "", `{ __schema { queryType { name } } }`},
		{"__type with a key", restclienttest.DemoKey, `{ __type(name: "Category") { name } categories(first: 1) { totalCount } }`},
		{"through a fragment", restclienttest.DemoKey, `{ ...F } fragment F on Query { __schema { types { name } } }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.key, tc.query, nil)
			wantError(t, r, "INTROSPECTION_DISABLED")
			wantCalls(t, r, 0)
		})
	}
	r := e.do(restclienttest.DemoKey, `{ __typename categories(first: 1) { totalCount } }`, nil)
	if len(r.errs) > 0 {
		t.Errorf("errors: %v", r.errs)
	}
	wantCalls(t, r, 1)
}
