package gqlhttp

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

func format(doc *ast.QueryDocument) string {
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("")).FormatQueryDocument(doc)
	return b.String()
}

// A query answered in one piece runs without its @defer, wherever they
// are (inline fragments, spreads, fragments nested in fragments), its
// other directives kept; the document, which every request of the same
// text shares, is left as it was.
func TestWithoutDefer(t *testing.T) {
	const query = `query Q($later: Boolean!) {
  chats(first: 1) { nodes { title
    ... @defer(label: "m") { messages(first: 5) { nodes { content ... @defer { role } } } }
    ...Dates @defer(if: $later) @include(if: true)
    ...Plain
  } }
}
fragment Dates on Chat { createdAt ... @defer { updatedAt } }
fragment Plain on Chat { id }
`
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		t.Fatal(err)
	}
	before := format(doc)
	op := doc.Operations[0]

	strippedDoc, strippedOp := withoutDefer(doc, op)
	if format(doc) != before || doc.Operations[0] != op {
		t.Fatalf("the shared document changed:\n%s", format(doc))
	}
	got := format(&ast.QueryDocument{Operations: ast.OperationList{strippedOp}, Fragments: strippedDoc.Fragments})
	if strings.Contains(got, "@defer") {
		t.Errorf("still deferred:\n%s", got)
	}
	for _, want := range []string{"@include(if: true)", "messages(first: 5)", "role", "updatedAt", "... Plain"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lost:\n%s", want, got)
		}
	}
	if strippedDoc.Fragments.ForName("Plain") != doc.Fragments.ForName("Plain") {
		t.Error("a fragment without @defer was copied; want it shared")
	}

	// Without @defer, nothing is copied.
	plain, err := parser.ParseQuery(&ast.Source{Input: `{ chats { nodes { ...Plain } } } fragment Plain on Chat { id }`})
	if err != nil {
		t.Fatal(err)
	}
	if d, o := withoutDefer(plain, plain.Operations[0]); d != plain || o != plain.Operations[0] {
		t.Error("a document without @defer was copied")
	}
}
