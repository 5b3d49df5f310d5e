package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// README.md's client setups are the files .ci/clients runs against the demo
// server in CI, shown verbatim, so that what readers copy is what CI ran.
func TestREADME_ClientSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apollo.mjs", "apollo-batch.mjs", "urql.mjs", "codegen.ts", "src/categoryTree.ts"} {
		t.Run(f, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(".ci", "clients", f))
			if err != nil {
				t.Fatal(err)
			}
			lang := "js"
			if strings.HasSuffix(f, ".ts") {
				lang = "ts"
			}
			block := "```" + lang + "\n" + string(src) + "```\n"
			if !strings.Contains(string(readme), block) {
				t.Errorf("README.md does not show .ci/clients/%s verbatim in a ```%s block: copy the file there", f, lang)
			}
		})
	}
}

// commandFlags are flags that do something and exit rather than configure
// the server: they have no environment variable and no row in the table.
var commandFlags = map[string]bool{"version": true}

// Every flag has its environment variable (named in its usage as "(env
// NAME)", and read), and README.md's configuration table lists every flag
// with its variable, and no other.
func TestREADME_ConfigurationTableListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]string{} // flag name → variable
	for _, row := range regexp.MustCompile("(?m)^\\| `-([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		if _, dup := table[row[1]]; dup {
			t.Errorf("README.md lists -%s twice", row[1])
		}
		table[row[1]] = row[2]
	}
	if len(table) == 0 {
		t.Fatal("README.md has no configuration table (rows | `-flag` | `VARIABLE` | …)")
	}

	read := map[string]bool{}
	fs := flag.NewFlagSet("suregql", flag.ContinueOnError)
	if _, err := parseFlags(fs, nil, func(name string) string { read[name] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	usageEnv := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`)
	fs.VisitAll(func(f *flag.Flag) {
		if commandFlags[f.Name] {
			if !strings.Contains(string(readme), "`-"+f.Name+"`") {
				t.Errorf("README.md does not mention -%s", f.Name)
			}
			return
		}
		m := usageEnv.FindStringSubmatch(f.Usage)
		switch {
		case m == nil:
			t.Errorf("-%s: its usage names no environment variable \"(env NAME)\": %q", f.Name, f.Usage)
		case !read[m[1]]:
			t.Errorf("-%s: its variable %s is never read", f.Name, m[1])
		case table[f.Name] != m[1]:
			t.Errorf("-%s: README.md's configuration table has no row | `-%s` | `%s` | (found %q)", f.Name, f.Name, m[1], table[f.Name])
		}
		delete(table, f.Name)
	})
	for name, env := range table {
		t.Errorf("README.md's configuration table lists -%s (%s), which is no flag of the server", name, env)
	}
}
