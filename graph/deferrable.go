package graph

// deferrable are the fields gqlgen's generated code can defer: the fields
// of an object (not of the root types) that a resolver answers
// (gqlgen.yml's "resolver: true"), which it runs concurrently. A deferred
// one is left null in the payload that holds its object and delivered in
// its fragment's payload; every other field of a deferred fragment is
// answered with its object, whatever @defer says.
// TestDeferrable_MatchesTheGeneratedCode keeps this list true to
// generated.go.
var deferrable = map[string]map[string]bool{
	"Category": {"parent": true, "subcategories": true},
	"Chat":     {"firstMessageAt": true, "lastMessageAt": true, "messages": true},
	"Import":   {"configuration": true, "stats": true, "statusDetail": true},
}

// Deferrable reports whether gqlgen's executor defers the field of
// object (a type's name) when a @defer fragment selects it: see
// deferrable.
func Deferrable(object, field string) bool { return deferrable[object][field] }
