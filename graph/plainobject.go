package graph

import (
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// objectOf returns an object's members written as gqlgen's FieldSet writes
// them: in the order of fields, each alias once, fields[i] valued
// values[i]. The plain<Type> marshallers graph/gen writes
// (plainobjects_gen.go) use it instead of a FieldSet.
func objectOf(fields []graphql.CollectedField, values []graphql.Marshaler) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, "{")
		written := 0
		for i, f := range fields {
			if aliasIn(fields[:i], f.Alias) {
				continue
			}
			if written > 0 {
				_, _ = io.WriteString(w, ",")
			}
			written++
			graphql.MarshalString(f.Alias).MarshalGQL(w)
			_, _ = io.WriteString(w, ":")
			values[i].MarshalGQL(w)
		}
		_, _ = io.WriteString(w, "}")
	})
}

func aliasIn(fields []graphql.CollectedField, alias string) bool {
	for _, f := range fields {
		if f.Alias == alias {
			return true
		}
	}
	return false
}
