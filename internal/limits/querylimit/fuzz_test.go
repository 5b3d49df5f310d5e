package querylimit

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// fuzzLimits are small, so that random documents pass some limits and
// not others.
var fuzzLimits = Limits{
	MaxDepth: 4, MaxFields: 40, MaxFragments: 12, MaxAliases: 3, MaxRootFields: 5,
	MaxDirectives: 4, MaxSameResponseKey: 3,
}.WithDefaults()

// FuzzLimits feeds arbitrary documents to Check: it must not panic, must
// terminate (whatever the fragments do), and must agree with naiveCheck,
// which expands every spread, on small acyclic documents.
func FuzzLimits(f *testing.F) {
	for _, seed := range []string{
		`{ a { b } c }`,
		`{ x: a x: b ...F ... on T @include(if: true) { a } } fragment F on T { a { b b } }`,
		`query Q($v: Int @d) @x { a(n: 1) @skip(if: false) { ...F } } fragment F on T @y { b c: d }`,
		`{ ...A } fragment A on T { a ...B } fragment B on T { b ...A }`,
		`{ ...A } fragment A on T { ...A ...A }`,
		`{ __schema { types { fields { type { ofType { name } } } } } }`,
		`{ a { b b } a { b } } query B { ...F } fragment F on T { c } fragment F on T { d e }`,
		doubling(8),
		doubling(40),
		// A cycle behind doubling fragments (found by the fuzzer).
		`{ ...F } fragment F on T { ...A ...A } fragment A on T { ...B ...B } fragment B on T { ...C ...C } fragment C on T { ...A ...F x }`,
		nested(6),
		"{" + strings.Repeat(" __typename", 30) + " }",
		introspectionQuery,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, fuzzLimits.MaxTokens)
		if err != nil {
			return
		}
		got := fuzzLimits.Check(doc)
		_ = DocumentBytes(query, doc)
		if len(query) > 2048 {
			return
		}
		// The naive walk stops after 10,000 selections (far past the
		// fuzz limits): minimizing an input runs it thousands of times.
		n := naiveCheck(doc, fuzzLimits, 10_000)
		switch {
		case n.cyclic:
			return // Check only has to terminate; validation reports cycles
		case n.exhausted:
			// More than 10,000 selections expanded: past MaxFields or
			// MaxFragments, if nothing else first.
			if got == nil {
				t.Fatalf("accepted a document expanding past 10,000 selections")
			}
		case (got == nil) != (n.verdict == nil):
			t.Fatalf("Check: %v; naive: %v", got, n.verdict)
		case got != nil && *got != *n.verdict:
			t.Fatalf("Check: %+v; naive: %+v", *got, *n.verdict)
		}
	})
}

// naive measures a document the obvious way: every spread expanded where
// it stands, each definition on its own, the places of the response named
// by their whole path. Exponential in nested spreads; for small documents.
type naive struct {
	fragments map[string]*ast.FragmentDefinition
	onPath    map[string]bool
	steps     int // what the walk may still visit
	cyclic    bool
	exhausted bool
	verdict   *Exceeded
}

// naiveCounts are one definition's measures.
type naiveCounts struct {
	fields, fragments, aliases, directives, rootFields, depth int
	places                                                    map[string]int
}

func naiveCheck(doc *ast.QueryDocument, l Limits, steps int) *naive {
	n := &naive{fragments: map[string]*ast.FragmentDefinition{}, onPath: map[string]bool{}, steps: steps}
	for _, f := range doc.Fragments {
		if n.fragments[f.Name] == nil {
			n.fragments[f.Name] = f
		}
	}
	var fields, fragments, depth, aliases, rootFields, directives, same int
	measure := func(s ast.SelectionSet, directives int) naiveCounts {
		c := naiveCounts{directives: directives, places: map[string]int{}}
		c.depth = n.set(s, &c, "", true)
		fields += c.fields
		fragments += c.fragments
		for _, k := range c.places {
			same = max(same, k)
		}
		return c
	}
	for _, o := range doc.Operations {
		d := len(o.Directives)
		for _, v := range o.VariableDefinitions {
			d += len(v.Directives)
		}
		c := measure(o.SelectionSet, d)
		depth = max(depth, c.depth)
		aliases = max(aliases, c.aliases)
		rootFields = max(rootFields, c.rootFields)
		directives = max(directives, c.directives)
	}
	for _, f := range doc.Fragments {
		n.onPath[f.Name] = true
		measure(f.SelectionSet, len(f.Directives))
		delete(n.onPath, f.Name)
	}
	switch {
	case depth > l.MaxDepth:
		n.verdict = &Exceeded{Limit: LimitDepth, Max: l.MaxDepth, Actual: depth}
	case fields > l.MaxFields:
		n.verdict = &Exceeded{Limit: LimitFields, Max: l.MaxFields, Actual: fields}
	case fragments > l.MaxFragments:
		n.verdict = &Exceeded{Limit: LimitFragments, Max: l.MaxFragments, Actual: fragments}
	case aliases > l.MaxAliases:
		n.verdict = &Exceeded{Limit: LimitAliases, Max: l.MaxAliases, Actual: aliases}
	case rootFields > l.MaxRootFields:
		n.verdict = &Exceeded{Limit: LimitRootFields, Max: l.MaxRootFields, Actual: rootFields}
	case directives > l.MaxDirectives:
		n.verdict = &Exceeded{Limit: LimitDirectives, Max: l.MaxDirectives, Actual: directives}
	case same > l.MaxSameResponseKey:
		n.verdict = &Exceeded{Limit: LimitSameResponseKey, Max: l.MaxSameResponseKey, Actual: same}
	}
	return n
}

func (n *naive) set(s ast.SelectionSet, c *naiveCounts, path string, top bool) (depth int) {
	for _, sel := range s {
		if n.steps--; n.steps < 0 {
			n.exhausted = true
			return depth
		}
		switch sel := sel.(type) {
		case *ast.Field:
			c.fields++
			if top {
				c.rootFields++
			}
			if sel.Alias != "" && sel.Alias != sel.Name {
				c.aliases++
			}
			c.directives += len(sel.Directives)
			key := sel.Alias
			if key == "" {
				key = sel.Name
			}
			place := path + "/" + key
			c.places[place]++
			d := n.set(sel.SelectionSet, c, place, false)
			if sel.Name == "__schema" || sel.Name == "__type" {
				d = 0
			}
			depth = max(depth, 1+d)
		case *ast.InlineFragment:
			c.fragments++
			c.directives += len(sel.Directives)
			depth = max(depth, n.set(sel.SelectionSet, c, path, top))
		case *ast.FragmentSpread:
			c.fragments++
			c.directives += len(sel.Directives)
			f := n.fragments[sel.Name]
			if f == nil {
				continue
			}
			if n.onPath[sel.Name] {
				n.cyclic = true
				continue
			}
			c.directives += len(f.Directives)
			n.onPath[sel.Name] = true
			depth = max(depth, n.set(f.SelectionSet, c, path, top))
			delete(n.onPath, sel.Name)
		}
	}
	return depth
}
