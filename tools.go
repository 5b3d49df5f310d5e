//go:build tools

// Package tools pins the code generator so `go generate` runs the version in
// go.mod.
package tools

import _ "github.com/99designs/gqlgen"
