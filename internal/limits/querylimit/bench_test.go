package querylimit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/suregql/suregql/graph"
)

// category selects n scalar fields of a Category, then recurses through
// parent and subcategories while depth lasts: a tree of distinct places.
func category(depth int) string {
	s := "id name color icon classification createdAt updatedAt subcategoriesCount"
	if depth > 1 {
		s += " parent { " + category(depth-1) + " }"
	}
	if depth > 2 {
		s += " subcategories(first: 2) { nodes { " + category(depth-2) + " } }"
	}
	return s
}

// tree defines fragments L0..Ln on Category: L0 selects the scalars, Lk
// selects L(k-1) under parent and under subcategories.
func tree(n int) string {
	s := "fragment L0 on Category { id name color icon classification createdAt updatedAt subcategoriesCount }"
	for k := 1; k <= n; k++ {
		s += fmt.Sprintf(" fragment L%d on Category { id parent { ...L%d } subcategories(first: 2) { nodes { ...L%d } } }", k, k-1, k-1)
	}
	return s
}

// atLimits are documents each just within the default limits, built to
// cost validation as much as the limits let them.
func atLimits() map[string]string {
	spreads := strings.Repeat(" ...F", DefaultMaxSameResponseKey-1)
	ops := ""
	for i := range DefaultMaxRootFields - 1 {
		ops += fmt.Sprintf(" query Q%d { categories { nodes { ...G } } }", i)
	}
	return map[string]string{
		// Every place of the answer is answered by 19 fields: the
		// pairwise comparisons of OverlappingFieldsCanBeMerged at
		// their most.
		"a fragment spread 19 times": `{ category(id: "x") {` + spreads + ` } } fragment F on Category { ` + category(4) + ` }`,
		// Trees of distinct places, fragments doubling them level by
		// level, as many fields as the limits allow.
		"wide trees of distinct fields": tree(5) + ` query A { category(id: "x") { ...L5 } } query B { category(id: "z") { ...L5 } } query C { chat(id: "x") { id } category(id: "y") { ...L5 } }`,
		// Operations validated one after another, each walking G.
		"19 operations spreading one fragment": strings.TrimSpace(ops) + ` fragment G on Category { ` + category(4) + ` }`,
		"GraphiQL's introspection query":       introspectionQuery,
	}
}

// BenchmarkValidateAtLimits measures what a document within every limit
// costs before execution: parsing, the check, validation and the
// complexity walk of each operation.
func BenchmarkValidateAtLimits(b *testing.B) {
	es := graph.NewSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()})
	limits := Limits{}.WithDefaults()
	for name, query := range atLimits() {
		b.Run(name, func(b *testing.B) {
			doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, limits.MaxTokens)
			if err != nil {
				b.Fatal(err)
			}
			if ex := limits.Check(doc); ex != nil {
				b.Fatalf("not within the limits: %v", ex)
			}
			_, total, _ := measureDocument(doc)
			b.ReportAllocs()
			for b.Loop() {
				doc, _ := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, limits.MaxTokens)
				if limits.Check(doc) != nil {
					b.Fatal("refused")
				}
				if errs := validator.ValidateWithRules(es.Schema(), doc, rules.NewDefaultRules()); len(errs) > 0 {
					b.Fatal(errs)
				}
				for _, op := range doc.Operations {
					complexity.Calculate(context.Background(), es, op, nil)
				}
			}
			b.ReportMetric(float64(total.fields), "fields")
		})
	}
}

// BenchmarkCheck measures the check alone, on the documents at the limits
// and on attack 2 (refused).
func BenchmarkCheck(b *testing.B) {
	limits := Limits{}.WithDefaults()
	docs := atLimits()
	docs["attack 2: 26 doubling fragments"] = doubling(26)
	for name, query := range docs {
		b.Run(name, func(b *testing.B) {
			doc, err := parser.ParseQuery(&ast.Source{Input: query})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = limits.Check(doc)
			}
		})
	}
}
