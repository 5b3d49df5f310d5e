package facade_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/limits/querylimit"
)

// The hostile requests measured against the server before the limits
// (numbered as in the issue), and variants that each pass one limit.

// paddedTypename is attack 1: a tiny query with n bytes of comment,
// distinct per i so that each would be a new cache entry.
func paddedTypename(i, n int) string {
	q := fmt.Sprintf("{ __typename } #%d ", i)
	return q + strings.Repeat("x", n-len(q))
}

// doublingFragments is attack 2: n fragments, each spreading the next one
// twice (2^n fields once expanded).
func doublingFragments(n int) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }")
	for i := range n - 1 {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on Query { __typename }", n-1)
	return b.String()
}

// repeatedTypename is attack 3: n × __typename in one selection.
func repeatedTypename(n int) string { return "{" + strings.Repeat(" __typename", n) + " }" }

// transportation is a root of the demo family with 4 subcategories.
var transportation = func() string {
	c, ok := restclienttest.New().CategoryByName(restclienttest.DemoKey, "Transportation")
	if !ok {
		panic("the demo family has no Transportation category")
	}
	return c.ID
}()

// categoryCycle is attack 4: k laps of subcategories → nodes → parent
// under one category, each multiplying the answer by the subcategories.
func categoryCycle(k int) string {
	return `{ category(id: "` + transportation + `") {` +
		strings.Repeat(" subcategories { nodes { parent {", k) + " name" + strings.Repeat(" } } }", k) + " } }"
}

// aliasedCategories is attack 16: n aliases of categories(first: 1..100).
func aliasedCategories(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " c%d: categories(first: %d) { totalCount }", i, i%100+1)
	}
	b.WriteString(" }")
	return b.String()
}

// limitBodyBytes is the limit the HTTP layer names for a body over its cap.
const limitBodyBytes = "bodyBytes"

type hostile struct {
	name   string
	query  string
	depth  int    // facade.Config.MaxDepth; 0 for the default
	limit  string // extensions.limit of the refusal
	actual any    // extensions.actual, nil when not reported
}

func hostileRequests() []hostile {
	return []hostile{
		// Bodies over facade's 128 KiB are refused by the HTTP layer (413)
		// after reading that much, before any JSON decoding or parsing.
		{name: "attack 1: 1 MB of comment", query: paddedTypename(1, 1_000_000), limit: limitBodyBytes},
		{name: "70 KB of comment", query: paddedTypename(1, 70_000), limit: querylimit.LimitBytes, actual: 70_000},
		{name: "attack 2: 24 doubling fragments", query: doublingFragments(24), limit: querylimit.LimitFields, actual: 1<<24 + 1<<23 - 1},
		{name: "attack 2: 26 doubling fragments", query: doublingFragments(26), limit: querylimit.LimitFields, actual: 1<<26 + 1<<25 - 1},
		{name: "attack 3: 14,990 __typename", query: repeatedTypename(14_990), limit: limitBodyBytes},
		{name: "attack 3 within the bytes and tokens", query: "{ rateLimit {" + strings.Repeat(" __typename", 900) + " } }", limit: querylimit.LimitSameResponseKey, actual: 900},
		{name: "attack 4: 9 laps of the category cycle", query: categoryCycle(9), limit: querylimit.LimitDepth, actual: 29},
		{name: "attack 4: 4 laps", query: categoryCycle(4), limit: querylimit.LimitDepth, actual: 14},
		// With the depth limit raised, the cost model refuses the cycle.
		{name: "attack 4: 4 laps, deeper depth limit", query: categoryCycle(4), depth: 64, limit: querylimit.LimitComplexity, actual: 1_220_702},
		{name: "attack 4: 5 laps, deeper depth limit", query: categoryCycle(5), depth: 64, limit: querylimit.LimitComplexity, actual: 30_517_577},
		{name: "attack 4: 9 laps, deeper depth limit", query: categoryCycle(9), depth: 64, limit: querylimit.LimitComplexity},
		{name: "attack 16: 1,000 aliased lists", query: aliasedCategories(1_000), limit: querylimit.LimitTokens},
		{name: "31 aliased lists", query: aliasedCategories(31), limit: querylimit.LimitAliases, actual: 31},
		{name: "21 root fields", query: "{" + strings.Repeat(" rateLimit { limit }", 21) + " }", limit: querylimit.LimitRootFields, actual: 21},
		{name: "51 directives", query: "{ rateLimit {" + strings.Repeat(" limit @include(if: true)", 51) + " } }", limit: querylimit.LimitDirectives, actual: 51},
		// The operation spreads n, fragment Ci spreads n-1-i.
		{name: "a chain of 100 spreads", query: spreadChain(100), limit: querylimit.LimitFragments, actual: 100 + 100*99/2},
	}
}

// spreadChain is n fragments, each spreading the next: validation walks
// each from every one before it.
func spreadChain(n int) string {
	var b strings.Builder
	b.WriteString("{ ...C0 }")
	for i := range n - 1 {
		fmt.Fprintf(&b, " fragment C%d on Query { ...C%d }", i, i+1)
	}
	fmt.Fprintf(&b, " fragment C%d on Query { __typename }", n-1)
	return b.String()
}

// Every hostile request is refused before any upstream call, with the
// limit it passes; with or without a key.
func TestLimits_HostileRequestsAreRefusedBeforeAnyCall(t *testing.T) {
	t.Parallel()
	envs := map[int]*env{0: newEnv(t), 64: newEnv(t, withConfig(func(c *facade.Config) { c.MaxDepth = 64 }))}
	for _, h := range hostileRequests() {
		for _, key := range []string{restclienttest.DemoKey, ""} {
			t.Run(fmt.Sprintf("%s, key %q", h.name, key), func(t *testing.T) {
				e := envs[h.depth]
				if h.limit == limitBodyBytes {
					before := e.upstream.Calls()
					headers := map[string]string{}
					if key != "" {
						headers["X-Api-Key"] = key
					}
					r := postJSON(t, e, `{"query":`+quote(h.query)+`}`, headers)
					if r.status != http.StatusRequestEntityTooLarge || errorCode(r) != querylimit.Code || !strings.Contains(r.raw, `"limit":"bodyBytes"`) {
						t.Errorf("status %d, body %.300s; want 413 %s, limit bodyBytes", r.status, r.raw, querylimit.Code)
					}
					if calls := e.upstream.Calls() - before; calls != 0 {
						t.Errorf("upstream calls = %d, want 0", calls)
					}
					return
				}
				r := e.do(key, h.query, nil)
				wantCalls(t, r, 0)
				if len(r.data) > 0 && string(r.data) != "null" {
					t.Errorf("data %.200s", r.data)
				}
				err := wantError(t, r, querylimit.Code)
				if got := err.Extensions["limit"]; got != h.limit {
					t.Fatalf("limit = %v, want %s: %s", got, h.limit, err.Message)
				}
				if got, ok := err.Extensions["actual"].(float64); h.actual != nil && (!ok || got != float64(toInt(h.actual))) {
					t.Errorf("actual = %v, want %v", err.Extensions["actual"], h.actual)
				}
				if err.Extensions["max"] == nil {
					t.Error("extensions.max missing")
				}
			})
		}
	}
}

func toInt(v any) int {
	n, _ := v.(int)
	return n
}

// Refusals are request errors: 400 under application/graphql-response+json,
// 200 under application/json, as parse and validation failures.
func TestLimits_HTTPStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name, query, accept string
		status              int
	}{
		{"too deep, graphql-response+json", categoryCycle(9), "application/graphql-response+json", 400},
		{"too deep, application/json", categoryCycle(9), "application/json", 200},
		{"too complex, graphql-response+json", "{ categories(first: 100) { nodes { subcategories(first: 100) { nodes { parent { subcategories(first: 100) { nodes { id } } } } } } } }", "application/graphql-response+json", 400},
		{"too large, application/json", paddedTypename(2, 100_000), "application/json", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"query":` + quote(tc.query) + `}`
			r := postJSON(t, e, body, map[string]string{"X-Api-Key": restclienttest.DemoKey, "Accept": tc.accept})
			if r.status != tc.status {
				t.Errorf("status = %d, want %d (%.300s)", r.status, tc.status, r.raw)
			}
			if !strings.Contains(r.raw, querylimit.Code) {
				t.Errorf("body %.300s", r.raw)
			}
		})
	}
	if n := e.upstream.Calls(); n != 0 {
		t.Errorf("upstream calls = %d, want 0", n)
	}
}

// What a frontend sends still passes.
func TestLimits_LegitimateQueriesPass(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	example := playgroundExample(t, e)
	for _, tc := range []struct {
		name, key, query string
		calls            int
	}{
		{"the README's demo tree", restclienttest.DemoKey, `{
  categories(rootsOnly: true, first: 100) {
    totalCount
    nodes {
      name
      color
      subcategoriesCount
      subcategories(first: 50) { nodes { name parent { name } } }
    }
  }
}`, 1},
		{"the playground's example", restclienttest.DemoKey, example, 1},
		{"a tree of 100 roots of the large family", restclienttest.LargeFamilyKey, treeQuery, 50},
		{"GraphiQL's introspection query", "", graphiqlIntrospection, 0},
		// The lookup wants subcategories: the family's first page answers it and the laps.
		{"three laps of the category cycle", restclienttest.DemoKey, categoryCycle(3), 1},
		{"20 aliased lists", restclienttest.DemoKey, aliasedCategories(20), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.ok(tc.key, tc.query, nil, nil)
			wantCalls(t, r, tc.calls)
		})
	}
}

// playgroundExample is the query the playground opens with, as its page
// embeds it.
func playgroundExample(t *testing.T, e *env) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/", nil)
	r := send(t, req)
	m := regexp.MustCompile(`defaultQuery: ("(?:[^"\\]|\\.)*")`).FindStringSubmatch(r.raw)
	if m == nil {
		t.Fatalf("no example query in the playground's page (status %d)", r.status)
	}
	var q string
	if err := json.Unmarshal([]byte(m[1]), &q); err != nil {
		t.Fatalf("default query %s: %v", m[1], err)
	}
	return q
}

// An answer larger than MaxResponseBytes is replaced by
// RESPONSE_TOO_LARGE, without data; the calls it made are reported.
func TestLimits_ResponseTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxResponseBytes = 2_000 }))
	r := e.do(restclienttest.DemoKey, `{ categories(first: 100) { nodes { id name color icon } } }`, nil)
	wantCalls(t, r, 1)
	err := wantError(t, r, querylimit.CodeResponseTooLarge)
	if len(r.data) > 0 && string(r.data) != "null" {
		t.Errorf("data %.200s", r.data)
	}
	if err.Extensions["max"] != float64(2_000) || err.Extensions["actual"].(float64) <= 2_000 {
		t.Errorf("extensions %v", err.Extensions)
	}
	// A smaller answer passes.
	r = e.ok(restclienttest.DemoKey, `{ categories(first: 5) { nodes { id name } } }`, nil, nil)
	wantCalls(t, r, 1)
}

// Persisted queries are checked as sent, and again each time their hash
// alone names them; a query over the byte limit is not kept.
func TestLimits_PersistedQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	persisted := func(query string, sendQuery bool) httpResult {
		sum := sha256.Sum256([]byte(query))
		ext := `"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
		body := `{` + ext + `}`
		if sendQuery {
			body = `{"query":` + quote(query) + `,` + ext + `}`
		}
		return postJSON(t, e, body, map[string]string{"X-Api-Key": restclienttest.DemoKey})
	}
	code := func(r httpResult) any {
		errs, _ := r.body["errors"].([]any)
		if len(errs) == 0 {
			return nil
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		return ext["code"]
	}
	for _, tc := range []struct {
		name             string
		query            string
		withQuery, byRef any // the codes expected; nil for an answer
	}{
		{"a legitimate query", `{ categories(first: 2) { nodes { name } } }`, nil, nil},
		{"a deep query is refused each time", categoryCycle(9), querylimit.Code, querylimit.Code},
		{"a long query is not kept", paddedTypename(3, 200_000), querylimit.Code, "PERSISTED_QUERY_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := persisted(tc.query, true); code(r) != tc.withQuery {
				t.Errorf("with its text: code %v, want %v (%.200s)", code(r), tc.withQuery, r.raw)
			}
			if r := persisted(tc.query, false); code(r) != tc.byRef {
				t.Errorf("by its hash: code %v, want %v (%.200s)", code(r), tc.byRef, r.raw)
			}
		})
	}
}

// graphiqlIntrospection is the introspection query of the playground
// (graphql-js getIntrospectionQuery with every option on).
const graphiqlIntrospection = `
query IntrospectionQuery {
  __schema {
    description
    queryType { name kind }
    mutationType { name kind }
    subscriptionType { name kind }
    types { ...FullType }
    directives { name description isRepeatable locations args(includeDeprecated: true) { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description specifiedByURL isOneOf
  fields(includeDeprecated: true) {
    name description args(includeDeprecated: true) { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name description type { ...TypeRef } defaultValue isDeprecated deprecationReason
}
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name } } } } } } } }
}`
