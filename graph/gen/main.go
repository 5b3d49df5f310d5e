// Command gen regenerates package graph from schema.graphqls and
// gqlgen.yml (run it through `go generate ./...` at the module root): it
// runs gqlgen's code generation, as `gqlgen generate` does, and then makes
// two changes to the executor gqlgen wrote.
//
// gqlgen marshals every list of objects with one goroutine per element
// (graphql.MarshalSliceConcurrently), whatever the selection: that is what
// lets the resolvers of sibling elements (Category.parent, say) reach the
// loaders together and be batched, and it is pure cost for a list whose
// selection reaches no resolver (`nodes { id name }`). gqlgen has no
// setting for it (exec.worker_limit only caps the goroutines, which would
// also cap batching), so gen routes those calls through graph.marshalList,
// which decides per selection, and writes the set of fields gqlgen runs on
// goroutines of their own (resolvedFields) for it to decide with.
//
// gqlgen also resolves every field through graphql.ResolveField: a field
// context, a derived context, the field middleware and the value boxed in
// an interface, about eight allocations, even for a struct field of a
// scalar type (`Category.name`), which can neither fail nor be null. A list
// of 30 categories pays that 60 times. gen marshals such plain fields
// directly instead (see plainFields): nothing reads their field context,
// and the facade installs no field middleware (a field interceptor added
// later would not see them; gen's comment in the executor says so).
//
// Above the fields, gqlgen builds a FieldSet for every object it marshals
// (two field sets, a map of written aliases, iterators): for an object whose
// selection reads plain fields only (a list's `nodes { id name }`), that
// costs more than its fields. gen writes, per object type, a marshaller of
// such selections (plainObjectsFile) and has the executor try it first.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/plugin"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		return fmt.Errorf("load gqlgen.yml: %w", err)
	}
	// gqlgen removes the executor before loading the package; the file gen
	// writes beside it goes too, as it refers to the executor.
	plainObjects := filepath.Join(filepath.Dir(cfg.Exec.Filename), plainObjectsFile)
	if err := os.Remove(plainObjects); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	plain := &plainFieldsPlugin{}
	if err := api.Generate(cfg, api.AddPlugin(resolvedFieldsPlugin{}), api.AddPlugin(plain)); err != nil {
		return fmt.Errorf("gqlgen: %w", err)
	}
	if err := routeListMarshalling(cfg.Exec.Filename); err != nil {
		return err
	}
	if err := marshalPlainFields(cfg.Exec.Filename, plain.fields); err != nil {
		return err
	}
	return marshalPlainObjects(cfg.Exec.Filename, cfg.Exec.Package, plain.fields)
}

// resolvedFieldsFile is written next to the executor.
const resolvedFieldsFile = "resolvedfields_gen.go"

// sliceCall is how gqlgen's executor marshals a list of objects; its last
// argument, the function marshalling element i, stays as it is.
var sliceCall = regexp.MustCompile(`graphql\.MarshalSliceConcurrently\(ctx, len\(v\), (\d+), (true|false), `)

// routeListMarshalling rewrites the executor's list marshalling to
// graph.marshalList, which takes the same arguments after the selection.
// It fails when gqlgen's executor has none: a gqlgen that marshals lists
// otherwise needs this looked at again.
func routeListMarshalling(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !sliceCall.Match(src) {
		return fmt.Errorf("%s marshals no list with graphql.MarshalSliceConcurrently: check gen against this gqlgen version", path)
	}
	src = sliceCall.ReplaceAll(src, []byte("marshalList(ctx, sel, len(v), $1, $2, "))
	if bytes.Contains(src, []byte("MarshalSliceConcurrently")) {
		return fmt.Errorf("%s marshals a list in a form gen does not know: check gen against this gqlgen version", path)
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	return writeFile(path, out)
}

// resolvedFieldsPlugin writes, next to the executor and before gqlgen
// writes it (gqlgen then compiles the package), the fields gqlgen runs
// concurrently: those with a resolver, and methods taking a context.
type resolvedFieldsPlugin struct{}

var _ interface {
	plugin.Plugin
	plugin.CodeGenerator
} = resolvedFieldsPlugin{}

func (resolvedFieldsPlugin) Name() string { return "resolvedfields" }

func (resolvedFieldsPlugin) GenerateCode(data *codegen.Data) error {
	var fields []string // "Type.field"
	for _, o := range data.Objects {
		for _, f := range o.Fields {
			if f.IsConcurrent() {
				fields = append(fields, o.Name+"."+f.Name)
			}
		}
	}
	slices.Sort(fields)
	exec := data.Config.Exec
	return writeResolvedFields(filepath.Join(filepath.Dir(exec.Filename), resolvedFieldsFile), exec.Package, fields)
}

func writeResolvedFields(path, pkg string, fields []string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by graph/gen from gqlgen.yml and schema.graphqls. DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	fmt.Fprintf(&b, "// resolvedFields holds, by \"Type.field\", the fields gqlgen's executor\n")
	fmt.Fprintf(&b, "// runs on goroutines of their own (fields with a resolver, methods taking\n")
	fmt.Fprintf(&b, "// a context): see marshalList.\n")
	fmt.Fprintf(&b, "var resolvedFields = map[string]bool{\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "\t%q: true,\n", f)
	}
	fmt.Fprintf(&b, "}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	return writeFile(path, out)
}

func writeFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	return os.WriteFile(path, data, mode)
}

// plainField is a field gen marshals directly: a struct field of an enum
// or of a built-in scalar that cannot fail to marshal (plainScalars), held
// by value, without arguments, directives or resolver.
type plainField struct {
	object, name string // GraphQL names
	goField      string // the struct field holding it
	marshal      string // the executor's marshal function of its type
}

// plainScalars are the scalars whose marshalling never fails nor yields
// null: a failure would be reported on the field's path, which only its
// field context holds (Float fails on NaN, and DateTime on a zero time).
var plainScalars = map[string]bool{"String": true, "ID": true, "Int": true, "Boolean": true}

// plainFieldsPlugin collects the plain fields of the executor gqlgen is
// about to write.
type plainFieldsPlugin struct{ fields []plainField }

var _ interface {
	plugin.Plugin
	plugin.CodeGenerator
} = (*plainFieldsPlugin)(nil)

func (*plainFieldsPlugin) Name() string { return "plainfields" }

func (p *plainFieldsPlugin) GenerateCode(data *codegen.Data) error {
	p.fields = nil
	if len(data.AllDirectives.LocationDirectives("FIELD")) > 0 {
		return nil // every field goes through _fieldMiddleware
	}
	for _, o := range data.Objects {
		if o.Root || o.Stream || strings.HasPrefix(o.Name, "__") {
			continue
		}
		for _, f := range o.Fields {
			t := f.TypeReference
			kind := t.Definition.Kind
			if f.IsResolver || f.GoFieldType != codegen.GoFieldVariable || len(f.Args) > 0 || f.HasDirectives() ||
				(kind != ast.Enum && !plainScalars[t.Definition.Name]) || t.IsPtr() || t.IsSlice() || t.IsMap() {
				continue
			}
			p.fields = append(p.fields, plainField{object: o.Name, name: f.Name, goField: f.GoFieldName, marshal: t.MarshalFunc()})
		}
	}
	return nil
}

// marshalPlainFields replaces the body of each plain field's function in
// the executor with a direct call of its marshal function. It fails when a
// body is not the one gen expects of gqlgen (a struct field read, no
// middleware): a gqlgen that generates fields otherwise needs this looked
// at again.
func marshalPlainFields(path string, fields []plainField) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, f := range fields {
		head := fmt.Sprintf("func (ec *executionContext) _%s_%s(ctx context.Context, field graphql.CollectedField, obj ", f.object, f.name)
		start := bytes.Index(src, []byte(head))
		if start < 0 {
			return fmt.Errorf("%s: no function for %s.%s", path, f.object, f.name)
		}
		open := start + bytes.Index(src[start:], []byte("{\n")) + 2
		end := open + bytes.Index(src[open:], []byte("\n}\n"))
		body := src[open:end]
		for _, want := range []string{
			"return graphql.ResolveField(",
			fmt.Sprintf("return obj.%s, nil", f.goField),
			"\n\t\tnil,\n", // no middleware chain
			fmt.Sprintf("return ec.%s(ctx, selections, v)", f.marshal),
		} {
			if !bytes.Contains(body, []byte(want)) {
				return fmt.Errorf("%s: %s.%s is not resolved as gen expects (no %q): check gen against this gqlgen version", path, f.object, f.name, want)
			}
		}
		plain := fmt.Sprintf("\t// A plain field (graph/gen): marshalled without a field context or field middleware.\n\treturn ec.%s(ctx, field.Selections, obj.%s)", f.marshal, f.goField)
		src = slices.Concat(src[:open], []byte(plain), src[end:])
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	return writeFile(path, out)
}

// plainObjectsFile is written next to the executor.
const plainObjectsFile = "plainobjects_gen.go"

// marshalPlainObjects writes, for each object type with plain fields, a
// marshaller of the selections that read nothing else (plain<Type>), and
// makes the executor's marshaller of the type (_<Type>) try it first. It
// fails when the executor has no such function for a type: a gqlgen that
// marshals objects otherwise needs this looked at again.
func marshalPlainObjects(path, pkg string, fields []plainField) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	byObject := map[string][]plainField{}
	var objects []string
	for _, f := range fields {
		if byObject[f.object] == nil {
			objects = append(objects, f.object)
		}
		byObject[f.object] = append(byObject[f.object], f)
	}
	var b bytes.Buffer
	for _, o := range objects {
		head := regexp.MustCompile(`func \(ec \*executionContext\) _` + o + `\(ctx context\.Context, sel ast\.SelectionSet, obj (\S+)\) graphql\.Marshaler \{\n`)
		m := head.FindSubmatchIndex(src)
		if m == nil {
			return fmt.Errorf("%s: no marshaller _%s of type %s: check gen against this gqlgen version", path, o, o)
		}
		objType := string(src[m[2]:m[3]])
		try := fmt.Sprintf("\tif m, ok := ec.plain%s(ctx, sel, obj); ok {\n\t\treturn m // plain fields only (graph/gen)\n\t}\n", o)
		src = slices.Concat(src[:m[1]], []byte(try), src[m[1]:])
		writePlainObject(&b, o, objType, byObject[o])
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	if err := writeFile(path, out); err != nil {
		return err
	}
	var file bytes.Buffer
	fmt.Fprintf(&file, "// Code generated by graph/gen from gqlgen.yml and schema.graphqls. DO NOT EDIT.\n\n")
	fmt.Fprintf(&file, "package %s\n\nimport (\n\t\"context\"\n\n", pkg)
	fmt.Fprintf(&file, "\t\"github.com/99designs/gqlgen/graphql\"\n\t\"github.com/vektah/gqlparser/v2/ast\"\n")
	if bytes.Contains(b.Bytes(), []byte(" *model.")) {
		fmt.Fprintf(&file, "\n\t\"github.com/suregql/suregql/graph/model\"\n")
	}
	fmt.Fprintf(&file, ")\n")
	file.Write(b.Bytes())
	gen, err := format.Source(file.Bytes())
	if err != nil {
		return fmt.Errorf("format %s: %w", plainObjectsFile, err)
	}
	return writeFile(filepath.Join(filepath.Dir(path), plainObjectsFile), gen)
}

// writePlainObject writes plain<Type>, which marshals obj as gqlgen's
// FieldSet would (members in the selection's order, keyed by alias) when
// the selection reads only the type's plain fields and __typename, with no
// deferred fragment, and reports false otherwise.
func writePlainObject(b *bytes.Buffer, object, objType string, fields []plainField) {
	names := []string{`"__typename"`}
	for _, f := range fields {
		names = append(names, strconv.Quote(f.name))
	}
	implementors := strings.ToLower(object[:1]) + object[1:] + "Implementors"
	fmt.Fprintf(b, "\n// plain%[1]s marshals a %[1]s whose selection reads nothing but its plain\n", object)
	fmt.Fprintf(b, "// fields and __typename, with no deferred fragment; ok is false otherwise.\n")
	fmt.Fprintf(b, "func (ec *executionContext) plain%s(ctx context.Context, sel ast.SelectionSet, obj %s) (m graphql.Marshaler, ok bool) {\n", object, objType)
	fmt.Fprintf(b, "\tfields := graphql.CollectFields(ec.OperationContext, sel, %s)\n", implementors)
	fmt.Fprintf(b, "\tfor _, f := range fields {\n\t\tswitch f.Name {\n\t\tcase %s:\n\t\tdefault:\n\t\t\treturn nil, false\n\t\t}\n", strings.Join(names, ", "))
	fmt.Fprintf(b, "\t\tif f.IsDeferred() {\n\t\t\treturn nil, false\n\t\t}\n\t}\n")
	fmt.Fprintf(b, "\tvalues := make([]graphql.Marshaler, len(fields))\n\tfor i, f := range fields {\n\t\tswitch f.Name {\n")
	fmt.Fprintf(b, "\t\tcase \"__typename\":\n\t\t\tvalues[i] = graphql.MarshalString(%q)\n", object)
	for _, f := range fields {
		fmt.Fprintf(b, "\t\tcase %q:\n\t\t\tvalues[i] = ec._%s_%s(ctx, f, obj)\n", f.name, object, f.name)
	}
	fmt.Fprintf(b, "\t\t}\n\t}\n\treturn objectOf(fields, values), true\n}\n")
}
