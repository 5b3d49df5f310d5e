package gqlhttp

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// payloadShaper shapes the payloads of a streamed answer as incremental
// delivery (deferSpec=20220824, which Apollo Client and urql read) has
// them: a deferred fragment's fields are not in the payload that holds
// their object (the initial one, or the payload of a fragment that holds
// a fragment deferred within it), and come in the fragment's own
// payload. gqlgen's executor writes them there as null (its issue
// #4212), which a client renders before the fragment arrives as "failed
// or empty", and which a non-null field may not be.
//
// A field is left out where gqlgen deferred it: selected only within
// active @defer fragments of its object (one also selected outside them
// is answered with its object, and stays), and one the executor defers at
// all (deferrable: a field answered by a resolver; the others come with
// their object whatever @defer says). The data are walked along with the
// operation's selections, fields collected as the executor collects them;
// only the values on the way to a @defer are read.
//
// The shaper also remembers the fields it left out until a fragment
// delivers them (pending), so that a fragment nested in another, which
// gqlgen may yield first, is written only once the object it patches is
// delivered (ready).
type payloadShaper struct {
	oc         *graphql.OperationContext
	schema     *ast.Schema
	deferrable func(object, field string) bool
	// below remembers, per selection set, whether a @defer is in it
	// (fragments expanded); satisfies, per concrete type, the types its
	// objects satisfy (itself and its interfaces), as gqlgen collects
	// their fields.
	below     map[selectionSetKey]bool
	satisfies map[*ast.Definition][]string
	// pending are the places (pathKey) of the fields left out and not
	// delivered yet.
	pending map[string]bool
}

// selectionSetKey names a selection set by its backing array.
type selectionSetKey struct {
	first *ast.Selection
	n     int
}

// candidate is a selection an object of the data may answer: the
// selections of its field and one of the concrete types its value may
// have (several for an interface or a union: the data do not say which).
type candidate struct {
	selections ast.SelectionSet
	typ        *ast.Definition
}

// newPayloadShaper returns the shaper of oc's payloads; nil (which
// shapes nothing) when oc's operation is not a query or nothing says
// which fields the executor defers.
func newPayloadShaper(oc *graphql.OperationContext, schema *ast.Schema, deferrable func(object, field string) bool) *payloadShaper {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query || schema == nil || schema.Query == nil || deferrable == nil {
		return nil
	}
	return &payloadShaper{oc: oc, schema: schema, deferrable: deferrable,
		below: map[selectionSetKey]bool{}, satisfies: map[*ast.Definition][]string{}, pending: map[string]bool{}}
}

// initial returns the initial payload's data without the deferred
// fields.
func (s *payloadShaper) initial(data json.RawMessage) json.RawMessage {
	if s == nil {
		return data
	}
	return s.shape(data, []candidate{{s.oc.Operation.SelectionSet, s.schema.Query}}, "", false)
}

// ready reports whether the object a fragment at path patches is
// delivered: no field on its way was left out and is still pending.
func (s *payloadShaper) ready(path ast.Path) bool {
	if s == nil || len(s.pending) == 0 {
		return true
	}
	key := ""
	for _, p := range path {
		key = pathKey(key, p)
		if s.pending[key] {
			return false
		}
	}
	return true
}

// fragment returns the data a fragment delivers to the object at path
// without the fields of the fragments deferred within it; the fields it
// delivers are pending no more.
func (s *payloadShaper) fragment(path ast.Path, data json.RawMessage) json.RawMessage {
	if s == nil {
		return data
	}
	at := ""
	for _, p := range path {
		at = pathKey(at, p)
	}
	if ms, ok := members(data); ok {
		for _, m := range ms {
			delete(s.pending, pathKey(at, ast.PathName(m.key)))
		}
	}
	cands := []candidate{{s.oc.Operation.SelectionSet, s.schema.Query}}
	for _, p := range path {
		name, ok := p.(ast.PathName)
		if !ok {
			continue // an index: the same selections, for the list's item
		}
		var next []candidate
		for _, c := range cands {
			for _, f := range s.collect(c) {
				if f.Alias == string(name) {
					next = append(next, s.candidates(f)...)
				}
			}
		}
		if len(next) == 0 {
			return data // a path the operation does not select: as it is
		}
		cands = next
	}
	return s.shape(data, cands, at, true)
}

// pathKey returns the place of the member or item p of the value at
// place at: the path's elements, each after a NUL.
func pathKey(at string, p ast.PathElement) string {
	switch p := p.(type) {
	case ast.PathName:
		return at + "\x00" + string(p)
	case ast.PathIndex:
		return at + "\x00" + strconv.Itoa(int(p))
	}
	return at
}

// shape returns value (an object of one of cands, a list of them, or
// null), at place at, without its deferred fields; top: value is a
// fragment's data, whose own fields are all delivered.
func (s *payloadShaper) shape(value json.RawMessage, cands []candidate, at string, top bool) json.RawMessage {
	i := skipSpace(value, 0)
	if i >= len(value) {
		return value
	}
	switch value[i] {
	case '[':
		items, ok := elements(value)
		if !ok {
			return value
		}
		out := make([]byte, 0, len(value))
		out = append(out, '[')
		for n, item := range items {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, s.shape(item, cands, pathKey(at, ast.PathIndex(n)), top)...)
		}
		return append(out, ']')
	case '{':
		return s.object(value, cands, at, top)
	}
	return value // null, or not what the selections say
}

// object shapes an object of one of cands, at place at.
func (s *payloadShaper) object(value json.RawMessage, cands []candidate, at string, top bool) json.RawMessage {
	ms, ok := members(value)
	if !ok {
		return value
	}
	types := s.collectAll(cands)
	if !top {
		types = narrow(types, ms)
	}
	out := make([]byte, 0, len(value))
	out = append(out, '{')
	wrote := false
	for _, m := range ms {
		v := value[m.start:m.end]
		deferred, inner := s.member(types, m.key)
		if !top && deferred && isNull(v) {
			s.pending[pathKey(at, ast.PathName(m.key))] = true
			continue // deferred: its fragment delivers it
		}
		if wrote {
			out = append(out, ',')
		}
		wrote = true
		out = append(out, value[m.keyStart:m.keyEnd]...)
		out = append(out, ':')
		if len(inner) > 0 {
			v = s.shape(v, inner, pathKey(at, ast.PathName(m.key)), false)
		}
		out = append(out, v...)
	}
	return append(out, '}')
}

// collected is a candidate's collected fields.
type collected struct {
	typ    *ast.Definition
	fields []graphql.CollectedField
}

func (s *payloadShaper) collectAll(cands []candidate) []collected {
	out := make([]collected, 0, len(cands))
	for _, c := range cands {
		out = append(out, collected{c.typ, s.collect(c)})
	}
	return out
}

// narrow returns the candidates whose collected fields are the object's
// keys, in order (the executor writes each, deferred ones null): the
// object's concrete type, where an interface or a union leaves it open;
// all of them when none is.
func narrow(types []collected, ms []member) []collected {
	if len(types) < 2 {
		return types
	}
	var matching []collected
	for _, t := range types {
		if sameKeys(t.fields, ms) {
			matching = append(matching, t)
		}
	}
	if len(matching) == 0 {
		return types
	}
	return matching
}

// member reports whether the object's member key is a field gqlgen
// deferred for every candidate type that selects it, and what its value
// may answer when a @defer is within its selections (nil otherwise: its
// value is written as it is).
func (s *payloadShaper) member(types []collected, key string) (deferred bool, inner []candidate) {
	answered := false
	for _, t := range types {
		for _, f := range t.fields {
			if f.Alias != key {
				continue
			}
			if f.IsDeferred() && s.deferrable(t.typ.Name, f.Name) {
				deferred = true
			} else {
				answered = true
			}
			if s.deferBelow(f.Selections) {
				inner = append(inner, s.candidates(f)...)
			}
		}
	}
	return deferred && !answered, inner
}

// collect returns the fields of c's selections for its type, as the
// executor collects them (gqlgen caches them per operation).
func (s *payloadShaper) collect(c candidate) []graphql.CollectedField {
	satisfies, ok := s.satisfies[c.typ]
	if !ok {
		satisfies = append([]string{c.typ.Name}, c.typ.Interfaces...)
		s.satisfies[c.typ] = satisfies
	}
	return graphql.CollectFields(s.oc, c.selections, satisfies)
}

// candidates returns what an object of f's value may answer: f's
// selections, for each concrete type of f's type.
func (s *payloadShaper) candidates(f graphql.CollectedField) []candidate {
	if f.Definition == nil || f.Definition.Type == nil {
		return nil
	}
	def := s.schema.Types[f.Definition.Type.Name()]
	if def == nil {
		return nil
	}
	types := []*ast.Definition{def}
	if def.IsAbstractType() {
		types = s.schema.GetPossibleTypes(def)
	}
	out := make([]candidate, 0, len(types))
	for _, t := range types {
		out = append(out, candidate{f.Selections, t})
	}
	return out
}

// deferBelow reports whether set holds a @defer, fragments expanded.
func (s *payloadShaper) deferBelow(set ast.SelectionSet) bool {
	if len(set) == 0 {
		return false
	}
	key := selectionSetKey{&set[0], len(set)}
	if held, ok := s.below[key]; ok {
		return held
	}
	held := slices.ContainsFunc(set, func(sel ast.Selection) bool {
		switch sel := sel.(type) {
		case *ast.Field:
			return s.deferBelow(sel.SelectionSet)
		case *ast.InlineFragment:
			return sel.Directives.ForName("defer") != nil || s.deferBelow(sel.SelectionSet)
		case *ast.FragmentSpread:
			return sel.Directives.ForName("defer") != nil || sel.Definition != nil && s.deferBelow(sel.Definition.SelectionSet)
		}
		return false
	})
	s.below[key] = held
	return held
}

// sameKeys reports whether fs answer exactly the keys of ms, in order.
func sameKeys(fs []graphql.CollectedField, ms []member) bool {
	if len(fs) != len(ms) {
		return false
	}
	for i, f := range fs {
		if f.Alias != ms[i].key {
			return false
		}
	}
	return true
}

// member is an object's member in its JSON text: its key, the span of
// the key as written, and the span of its value.
type member struct {
	key              string
	keyStart, keyEnd int
	start, end       int
}

// members returns the members of the JSON object b, false when b is not
// one.
func members(b []byte) ([]member, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var ms []member
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return ms, true
	}
	for i < len(b) {
		keyEnd, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		var key string
		if raw := b[i+1 : keyEnd-1]; !strings.ContainsRune(string(raw), '\\') {
			key = string(raw)
		} else if json.Unmarshal(b[i:keyEnd], &key) != nil {
			return nil, false
		}
		j := skipSpace(b, keyEnd)
		if j >= len(b) || b[j] != ':' {
			return nil, false
		}
		start := skipSpace(b, j+1)
		end, ok := skipValue(b, start)
		if !ok {
			return nil, false
		}
		ms = append(ms, member{key: key, keyStart: i, keyEnd: keyEnd, start: start, end: end})
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			return ms, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

// elements returns the elements of the JSON array b, false when b is not
// one.
func elements(b []byte) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var items []json.RawMessage
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return items, true
	}
	for i < len(b) {
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		items = append(items, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == ']' {
			return items, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

// skipValue returns the end of the JSON value that starts at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := skipString(b, j)
				if !ok {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	j := i // a number or a literal
	for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
		j++
	}
	return j, j > i
}

// skipString returns the end of the JSON string that starts at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

func isNull(v []byte) bool {
	return string(v) == "null"
}
