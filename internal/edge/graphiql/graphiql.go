// Package graphiql serves the GraphiQL playground: its page (Page), and its
// scripts and styles from the binary (Handler), so the playground works
// without reaching a CDN (offline laptops, locked-down networks). The files
// are the exact ones gqlgen's playground loads from jsDelivr by default
// (assets/NOTICE.md; update.sh refreshes them), served under a prefix with
// long-lived caching and Subresource Integrity hashes computed from the
// embedded bytes.
package graphiql

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
)

//go:embed assets/*.js assets/*.css
var assets embed.FS

// Handler serves the embedded files under prefix (e.g. "/graphiql/").
func Handler(prefix string) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The names are versioned by their content (update.sh): cache hard.
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

// sri returns the Subresource Integrity value of an embedded file.
func sri(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
