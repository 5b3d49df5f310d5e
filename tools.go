//go:build tools

// Package tools pins gqlgen's command, so that its version in go.mod is
// the one graph/gen (run by `go generate`) drives through gqlgen's API,
// and so that `go run github.com/99designs/gqlgen` still works for anyone
// who wants gqlgen's own CLI (to scaffold a new resolver file, say).
package tools

import _ "github.com/99designs/gqlgen"
