package facade_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

type httpResult struct {
	status      int
	contentType string
	header      http.Header
	body        map[string]any
	raw         string
	finalURL    string // after redirects
}

func postJSON(t *testing.T, e *env, body string, headers map[string]string) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.server.URL+"/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) httpResult {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := httpResult{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), header: resp.Header, raw: string(raw), finalURL: resp.Request.URL.String()}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// Introspection needs no key, and every type, field, argument and enum
// value of the schema is described (the playground is the documentation).
func TestHTTP_IntrospectionNeedsNoKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("", `{ __schema { types { name description
		fields { name description args { name description } }
		inputFields { name description }
		enumValues { name description } } } }`, nil)
	if len(r.errs) > 0 {
		t.Fatalf("errors: %v", r.errs)
	}
	wantCalls(t, r, 0)
	type named struct {
		Name, Description string
		Args              []named
	}
	var out struct {
		Schema struct {
			Types []struct {
				Name, Description   string
				Fields, InputFields []named
				EnumValues          []named
			}
		} `json:"__schema"`
	}
	if err := jsonUnmarshal(r.data, &out); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, typ := range out.Schema.Types {
		if strings.HasPrefix(typ.Name, "__") || typ.Name == "String" || typ.Name == "Int" || typ.Name == "Boolean" || typ.Name == "ID" || typ.Name == "Float" {
			continue
		}
		checked++
		if typ.Description == "" {
			t.Errorf("type %s has no description", typ.Name)
		}
		for _, list := range [][]named{typ.Fields, typ.InputFields, typ.EnumValues} {
			for _, f := range list {
				if f.Description == "" {
					t.Errorf("%s.%s has no description", typ.Name, f.Name)
				}
				for _, a := range f.Args {
					if a.Description == "" {
						t.Errorf("%s.%s(%s) has no description", typ.Name, f.Name, a.Name)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d types, want the whole schema", checked)
	}
}

func TestHTTP_GraphQLResponseJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := postJSON(t, e, `{"query":"{ categories(first: 1) { totalCount } }"}`,
		map[string]string{"X-Api-Key": restclienttest.DemoKey, "Accept": "application/graphql-response+json"})
	if r.status != 200 || !strings.HasPrefix(r.contentType, "application/graphql-response+json") {
		t.Errorf("status %d, content type %q", r.status, r.contentType)
	}
	// A document that does not parse is a 400 with that media type.
	// Refused before execution, it has no "data" entry (the media type
	// says so); under application/json it answers 200 with "data": null.
	for _, tc := range []struct {
		name, query, accept string
		status              int
		hasData             bool
	}{
		{"parse error", `{ categories(`, "application/graphql-response+json", 400, false},
		{"validation error", `{ nope }`, "application/graphql-response+json", 400, false},
		{"parse error, legacy type", `{ categories(`, "application/json", 200, true},
		{"validation error, legacy type", `{ nope }`, "application/json", 200, true},
	} {
		r = postJSON(t, e, `{"query":`+quote(tc.query)+`}`, map[string]string{"Accept": tc.accept})
		_, hasData := r.body["data"]
		if r.status != tc.status || hasData != tc.hasData || r.body["errors"] == nil {
			t.Errorf("%s: status %d, data entry %t, body %s; want %d, data entry %t, errors", tc.name, r.status, hasData, r.raw, tc.status, tc.hasData)
		}
	}
}

func TestHTTP_GETQueryButNotMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	get := func(q string) httpResult {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/graphql?query="+q, nil)
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		return send(t, req)
	}
	if r := get("%7B%20categories(first%3A%201)%20%7B%20totalCount%20%7D%20%7D"); r.status != 200 || r.body["errors"] != nil {
		t.Errorf("GET query: status %d body %s", r.status, r.raw)
	}
	// GraphQL over HTTP: a mutation over GET is a method the operation
	// does not allow.
	r := get("mutation%20%7B%20createChat(input%3A%20%7Btitle%3A%20%22x%22%7D)%20%7B%20chat%20%7B%20id%20%7D%20%7D%20%7D")
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" || errorCode(r) != "METHOD_NOT_ALLOWED" {
		t.Errorf("GET mutation: status %d, Allow %q, body %s; want 405, Allow: POST, METHOD_NOT_ALLOWED", r.status, r.header.Get("Allow"), r.raw)
	}
	if n := e.upstream.Calls(); n != 1 {
		t.Errorf("upstream calls = %d, want 1 (the GET mutation must not run)", n)
	}
}

func TestHTTP_PlaygroundAndHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.PlaygroundAPIKey = "demo-key" }))
	// / is the page itself, with the demo key pre-filled: no redirect, and
	// nothing of the editor's state in the URL.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/", nil)
	r := send(t, req)
	if r.status != 200 || !strings.Contains(r.raw, `{"X-Api-Key":"demo-key"}`) {
		t.Errorf("playground: status %d, want the page with the demo key pre-filled", r.status)
	}
	if r.finalURL != e.server.URL+"/" {
		t.Errorf("the playground opened at %s, want %s/", r.finalURL, e.server.URL)
	}
	// Headers are never persisted: GraphiQL is told so, and gets no
	// storage of the browser's (.ci/browser/check.mjs checks the result).
	if !strings.Contains(r.raw, "shouldPersistHeaders: false") {
		t.Error("the page does not turn off shouldPersistHeaders")
	}
	for _, leak := range []string{"localStorage", "sessionStorage", "history.replaceState"} {
		if strings.Contains(r.raw, leak) {
			t.Errorf("the page uses %s", leak)
		}
	}
	// Every script and style the page loads is served by the facade itself
	// (no CDN), with the integrity hash the page declares.
	assets := regexp.MustCompile(`(?:src|href)="(/graphiql/[^"]+)"\s+integrity="(sha256-[^"]+)"`).FindAllStringSubmatch(r.raw, -1)
	if len(assets) != 6 {
		t.Errorf("page loads %d local assets with integrity, want 6", len(assets))
	}
	if strings.Contains(r.raw, "cdn.jsdelivr.net") {
		t.Error("the page still loads from a CDN")
	}
	// The example query the page opens with runs as it is.
	example := regexp.MustCompile(`defaultQuery: ("(?:[^"\\]|\\.)*")`).FindStringSubmatch(r.raw)
	if example == nil {
		t.Fatal("the page has no default query")
	}
	var q string
	if err := json.Unmarshal([]byte(example[1]), &q); err != nil {
		t.Fatalf("default query %s: %v", example[1], err)
	}
	if res := e.do(restclienttest.DemoKey, q, nil); len(res.errs) > 0 || res.calls != 1 {
		t.Errorf("the example query: errors %v, %d calls; want data in 1 call", res.errs, res.calls)
	}
	for _, a := range assets {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+a[1], nil)
		resp := send(t, req)
		sum := sha256.Sum256([]byte(resp.raw))
		if resp.status != 200 || "sha256-"+base64.StdEncoding.EncodeToString(sum[:]) != html.UnescapeString(a[2]) {
			t.Errorf("%s: status %d, integrity mismatch", a[1], resp.status)
		}
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/healthz", nil)
	if r := send(t, req); r.status != 200 || r.body["status"] != "ok" {
		t.Errorf("healthz: status %d body %s", r.status, r.raw)
	}
	if strings.Contains(r.raw, `id="notice"`) {
		t.Error("the playground shows a notice outside demo mode")
	}
}

// README says the playground opens on its first query (section "A first
// query"): the page's default query is that block, character for
// character, so what a newcomer reads is what the editor shows.
func TestHTTP_PlaygroundOpensOnREADMEsFirstQuery(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## A first query\n")
	if !ok {
		t.Fatal("README.md has no section ## A first query")
	}
	_, block, ok := strings.Cut(section, "```graphql\n")
	if !ok {
		t.Fatal("README.md's section A first query has no ```graphql block")
	}
	block, _, _ = strings.Cut(block, "```")
	e := newEnv(t)
	if got := playgroundExample(t, e); got != block {
		t.Errorf("the playground opens on\n%s\nREADME's first query is\n%s", got, block)
	}
}

// In demo mode the playground says so, above the editor.
func TestHTTP_PlaygroundSaysDemoMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Demo, c.PlaygroundAPIKey = true, restclienttest.DemoKey }))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/", nil)
	r := send(t, req)
	notice := regexp.MustCompile(`<div id="notice" role="status">([^<]+)</div>\s*<div id="graphiql">`).FindStringSubmatch(r.raw)
	if r.status != 200 || notice == nil || !strings.Contains(notice[1], "Demo mode") || !strings.Contains(notice[1], "UPSTREAM_URL") {
		t.Errorf("status %d, notice %q: want a demo-mode notice naming UPSTREAM_URL above the editor", r.status, notice)
	}
}

func TestHTTP_RequestErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, body, accept string
		wantStatus         int
		wantCode           string
	}{
		{"no query", `{"qeury": "{ __typename }"}`, "", 400, "BAD_REQUEST"},
		{"undecodable body", `{"query": `, "", 400, "BAD_REQUEST"},
		{"validation failure, application/json", `{"query": "{ categories { nme } }"}`, "application/json", 200, "GRAPHQL_VALIDATION_FAILED"},
		{"validation failure, graphql-response+json", `{"query": "{ categories { nme } }"}`, "application/graphql-response+json", 400, "GRAPHQL_VALIDATION_FAILED"},
		{"parse failure, application/json", `{"query": "{"}`, "application/json", 200, "GRAPHQL_PARSE_FAILED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"X-Api-Key": restclienttest.DemoKey}
			if tc.accept != "" {
				h["Accept"] = tc.accept
			}
			r := postJSON(t, e, tc.body, h)
			if r.status != tc.wantStatus {
				t.Errorf("status = %d, want %d (%s)", r.status, tc.wantStatus, r.raw)
			}
			if code := errorCode(r); code != tc.wantCode {
				t.Errorf("code = %q, want %s (%s)", code, tc.wantCode, r.raw)
			}
		})
	}
	if n := e.upstream.Calls(); n != 0 {
		t.Errorf("upstream calls = %d, want 0", n)
	}
}

// errorCode returns extensions.code of the first error of a JSON answer, or
// "" when there is none.
func errorCode(r httpResult) string {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	first, _ := errs[0].(map[string]any)
	ext, _ := first["extensions"].(map[string]any)
	code, _ := ext["code"].(string)
	return code
}
