package main

import (
	"os"
	"path/filepath"
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
	for _, f := range []string{"apollo.mjs", "urql.mjs", "codegen.ts", "src/categoryTree.ts"} {
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
