package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// goDirs returns every folder of the module holding non-test Go files,
// with those files parsed.
func goDirs(t *testing.T) map[string][]*ast.File {
	t.Helper()
	dirs := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func under(dir string, roots ...string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

// Outside internal/ and cmd/, the module's packages are the ones the
// project was asked for: the server, graph/... and restclient.
func TestLayout_PackagesOutsideInternal(t *testing.T) {
	for dir := range goDirs(t) {
		if dir != "." && !under(dir, "graph", "restclient", "internal", "cmd") {
			t.Errorf("package folder %s is outside internal/ and cmd/", dir)
		}
	}
}

// Below the HTTP edge nothing handles HTTP requests: the caller is made
// once, by internal/edge/gqlhttp, and handed down as a value.
func TestLayout_NothingBelowTheEdgeHandlesRequests(t *testing.T) {
	handling := map[string]bool{"Request": true, "ResponseWriter": true, "Handler": true, "HandlerFunc": true}
	for dir, files := range goDirs(t) {
		if !under(dir, "graph", "internal/planning", "internal/state", "internal/limits") {
			continue
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "http" && handling[sel.Sel.Name] {
						t.Errorf("%s (%s) uses http.%s", dir, f.Name.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}

// No timer or sleep decides when planning happens: the planner and the
// resolvers wait for answers, never for time to pass.
func TestLayout_NoTimerDecidesPlanning(t *testing.T) {
	timers := map[string]bool{"Sleep": true, "After": true, "NewTimer": true, "AfterFunc": true, "Tick": true, "NewTicker": true}
	for dir, files := range goDirs(t) {
		if !under(dir, "graph", "internal/planning/planner") {
			continue
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && timers[sel.Sel.Name] {
						t.Errorf("%s uses time.%s", dir, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
