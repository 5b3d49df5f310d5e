package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/restclient/resource"
)

// An embedded object answers a selection of what its description says it
// carries, by the fields' GraphQL names, and nothing more.
func TestEmbedAnswers(t *testing.T) {
	fields := func(names ...string) []graphql.CollectedField {
		out := make([]graphql.CollectedField, len(names))
		for i, n := range names {
			out[i] = graphql.CollectedField{Field: &ast.Field{Name: n}}
		}
		return out
	}
	account := &resource.Spec{Embeds: []resource.Embed{{Field: "account", Kind: "account", Fields: []string{"id", "name", "account_type"}}}}
	for _, tc := range []struct {
		spec   *resource.Spec
		field  string
		fields []graphql.CollectedField
		want   bool
	}{
		{resource.Categories, "parent", fields("id", "name", "__typename"), true},
		{resource.Categories, "parent", fields("id", "color"), false},
		{resource.Categories, "subcategories", fields("id"), false},
		{account, "account", fields("accountType", "name"), true},
		{account, "account", fields("balance"), false},
	} {
		if got := embedAnswers(tc.spec, tc.field, tc.fields); got != tc.want {
			t.Errorf("embedAnswers(%s, %s) = %v, want %v", tc.spec.Name, tc.field, got, tc.want)
		}
	}
	if got := lowerCamel("recurring_transactions"); got != "recurringTransactions" {
		t.Errorf("lowerCamel = %q", got)
	}
}
