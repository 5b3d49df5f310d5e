package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/config"
)

// README.md's client setups are the files .ci/clients runs against the demo
// server in CI, shown verbatim, so that what readers copy is what CI ran.
func TestREADME_ClientSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"apollo.mjs", "apollo-batch.mjs", "urql.mjs", "codegen.ts", "src/categoryTree.ts", "src/recentChats.ts"} {
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

// README.md's Apollo Client snippets for live data are the files .ci/apollo
// runs against the demo server in CI, shown verbatim.
func TestREADME_ApolloLiveSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"defer-client.mjs", "subscriptions.mjs"} {
		src, err := os.ReadFile(filepath.Join(".ci", "apollo", f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```js\n"+string(src)+"```\n") {
			t.Errorf("README.md does not show .ci/apollo/%s verbatim in a ```js block: copy the file there", f)
		}
	}
}

// README.md's configuration section is the user's view of package
// config's table of flags: a row | `-flag` | `VARIABLE` | default | meaning |
// for each flag with a variable, in the table's order, with the table's
// default (`value`, or *(…)* for none); -version, which has no variable,
// in its prose; and no flag that does not exist, in a row or in the prose.
func TestREADME_ConfigurationTableListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := markdownSection(string(readme), "## Configuration")
	if section == "" {
		t.Fatal("README.md has no section ## Configuration")
	}
	rowRe := regexp.MustCompile("^\\| `-([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| ([^|]+) \\| [^|]+ \\|$")
	type row struct{ env, def string }
	rows := map[string]row{}
	var order []string
	for line := range strings.SplitSeq(section, "\n") {
		if !strings.HasPrefix(line, "| `-") {
			continue
		}
		m := rowRe.FindStringSubmatch(line)
		switch {
		case m == nil:
			t.Errorf("README.md's configuration table: want | `-flag` | `VARIABLE` | default | meaning |, found %s", line)
			continue
		case rows[m[1]] != (row{}):
			t.Errorf("README.md's configuration table lists -%s twice", m[1])
		}
		rows[m[1]] = row{env: m[2], def: m[3]}
		order = append(order, m[1])
	}
	if len(rows) == 0 {
		t.Fatal("README.md's configuration section has no table (rows | `-flag` | `VARIABLE` | default | meaning |)")
	}

	known := map[string]bool{}
	var want []string
	for _, f := range config.Flags() {
		known[f.Name] = true
		r, listed := rows[f.Name]
		delete(rows, f.Name)
		switch {
		case f.Env == "" && listed:
			t.Errorf("README.md's configuration table lists -%s, which has no variable; say it in the prose", f.Name)
		case f.Env == "":
			if !strings.Contains(section, "`-"+f.Name+"`") {
				t.Errorf("README.md's configuration section does not mention `-%s`", f.Name)
			}
		case !listed:
			t.Errorf("README.md's configuration table has no row | `-%s` | `%s` | …", f.Name, f.Env)
		default:
			want = append(want, f.Name)
			if r.env != f.Env {
				t.Errorf("README.md's configuration table gives -%s the variable %s; its variable is %s", f.Name, r.env, f.Env)
			}
			if !readmeDefault(r.def, f.Default) {
				t.Errorf("README.md's configuration table gives -%s the default %s; write %s", f.Name, r.def, readmeDefaultOf(f.Default))
			}
		}
	}
	for name, r := range rows {
		t.Errorf("README.md's configuration table lists -%s (%s), which is no flag of the server", name, r.env)
	}
	if !t.Failed() && !slices.Equal(order, want) {
		t.Errorf("README.md's configuration table lists the flags in the order %v; package config's table: %v", order, want)
	}
	for _, m := range regexp.MustCompile("`-([a-z][a-z0-9-]*)[`=]").FindAllStringSubmatch(section, -1) {
		if !known[m[1]] {
			t.Errorf("README.md's configuration section names -%s, which is no flag of the server", m[1])
		}
	}
}

// readmeDefault says whether a default cell of README.md's configuration
// table shows def: `def`, maybe followed by words, or *(…)* for none.
func readmeDefault(cell, def string) bool {
	if def == "" {
		return strings.HasPrefix(cell, "*(") && strings.HasSuffix(cell, ")*")
	}
	want := readmeDefaultOf(def)
	return cell == want || strings.HasPrefix(cell, want+" ")
}

// readmeDefaultOf is how README.md's configuration table shows def.
func readmeDefaultOf(def string) string {
	if def == "" {
		return "*(…)*" // *(empty: …)*, *(none)*
	}
	return "`" + def + "`"
}

// markdownSection returns the section of doc under heading (a line of its
// own), up to the next heading of the same level; "" when there is none.
func markdownSection(doc, heading string) string {
	_, after, found := strings.Cut(doc, "\n"+heading+"\n")
	if !found {
		return ""
	}
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if i := strings.Index(after, "\n"+level); i >= 0 {
		after = after[:i+1]
	}
	return after
}
