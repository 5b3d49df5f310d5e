//go:build tools

// Package tools pins gqlgen's command, so that `go generate ./...` (which
// runs `go run github.com/99designs/gqlgen generate`, see generate.go) uses
// the gqlgen version of go.mod.
package tools

import _ "github.com/99designs/gqlgen"
