// Package querylimit bounds what one GraphQL request may cost the server
// before that cost is paid: limits checked on the parsed document in a
// linear pass before validation, a cost model limit, a cap on the size of
// an answer, and the caches of parsed and persisted queries bounded in
// bytes.
//
// Validation, the complexity walk and execution are each linear in the
// document only once fragments are expanded, and gqlparser's
// OverlappingFieldsCanBeMerged is quadratic in the fields that merge into
// one place of the answer. A 1 KB document of fragments that spread one
// another twice expands to millions of fields; a 165 KB selection of
// 15,000 __typename costs ten seconds of validation. So the document is
// measured first, with each fragment measured once (a memo per fragment,
// saturating arithmetic), and refused with QUERY_LIMIT_EXCEEDED when it
// passes a limit.
package querylimit

import (
	"fmt"
	"math"

	"github.com/vektah/gqlparser/v2/ast"
)

// Limits bound a document. A zero field takes its default (see
// WithDefaults). Counts "after expansion" count a fragment's content once
// per spread that reaches it, as validation and execution do.
type Limits struct {
	// MaxBytes bounds the query text. Checked before anything else, so a
	// larger text is never parsed, hashed or cached.
	MaxBytes int
	// MaxTokens bounds the tokens the parser reads (comments included).
	// Parsing allocates up to about 250 bytes of AST per token and takes
	// 0.2 to 0.4 µs per token (on a loaded 2-vCPU machine), and it runs
	// before any other check, so this bounds the cost of every refusal.
	MaxTokens int
	// MaxDepth bounds how deep fields nest in an operation, fragments
	// expanded. Introspection (__schema, __type) counts as one level: its
	// own nesting is bounded by validation (MaxIntrospectionDepth) and
	// GraphiQL's introspection query nests its type references deeper
	// than any data query needs.
	MaxDepth int
	// MaxFields bounds the fields of the whole document after expansion:
	// every operation and every fragment definition, each with its
	// spreads expanded, because validation walks each of them as a root.
	MaxFields int
	// MaxFragments bounds the fragment spreads and inline fragments of
	// the whole document after expansion, counted like MaxFields: a chain
	// of fragments that each spread the next one costs validation the
	// square of its length without a single extra field.
	MaxFragments int
	// MaxAliases bounds the aliased fields of one operation after
	// expansion (a field whose alias is its name does not count).
	MaxAliases int
	// MaxRootFields bounds the fields at the top of one operation after
	// expansion: each may start its own upstream work.
	MaxRootFields int
	// MaxDirectives bounds the directives of one operation after
	// expansion (on the operation, its variables, fields and fragments).
	MaxDirectives int
	// MaxSameResponseKey bounds how many fields of the expanded document
	// answer the same place of the response (the same path of response
	// keys from a root): OverlappingFieldsCanBeMerged compares those
	// fields pairwise, and their sub-selections pairwise again, so the
	// validation cost is the sum of the squares of these counts.
	MaxSameResponseKey int
}

// Defaults. Each is far above what a frontend of this schema sends (the
// schema has fewer than a hundred fields; the README's demo tree has 11
// fields and depth 6; GraphiQL's introspection query has 180 tokens and
// expands to 432 fields and 18 fragments) and low enough that validation
// and the complexity walk of a document at every limit at once stay in
// milliseconds (BenchmarkValidateAtLimits).
const (
	// 64 KiB: room for comments and long string arguments (GraphiQL's
	// introspection query is under 3 KB); within the token limit, more
	// bytes cost only hashing and lexing.
	DefaultMaxBytes = 64 << 10
	// 1,000 tokens (graphql-armor's default): 5× GraphiQL's
	// introspection query, 25× the README's demo tree; a refusal parses
	// at most this many: at most about 250 KB of AST, a few hundred µs.
	DefaultMaxTokens = 1_000
	// 12 levels: the deepest useful query of this schema (the chats'
	// messages' tool calls, through edges) has 8.
	DefaultMaxDepth = 12
	// 2,000 fields after expansion: validation costs about 1 µs per
	// field once repeated fields are bounded.
	DefaultMaxFields = 2_000
	// 500 fragments after expansion: GraphiQL's introspection query
	// expands to 18.
	DefaultMaxFragments = 500
	// 30 aliases: enough to ask for a few lists side by side; the
	// upstream-call budget still applies to what they fetch.
	DefaultMaxAliases = 30
	// 20 root fields: the schema's Query type has 6 fields.
	DefaultMaxRootFields = 20
	// 50 directives: @include/@skip on a few dozen fields.
	DefaultMaxDirectives = 50
	// 20 fields per response key: Apollo Client adds __typename to every
	// fragment, so a selection that spreads a dozen fragments repeats it
	// a dozen times; 20² comparisons per key keep validation linear.
	DefaultMaxSameResponseKey = 20
)

// WithDefaults returns l with every zero (or negative) limit set to its
// default.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, DefaultMaxBytes)
	def(&l.MaxTokens, DefaultMaxTokens)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxFields, DefaultMaxFields)
	def(&l.MaxFragments, DefaultMaxFragments)
	def(&l.MaxAliases, DefaultMaxAliases)
	def(&l.MaxRootFields, DefaultMaxRootFields)
	def(&l.MaxDirectives, DefaultMaxDirectives)
	def(&l.MaxSameResponseKey, DefaultMaxSameResponseKey)
	return l
}

// Names of the limits, as extensions.limit reports them.
const (
	LimitBytes           = "bytes"
	LimitTokens          = "tokens"
	LimitDepth           = "depth"
	LimitFields          = "fields"
	LimitFragments       = "fragments"
	LimitAliases         = "aliases"
	LimitRootFields      = "rootFields"
	LimitDirectives      = "directives"
	LimitSameResponseKey = "sameResponseKey"
	LimitComplexity      = "complexity"
	LimitDeferredParts   = "deferredParts"
)

// Exceeded reports the first limit a request passes.
type Exceeded struct {
	Limit string // one of the Limit* names
	Max   int
	// Batch: the limit holds for the operations of a batch together, and
	// this one would take them past it (Actual is their total).
	Batch bool
	// Actual is what the request has, or 0 when the check stopped before
	// knowing (the parser stops at the token limit; a fragment cycle
	// stops the count).
	Actual int
}

// messages has one format per limit: the actual count, then the maximum.
var messages = map[string]string{
	LimitBytes:           "the query is %s bytes long; the limit is %d",
	LimitTokens:          "the query has %s tokens; the limit is %d",
	LimitDepth:           "the query nests fields %s levels deep; the limit is %d",
	LimitFields:          "the query has %s fields once its fragments are expanded; the limit is %d",
	LimitFragments:       "the query has %s fragment spreads and inline fragments once expanded; the limit is %d",
	LimitAliases:         "the operation has %s aliases; the limit is %d",
	LimitRootFields:      "the operation has %s root fields; the limit is %d",
	LimitDirectives:      "the operation has %s directives; the limit is %d",
	LimitSameResponseKey: "%s fields answer the same response key; the limit is %d",
	LimitComplexity:      "the operation has complexity %s (list sizes multiplied); the limit is %d",
	LimitDeferredParts:   "the answer would come in %s deferred parts (each @defer once per item of the lists around it); the limit is %d: defer fewer fragments, or over fewer items",
}

func (e *Exceeded) Error() string {
	what := messages[e.Limit]
	if what == "" {
		what = e.Limit + " %s; the limit is %d"
	}
	actual := fmt.Sprint(e.Actual)
	if e.Actual <= 0 {
		actual = fmt.Sprintf("more than %d", e.Max)
	}
	if e.Batch {
		return fmt.Sprintf("with this operation, the batch's operations together have %s %s; the limit is %d for the whole batch", e.Limit, actual, e.Max)
	}
	return fmt.Sprintf(what, actual, e.Max)
}

// counts are the measures of one selection set, or of one definition,
// with fragments expanded. All sums saturate at math.MaxInt.
type counts struct {
	fields     int
	fragments  int // spreads and inline fragments
	aliases    int
	directives int
	rootFields int // fields at the top level, fragments flattened
	depth      int // deepest nesting of fields, introspection counted as 1
}

func (c *counts) add(o counts, top bool) {
	c.fields = add(c.fields, o.fields)
	c.fragments = add(c.fragments, o.fragments)
	c.aliases = add(c.aliases, o.aliases)
	c.directives = add(c.directives, o.directives)
	if top {
		c.rootFields = add(c.rootFields, o.rootFields)
	}
}

// add is a saturating sum of non-negative counts: 2^40 expanded fields
// must stay a large number, not wrap around into a small one.
func add(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

type fragmentState uint8

const (
	unvisited fragmentState = iota
	inProgress
	done
)

type fragment struct {
	def   *ast.FragmentDefinition
	state fragmentState
	c     counts
}

// measure is one check of a document: the fragments by name, with the
// memo of what each expands to.
type measure struct {
	fragments map[string]*fragment
}

// Check measures doc (as parsed, before validation) against l (its zero
// limits taking their defaults) and returns the first limit it passes,
// or nil. Its cost is linear in the document plus, when every
// other limit holds, the expanded document it has just bounded.
//
// A fragment cycle does not loop: a spread of a fragment still being
// measured counts as empty (validation reports the cycle).
func (l Limits) Check(doc *ast.QueryDocument) *Exceeded {
	l = l.WithDefaults()
	m, total, op := measureDocument(doc)
	switch {
	case op.depth > l.MaxDepth:
		return &Exceeded{Limit: LimitDepth, Max: l.MaxDepth, Actual: op.depth}
	case total.fields > l.MaxFields:
		return &Exceeded{Limit: LimitFields, Max: l.MaxFields, Actual: total.fields}
	case total.fragments > l.MaxFragments:
		return &Exceeded{Limit: LimitFragments, Max: l.MaxFragments, Actual: total.fragments}
	case op.aliases > l.MaxAliases:
		return &Exceeded{Limit: LimitAliases, Max: l.MaxAliases, Actual: op.aliases}
	case op.rootFields > l.MaxRootFields:
		return &Exceeded{Limit: LimitRootFields, Max: l.MaxRootFields, Actual: op.rootFields}
	case op.directives > l.MaxDirectives:
		return &Exceeded{Limit: LimitDirectives, Max: l.MaxDirectives, Actual: op.directives}
	}
	return l.checkResponseKeys(doc, m.fragments, total.fields)
}

// measureDocument measures every definition of doc, fragments expanded:
// total sums them all, op holds the largest measures of one operation.
func measureDocument(doc *ast.QueryDocument) (m measure, total, op counts) {
	m = measure{fragments: make(map[string]*fragment, len(doc.Fragments))}
	for _, f := range doc.Fragments {
		// The first of duplicate names, as the validator resolves them
		// (it reports the duplicates).
		if _, ok := m.fragments[f.Name]; !ok {
			m.fragments[f.Name] = &fragment{def: f}
		}
	}
	for _, o := range doc.Operations {
		var c counts
		c.directives = len(o.Directives)
		for _, v := range o.VariableDefinitions {
			c.directives = add(c.directives, len(v.Directives))
		}
		c.depth = m.set(o.SelectionSet, &c, true)
		total.add(c, false)
		op.depth = max(op.depth, c.depth)
		op.aliases = max(op.aliases, c.aliases)
		op.rootFields = max(op.rootFields, c.rootFields)
		op.directives = max(op.directives, c.directives)
	}
	for _, f := range doc.Fragments {
		if first := m.fragments[f.Name]; first.def == f {
			total.add(m.fragment(first), false)
			continue
		}
		// A duplicate is walked once on its own, as validation walks it.
		var c counts
		m.set(f.SelectionSet, &c, true)
		total.add(c, false)
	}
	return m, total, op
}

// fragment returns what f expands to, measuring it on first use.
func (m *measure) fragment(f *fragment) counts {
	switch f.state {
	case done:
		return f.c
	case inProgress:
		return counts{} // a cycle: validation reports it
	}
	f.state = inProgress
	c := counts{directives: len(f.def.Directives)}
	c.depth = m.set(f.def.SelectionSet, &c, true)
	f.c, f.state = c, done
	return c
}

// set adds the measures of s to c and returns the depth of s. top says
// whether s is at the top of its definition (its fields are root fields).
func (m *measure) set(s ast.SelectionSet, c *counts, top bool) int {
	depth := 0
	for _, sel := range s {
		switch sel := sel.(type) {
		case *ast.Field:
			c.fields = add(c.fields, 1)
			if top {
				c.rootFields = add(c.rootFields, 1)
			}
			if sel.Alias != "" && sel.Alias != sel.Name {
				c.aliases = add(c.aliases, 1)
			}
			c.directives = add(c.directives, len(sel.Directives))
			d := m.set(sel.SelectionSet, c, false)
			if isIntrospection(sel.Name) {
				d = 0
			}
			depth = max(depth, 1+d)
		case *ast.InlineFragment:
			c.fragments = add(c.fragments, 1)
			c.directives = add(c.directives, len(sel.Directives))
			depth = max(depth, m.set(sel.SelectionSet, c, top))
		case *ast.FragmentSpread:
			c.fragments = add(c.fragments, 1)
			c.directives = add(c.directives, len(sel.Directives))
			f := m.fragments[sel.Name]
			if f == nil {
				continue // unknown: validation reports it
			}
			fc := m.fragment(f)
			c.add(fc, top)
			depth = max(depth, fc.depth)
		}
	}
	return depth
}

func isIntrospection(field string) bool { return field == "__schema" || field == "__type" }

// pathKey names one place of a response: the place of the enclosing field
// and a response key.
type pathKey struct {
	parent int
	key    string
}

// responseKeys counts, for one root definition at a time, the fields that
// answer each place of the response, fragments expanded.
type responseKeys struct {
	fragments map[string]*fragment
	places    map[pathKey]int
	counts    []int
	onPath    map[string]bool // fragments being expanded (cycles)
	// budget is what the walk may still visit: on an acyclic document
	// the walk visits exactly what Check has counted and bounded; a
	// cyclic one is measured loosely by Check, and this keeps its walk
	// bounded too.
	budget int
	worst  int
}

// checkResponseKeys runs only once the expanded document is known to be
// bounded (MaxFields, MaxFragments), so its walk of the expansion is too.
func (l Limits) checkResponseKeys(doc *ast.QueryDocument, fragments map[string]*fragment, fields int) *Exceeded {
	r := responseKeys{
		fragments: fragments,
		// At most one place per field; the hint is capped in case the
		// limits are configured huge.
		places: make(map[pathKey]int, min(fields, 1<<16)),
		onPath: map[string]bool{},
		budget: add(l.MaxFields, l.MaxFragments),
	}
	walk := func(s ast.SelectionSet) bool {
		clear(r.places)
		r.counts = r.counts[:0]
		return r.set(s, -1)
	}
	for _, o := range doc.Operations {
		if !walk(o.SelectionSet) {
			return &Exceeded{Limit: LimitFields, Max: l.MaxFields}
		}
	}
	for _, f := range doc.Fragments {
		r.onPath[f.Name] = true
		ok := walk(f.SelectionSet)
		delete(r.onPath, f.Name)
		if !ok {
			return &Exceeded{Limit: LimitFields, Max: l.MaxFields}
		}
	}
	if r.worst > l.MaxSameResponseKey {
		return &Exceeded{Limit: LimitSameResponseKey, Max: l.MaxSameResponseKey, Actual: r.worst}
	}
	return nil
}

// set counts the fields of s under the place parent; false when the
// budget ran out.
func (r *responseKeys) set(s ast.SelectionSet, parent int) bool {
	for _, sel := range s {
		if r.budget--; r.budget < 0 {
			return false
		}
		switch sel := sel.(type) {
		case *ast.Field:
			k := pathKey{parent: parent, key: sel.Alias}
			if k.key == "" {
				k.key = sel.Name
			}
			id, ok := r.places[k]
			if !ok {
				id = len(r.counts)
				r.places[k] = id
				r.counts = append(r.counts, 0)
			}
			r.counts[id]++
			r.worst = max(r.worst, r.counts[id])
			if !r.set(sel.SelectionSet, id) {
				return false
			}
		case *ast.InlineFragment:
			if !r.set(sel.SelectionSet, parent) {
				return false
			}
		case *ast.FragmentSpread:
			f := r.fragments[sel.Name]
			if f == nil || r.onPath[sel.Name] {
				continue
			}
			r.onPath[sel.Name] = true
			ok := r.set(f.def.SelectionSet, parent)
			delete(r.onPath, sel.Name)
			if !ok {
				return false
			}
		}
	}
	return true
}
