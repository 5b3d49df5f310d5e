package querylimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestExtension(t *testing.T) {
	cache := NewDocumentCache(1 << 20)
	// A document in the cache was checked and validated when it was
	// added: it is not checked again, even against smaller limits.
	deep := nested(5)
	cache.Add(context.Background(), deep, parse(t, deep))
	ext := NewExtension(Limits{MaxBytes: 200, MaxTokens: 50, MaxDepth: 3}, cache)

	for _, tc := range []struct {
		name   string
		query  string
		code   string // "" for accepted
		limit  string
		actual any
	}{
		{name: "no query is gqlgen's to report", query: ""},
		{name: "within the limits", query: `{ a { b } }`},
		{name: "a cache hit is not checked again", query: deep},
		{name: "bytes", query: "{ a } #" + strings.Repeat("x", 200), code: Code, limit: LimitBytes, actual: 207},
		{name: "tokens", query: "{" + strings.Repeat(" a", 50) + " }", code: Code, limit: LimitTokens},
		{name: "depth", query: nested(4), code: Code, limit: LimitDepth, actual: 4},
		{name: "a parse error as gqlgen reports it", query: `{ a `, code: errcode.ParseFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ext.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: tc.query})
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %s", tc.code)
			}
			if got := err.Extensions["code"]; got != tc.code {
				t.Fatalf("code = %v, want %s (%v)", got, tc.code, err)
			}
			if tc.limit == "" {
				return
			}
			if got := err.Extensions["limit"]; got != tc.limit {
				t.Errorf("limit = %v, want %s", got, tc.limit)
			}
			if got := err.Extensions["actual"]; got != tc.actual {
				t.Errorf("actual = %v, want %v", got, tc.actual)
			}
			if err.Extensions["max"] == nil {
				t.Error("no max")
			}
			if errcode.GetErrorKind(gqlerror.List{err}) != errcode.KindProtocol {
				t.Error("a refusal must be a request error (HTTP 400/422), not a field error")
			}
		})
	}
}

// TestTokenLimitMessage pins the wording of gqlparser's token limit
// error, which the extension recognises.
func TestTokenLimitMessage(t *testing.T) {
	_, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: "{ a b c }"}, 2)
	var gqlErr *gqlerror.Error
	if !errors.As(err, &gqlErr) || !strings.HasPrefix(gqlErr.Message, "exceeded token limit") {
		t.Fatalf("gqlparser's token limit error is now %v: update MutateOperationParameters", err)
	}
}

func TestLimitResponse(t *testing.T) {
	mw := LimitResponse(10)
	for _, tc := range []struct {
		name string
		data string
		cut  bool
	}{
		{"at the cap", `{"a":"12"}`, false},
		{"past the cap", `{"a":"123"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := mw(context.Background(), func(context.Context) *graphql.Response {
				return &graphql.Response{
					Data:       []byte(tc.data),
					Errors:     gqlerror.List{gqlerror.Errorf("a field error")},
					Extensions: map[string]any{"kept": true},
				}
			})
			if !tc.cut {
				if string(resp.Data) != tc.data {
					t.Fatalf("data = %s", resp.Data)
				}
				return
			}
			if resp.Data != nil || len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != CodeResponseTooLarge {
				t.Fatalf("got data %s, errors %v", resp.Data, resp.Errors)
			}
			if got := resp.Errors[0].Extensions["actual"]; got != len(tc.data) {
				t.Errorf("actual = %v", got)
			}
			if resp.Extensions["kept"] != true {
				t.Error("extensions dropped")
			}
		})
	}
	t.Run("no response", func(t *testing.T) {
		if resp := mw(context.Background(), func(context.Context) *graphql.Response { return nil }); resp != nil {
			t.Fatalf("got %v", resp)
		}
	})
}

// BenchmarkExtension measures the extension alone on the hostile
// requests (what it adds to a refusal; the HTTP layer's reading and
// decoding of the body comes before it).
func BenchmarkExtension(b *testing.B) {
	ext := NewExtension(Limits{}, NewDocumentCache(16<<20))
	laps := func(k int) string {
		return `{ category(id: "x") {` + strings.Repeat(" subcategories { nodes { parent {", k) + " name" + strings.Repeat(" } } }", k) + " } }"
	}
	aliases := ""
	for i := range 1000 {
		aliases += fmt.Sprintf(" c%d: categories(first: %d) { totalCount }", i, i%100+1)
	}
	for _, tc := range []struct{ name, query string }{
		{"attack 1: 1 MB of comment", "{ __typename } #" + strings.Repeat("x", 1_000_000)},
		{"attack 2: 24 doubling fragments", doubling(24)},
		{"attack 3: 14,990 __typename", "{" + strings.Repeat(" __typename", 14_990) + " }"},
		{"attack 4: 9 laps", laps(9)},
		{"attack 16: 1,000 aliased lists", "{" + aliases + " }"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			params := &graphql.RawParams{Query: tc.query}
			b.ReportAllocs()
			for b.Loop() {
				if ext.MutateOperationParameters(context.Background(), params) == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
