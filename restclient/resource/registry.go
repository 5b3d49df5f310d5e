package resource

import "strings"

// All is every resource the facade serves, in a fixed order (node kinds
// are numbered by it): a new resource is one more line here.
var All = []*Spec{Categories, Chats, Imports, Accounts}

// Of returns the resource a path (relative to /api/v1) names by its first
// segment, or nil for a path of no resource the facade serves.
func Of(path string) *Spec {
	path = strings.TrimLeft(path, "/")
	if i := strings.IndexAny(path, "/?"); i >= 0 {
		path = path[:i]
	}
	return Named(Name(path))
}

// Named returns the resource of that name, or nil.
func Named(name Name) *Spec {
	for _, s := range All {
		if s.Name == name {
			return s
		}
	}
	return nil
}
