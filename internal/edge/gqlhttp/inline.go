package gqlhttp

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// streamingKey marks the context of a request streamAnswer delivers in
// parts: its query keeps its @defer (see deferSupport).
type streamingKey struct{}

// deferSupport is how the facade answers @defer, as a gqlgen extension
// (it keeps the schema, which shapes a streamed answer's payloads: see
// payloadShaper).
//
// A query holding @defer that is not answered in parts (a client that
// does not accept multipart/mixed, a batch, a GET, graphql-sse, a
// WebSocket) is answered as if it had no @defer, which incremental
// delivery lets a server do ("a server may ignore @defer"): its execution
// makes no deferred part, so the answer is built once, on the request's
// context and deadline, at the cost of the same query without @defer.
// (Executed with its @defer, the answer comes in parts, one per fragment
// per item; setting each in place in one answer cost a decoding and an
// encoding of the whole answer per part: 1.7 CPU-s for 49 fragments over
// a page of 100 categories.) That is an operation context mutation: it
// runs once the operation is validated and its limits checked, before
// anything executes it.
type deferSupport struct {
	schema *ast.Schema
	// deferrable reports whether the executor defers a field (see
	// Options.Deferrable).
	deferrable func(object, field string) bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*deferSupport)(nil)

// ExtensionName names the extension for gqlgen.
func (*deferSupport) ExtensionName() string { return "Defer" }

// Validate keeps the schema.
func (d *deferSupport) Validate(es graphql.ExecutableSchema) error {
	d.schema = es.Schema()
	return nil
}

// MutateOperationContext swaps a query's operation and document for
// copies without @defer, unless its answer is streamed.
func (*deferSupport) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if ctx.Value(streamingKey{}) != nil || oc.Operation == nil || oc.Operation.Operation != ast.Query ||
		oc.Doc == nil || !strings.Contains(oc.RawQuery, "defer") {
		return nil
	}
	oc.Doc, oc.Operation = withoutDefer(oc.Doc, oc.Operation)
	return nil
}

// shaper returns the payload shaper of a streamed operation.
func (d *deferSupport) shaper(oc *graphql.OperationContext) *payloadShaper {
	return newPayloadShaper(oc, d.schema, d.deferrable)
}

// withoutDefer returns doc and op without their @defer directives. The
// document is the one every request of the same text shares (the parsed
// document cache), so it is never changed: the selection sets, fragments
// and spreads on the way to a @defer are copied, the rest shared. doc and
// op are returned as they are when they hold no @defer.
func withoutDefer(doc *ast.QueryDocument, op *ast.OperationDefinition) (*ast.QueryDocument, *ast.OperationDefinition) {
	s := deferStripper{doc: doc, fragments: map[string]*ast.FragmentDefinition{}}
	set, changed := s.selectionSet(op.SelectionSet)
	if changed {
		c := *op
		c.SelectionSet = set
		op = &c
	}
	if s.changedFragments {
		d := *doc
		d.Fragments = make(ast.FragmentDefinitionList, len(doc.Fragments))
		for i, f := range doc.Fragments {
			if stripped := s.fragments[f.Name]; stripped != nil {
				f = stripped
			}
			d.Fragments[i] = f
		}
		doc = &d
	}
	return doc, op
}

// deferStripper copies selection sets without @defer.
type deferStripper struct {
	doc *ast.QueryDocument
	// fragments holds each fragment definition met, by name: its copy
	// without @defer, or nil when it holds none. A validated document's
	// fragments form no cycle; each is walked once.
	fragments        map[string]*ast.FragmentDefinition
	changedFragments bool
}

// selectionSet returns set without @defer, and whether that is a copy.
func (s *deferStripper) selectionSet(set ast.SelectionSet) (ast.SelectionSet, bool) {
	var out ast.SelectionSet // nil until a selection changes
	for i, sel := range set {
		n, changed := s.selection(sel)
		if changed && out == nil {
			out = make(ast.SelectionSet, len(set))
			copy(out, set[:i])
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return set, false
	}
	return out, true
}

func (s *deferStripper) selection(sel ast.Selection) (ast.Selection, bool) {
	switch sel := sel.(type) {
	case *ast.Field:
		set, changed := s.selectionSet(sel.SelectionSet)
		if !changed {
			return sel, false
		}
		c := *sel
		c.SelectionSet = set
		return &c, true
	case *ast.InlineFragment:
		set, changed := s.selectionSet(sel.SelectionSet)
		dirs, dropped := dropDefer(sel.Directives)
		if !changed && !dropped {
			return sel, false
		}
		c := *sel
		c.SelectionSet, c.Directives = set, dirs
		return &c, true
	case *ast.FragmentSpread:
		def := s.fragment(sel.Name)
		dirs, dropped := dropDefer(sel.Directives)
		if def == nil && !dropped {
			return sel, false
		}
		c := *sel
		c.Directives = dirs
		if def != nil {
			c.Definition = def
		}
		return &c, true
	}
	return sel, false
}

// fragment returns the copy without @defer of the fragment named name, nil
// when it holds none (or is unknown: validation reported it).
func (s *deferStripper) fragment(name string) *ast.FragmentDefinition {
	if def, seen := s.fragments[name]; seen {
		return def
	}
	s.fragments[name] = nil
	def := s.doc.Fragments.ForName(name)
	if def == nil {
		return nil
	}
	set, changed := s.selectionSet(def.SelectionSet)
	if !changed {
		return nil
	}
	c := *def
	c.SelectionSet = set
	s.fragments[name] = &c
	s.changedFragments = true
	return &c
}

// dropDefer returns dirs without @defer, and whether it held one.
func dropDefer(dirs ast.DirectiveList) (ast.DirectiveList, bool) {
	if dirs.ForName("defer") == nil {
		return dirs, false
	}
	out := make(ast.DirectiveList, 0, len(dirs)-1)
	for _, d := range dirs {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out, true
}
