// Command printschema prints the facade's GraphQL schema as one SDL
// document: schema.graphqls and every schema/*.graphqls, their `extend
// type` definitions folded into the types they extend, as gqlgen built
// the executable schema from them. Tools that read one schema file and
// take an extension for a client-side one (relay-compiler) read this.
//
//	go run ./cmd/printschema > schema.graphql
package main

import (
	"os"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/suregql/suregql/graph"
)

func main() {
	formatter.NewFormatter(os.Stdout, formatter.WithIndent("  ")).FormatSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
}
