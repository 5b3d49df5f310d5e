package querylimit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

func parse(t testing.TB, query string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		t.Fatalf("parse %.80q: %v", query, err)
	}
	return doc
}

// doubling is attack 2: n fragments, each spreading the next one twice.
func doubling(n int) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }")
	for i := range n - 1 {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on Query { __typename }", n-1)
	return b.String()
}

// nested nests a field d levels deep.
func nested(d int) string {
	return strings.Repeat("{ a ", d) + strings.Repeat("}", d)
}

func TestCheck(t *testing.T) {
	small := Limits{
		MaxDepth: 3, MaxFields: 10, MaxFragments: 4, MaxAliases: 2, MaxRootFields: 3,
		MaxDirectives: 2, MaxSameResponseKey: 2,
	}.WithDefaults()
	for _, tc := range []struct {
		name   string
		query  string
		limits Limits
		want   string // the limit refused, "" for none
		actual int
	}{
		{name: "within every limit", query: `{ a { b } c }`, limits: small},
		{name: "zero limits take their defaults", query: `{ a { b } c }`, limits: Limits{}},

		{name: "depth at the limit", query: nested(3), limits: small},
		{name: "depth past the limit", query: nested(4), limits: small, want: LimitDepth, actual: 4},
		{name: "depth through fragments", query: `{ a { ...F } } fragment F on T { b { c } }`, limits: small},
		{name: "depth through fragments past the limit", query: `{ a { ...F } } fragment F on T { b { c { d } } }`, limits: small, want: LimitDepth, actual: 4},
		{name: "depth through inline fragments", query: `{ a { ... on T { b { c { d } } } } }`, limits: small, want: LimitDepth, actual: 4},
		{name: "introspection counts as one level", query: `{ __schema { types { fields { type { ofType { name } } } } } }`, limits: small},
		{name: "a deep fragment nobody spreads is for validation", query: `{ a } fragment F on T { b { c { d { e } } } }`, limits: small},

		{name: "fields at the limit", query: `{ a b c { d e f g h i j } }`, limits: small},
		{name: "fields past the limit", query: `{ a b c { d e f g h i j k } }`, limits: small, want: LimitFields, actual: 11},
		// Each definition is a root of validation: F counts on its own
		// and once per spread.
		{name: "fields of fragments count per spread and per definition", query: `{ ...F ...F } fragment F on T { a b c d }`, limits: small, want: LimitFields, actual: 12},
		{name: "attack 2 saturates instead of overflowing", query: doubling(80), limits: small, want: LimitFields, actual: math.MaxInt},

		{name: "fragments at the limit", query: `{ x { ... on T { a } ... { b } ...F ...F } } fragment F on T { c }`, limits: small},
		{name: "fragments past the limit", query: `{ x { ... on T { a } ... { b } ...F ...F ... { d } } } fragment F on T { c }`, limits: small, want: LimitFragments, actual: 5},
		{name: "a chain of spreads", query: `{ ...A } fragment A on T { ...B } fragment B on T { ...C } fragment C on T { a }`, limits: small, want: LimitFragments, actual: 6},

		{name: "aliases at the limit", query: `{ x: a y: b c: c }`, limits: small},
		{name: "aliases past the limit", query: `{ x: a y: b z: c }`, limits: small, want: LimitAliases, actual: 3},
		{name: "aliases after expansion", query: `{ ...F ...F } fragment F on T { x: a y: b }`, limits: Limits{MaxAliases: 3}.WithDefaults(), want: LimitAliases, actual: 4},
		{name: "aliases count per operation", query: `query A { x: a y: b } query B { x: a y: b }`, limits: small},

		{name: "root fields at the limit", query: `{ a b ...F } fragment F on Query { c }`, limits: small},
		{name: "root fields after expansion", query: `{ a b ...F } fragment F on Query { c ... { d } }`, limits: small, want: LimitRootFields, actual: 4},
		{name: "nested fields are not root fields", query: `{ a { b c d e } }`, limits: small},

		{name: "directives at the limit", query: `query Q @x { a @include(if: true) }`, limits: small},
		{name: "directives past the limit", query: `query Q($v: Int @d) @x { a @include(if: true) }`, limits: small, want: LimitDirectives, actual: 3},
		{name: "directives after expansion", query: `{ ...F @skip(if: false) ...F } fragment F on T @y { a }`, limits: small, want: LimitDirectives, actual: 3},

		{name: "same response key at the limit", query: `{ a a b }`, limits: small},
		{name: "same response key past the limit", query: `{ a a a }`, limits: small, want: LimitSameResponseKey, actual: 3},
		// Attack 3 sent 15,000 at the root, which MaxBytes refuses first.
		{name: "attack 3 within the other limits", query: `{ a {` + strings.Repeat(" __typename", 1000) + ` } }`, limits: Limits{}.WithDefaults(), want: LimitSameResponseKey, actual: 1000},
		{name: "aliases are response keys", query: `{ x: a x: b x: c }`, limits: Limits{MaxSameResponseKey: 2}.WithDefaults(), want: LimitSameResponseKey, actual: 3},
		{name: "same key through fragments", query: `{ a ...F ... { a } } fragment F on T { a }`, limits: small, want: LimitSameResponseKey, actual: 3},
		// Sub-selections of fields with one response key merge: b is
		// compared 2 × 2 times.
		{name: "same key in merged sub-selections", query: `{ a { b b } a { b } }`, limits: small, want: LimitSameResponseKey, actual: 3},
		{name: "different places may repeat a key", query: `{ a { b b } c { b b } }`, limits: small},

		{name: "a fragment cycle terminates", query: `{ ...A } fragment A on T { a ...B } fragment B on T { b ...A }`, limits: Limits{}.WithDefaults()},
		{name: "a self-spread terminates", query: `{ ...A } fragment A on T { a ...A ...A }`, limits: Limits{}.WithDefaults()},
		{name: "an unknown fragment is for validation", query: `{ ...Nope }`, limits: small},
		{name: "a duplicate fragment counts on its own", query: `{ ...F } fragment F on T { a b c } fragment F on T { d e f g h i }`, limits: small, want: LimitFields, actual: 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.limits.Check(parse(t, tc.query))
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tc.want == "":
				return
			case got == nil:
				t.Fatalf("accepted, want %s refused", tc.want)
			case got.Limit != tc.want || got.Actual != tc.actual:
				t.Fatalf("refused %s (actual %d), want %s (actual %d): %v", got.Limit, got.Actual, tc.want, tc.actual, got)
			}
		})
	}
}

// TestDefaultsAdmitIntrospection checks the defaults against GraphiQL's
// introspection query, and the figures their comments quote.
func TestDefaultsAdmitIntrospection(t *testing.T) {
	doc := parse(t, introspectionQuery)
	if ex := (Limits{}).WithDefaults().Check(doc); ex != nil {
		t.Fatalf("introspection refused: %v", ex)
	}
	_, total, op := measureDocument(doc)
	tokens := 0
	lex := lexer.New(&ast.Source{Input: introspectionQuery})
	for tok, err := lex.ReadToken(); err == nil && tok.Kind != lexer.EOF; tok, err = lex.ReadToken() {
		tokens++
	}
	t.Logf("introspection: %d tokens", tokens)
	t.Logf("introspection: %d fields, %d fragments (expanded, all definitions), %d root fields, depth %d", total.fields, total.fragments, op.rootFields, op.depth)
	if total.fields > 500 || total.fragments > 100 {
		t.Errorf("introspection expands to %d fields, %d fragments: update the comments of the defaults", total.fields, total.fragments)
	}
}

// introspectionQuery is GraphiQL's (graphql-js getIntrospectionQuery with
// every option on), as graphiql/assets sends it.
const introspectionQuery = `
query IntrospectionQuery {
  __schema {
    description
    queryType { name kind }
    mutationType { name kind }
    subscriptionType { name kind }
    types { ...FullType }
    directives {
      name
      description
      isRepeatable
      locations
      args(includeDeprecated: true) { ...InputValue }
    }
  }
}
fragment FullType on __Type {
  kind
  name
  description
  specifiedByURL
  isOneOf
  fields(includeDeprecated: true) {
    name
    description
    args(includeDeprecated: true) { ...InputValue }
    type { ...TypeRef }
    isDeprecated
    deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
  isDeprecated
  deprecationReason
}
fragment TypeRef on __Type {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name } } } } } } } }
}
`

func TestExceededMessage(t *testing.T) {
	for _, tc := range []struct {
		ex   Exceeded
		want string
	}{
		{Exceeded{Limit: LimitDepth, Max: 12, Actual: 28}, "the query nests fields 28 levels deep; the limit is 12"},
		{Exceeded{Limit: LimitTokens, Max: 3000}, "the query has more than 3000 tokens; the limit is 3000"},
		{Exceeded{Limit: "other", Max: 1, Actual: 2}, "other 2; the limit is 1"},
	} {
		t.Run(tc.ex.Limit, func(t *testing.T) {
			if got := tc.ex.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
