package graph

import (
	"bufio"
	"os"
	"regexp"
	"testing"
)

// The fields Deferrable names are those whose generated code defers them
// (an "if field.IsDeferred()" in their case of the object's marshaller).
// After `go generate`, a field given a resolver in gqlgen.yml fails this
// test until the list names it.
func TestDeferrable_MatchesTheGeneratedCode(t *testing.T) {
	f, err := os.Open("generated.go")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var (
		marshaller = regexp.MustCompile(`^func \(ec \*executionContext\) _([A-Z]\w*)\(ctx context\.Context, sel ast\.SelectionSet`)
		fieldCase  = regexp.MustCompile(`^\t\tcase "(\w+)":$`)
		deferred   = regexp.MustCompile(`^\t+if field\.IsDeferred\(\) \{$`)
		object     string
		field      string
		generated  = map[string]bool{}
	)
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if m := marshaller.FindStringSubmatch(line); m != nil {
			object, field = m[1], ""
		} else if m := fieldCase.FindStringSubmatch(line); m != nil {
			field = m[1]
		} else if object != "" && field != "" && deferred.MatchString(line) {
			generated[object+"."+field] = true
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if len(generated) == 0 {
		t.Fatal("no deferred field found in generated.go: the generated code changed shape; update this test")
	}
	listed := map[string]bool{}
	for object, fields := range deferrable {
		for field := range fields {
			listed[object+"."+field] = true
			if !generated[object+"."+field] {
				t.Errorf("%s.%s is listed, but the generated code answers it with its object", object, field)
			}
		}
	}
	for f := range generated {
		if !listed[f] {
			t.Errorf("the generated code defers %s: add it to deferrable", f)
		}
	}
}
