package graphiql

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"path"
)

// PageConfig says what the playground page opens with.
type PageConfig struct {
	Title string
	// Endpoint is the GraphQL endpoint, relative to the page (e.g.
	// "/graphql").
	Endpoint string
	// Assets is the prefix Handler serves the scripts under (e.g.
	// "/graphiql/").
	Assets string
	// DefaultQuery fills the editor of a new tab.
	DefaultQuery string
	// Headers fill the headers editor of a new tab (e.g. the demo key).
	Headers map[string]string
	// Notice, when set, is shown in a bar above the playground (e.g. that
	// the server answers from its demo upstream).
	Notice string
}

// Page returns the handler of the playground page: GraphiQL with its
// explorer plugin, loading its scripts from Handler under cfg.Assets with
// Subresource Integrity.
//
// The page never keeps what is typed into it: not in the URL, not in the
// browser's storage. gqlgen's playground page cannot promise that (it
// passes shouldPersistHeaders: true and the browser's storage to GraphiQL,
// and its URL state puts the headers in the address bar), so this page
// replaces it; its markup follows gqlgen's.
//
// Users type their API key into it, so it is served with a strict
// Content-Security-Policy (see securityHeaders): it runs its own scripts
// and styles only (the files under cfg.Assets, and the inline ones that
// carry the answer's nonce), talks to its own origin only, and no page may
// frame it.
func Page(cfg PageConfig) http.Handler {
	asset := func(name string) pageAsset {
		return pageAsset{URL: path.Join(cfg.Assets, name), SRI: sri(name)}
	}
	data := pageData{
		Title:          cfg.Title,
		React:          asset("react.production.min.js"),
		ReactDOM:       asset("react-dom.production.min.js"),
		GraphiQL:       asset("graphiql.min.js"),
		GraphiQLCSS:    asset("graphiql.min.css"),
		Explorer:       asset("plugin-explorer.umd.js"),
		ExplorerCSS:    asset("plugin-explorer.css"),
		Endpoint:       cfg.Endpoint,
		DefaultQuery:   cfg.DefaultQuery,
		DefaultHeaders: cfg.Headers,
		Notice:         cfg.Notice,
	}
	// Rendered once here, so that a template or data the program got wrong
	// fails at start rather than on the first visit.
	if err := page.Execute(io.Discard, data); err != nil {
		panic(fmt.Sprintf("graphiql: render the page: %v", err))
	}
	connect := connectSources(cfg.Endpoint)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		d := data
		d.Nonce = newNonce()
		var buf bytes.Buffer
		if err := page.Execute(&buf, d); err != nil {
			http.Error(w, "the playground page could not be rendered", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		for k, v := range securityHeaders(d.Nonce, connect) {
			h[k] = v
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		// The page is the same for everybody, but a shared cache has no
		// business keeping a page that may carry a pre-filled key.
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(buf.Bytes())
	})
}

// pageData is what the page's template is given.
type pageData struct {
	Title                                                         string
	React, ReactDOM, GraphiQL, GraphiQLCSS, Explorer, ExplorerCSS pageAsset
	Endpoint, DefaultQuery                                        string
	DefaultHeaders                                                map[string]string
	Notice                                                        string
	// Nonce is the answer's CSP nonce: its inline script and style carry
	// it, and so do the styles GraphiQL adds as it runs (a dialog's).
	Nonce string
}

// pageAsset is a file the page loads from Handler, and its Subresource
// Integrity value.
type pageAsset struct{ URL, SRI string }

// newNonce returns a CSP nonce: 128 random bits, new for each answer, so
// that markup injected into the page (by a bug of GraphiQL's rendering of
// an answer) cannot guess it.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// connectSources returns the CSP sources the page may send requests to:
// its own origin, and endpoint's when endpoint is an absolute URL of
// another one.
func connectSources(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		return "'self' " + u.Scheme + "://" + u.Host
	}
	return "'self'"
}

// securityHeaders returns the security headers of an answer of the page
// whose inline script and style carry nonce, and which sends its GraphQL
// requests to connect (CSP sources):
//
//   - Content-Security-Policy: nothing by default; scripts and styles of
//     the page's origin, and inline ones that carry nonce (no
//     'unsafe-inline', no 'unsafe-eval'); images and fonts of the page's
//     origin and data: URLs (GraphiQL's stylesheet inlines its icons);
//     requests to connect only; no <base>, no form submissions, and no
//     framing (frame-ancestors 'none');
//   - X-Frame-Options: DENY, for browsers that predate frame-ancestors;
//   - X-Content-Type-Options: nosniff;
//   - Referrer-Policy: no-referrer: a link followed from the page tells the
//     other site nothing of it.
func securityHeaders(nonce, connect string) http.Header {
	csp := "default-src 'none'" +
		"; script-src 'self' 'nonce-" + nonce + "'" +
		"; style-src 'self' 'nonce-" + nonce + "'" +
		"; img-src 'self' data:; font-src 'self' data:" +
		"; connect-src " + connect +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return http.Header{
		"Content-Security-Policy": {csp},
		"X-Frame-Options":         {"DENY"},
		"X-Content-Type-Options":  {"nosniff"},
		"Referrer-Policy":         {"no-referrer"},
	}
}

var page = template.Must(template.New("graphiql").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style nonce="{{.Nonce}}">
body { margin: 0; height: 100vh; display: flex; flex-direction: column; }
#graphiql { flex: 1; min-height: 0; }
#notice { padding: 0.5rem 1rem; background: #fef3c7; color: #78350f; border-bottom: 1px solid #f59e0b; font: 14px/1.4 system-ui, sans-serif; }
.loading { height: 100%; display: flex; align-items: center; justify-content: center; font-size: 4rem; }
</style>
<script src="{{.React.URL}}" integrity="{{.React.SRI}}" crossorigin="anonymous"></script>
<script src="{{.ReactDOM.URL}}" integrity="{{.ReactDOM.SRI}}" crossorigin="anonymous"></script>
<link rel="stylesheet" href="{{.GraphiQLCSS.URL}}" integrity="{{.GraphiQLCSS.SRI}}" crossorigin="anonymous">
<link rel="stylesheet" href="{{.ExplorerCSS.URL}}" integrity="{{.ExplorerCSS.SRI}}" crossorigin="anonymous">
</head>
<body>
{{with .Notice}}<div id="notice" role="status">{{.}}</div>
{{end}}<div id="graphiql"><div class="loading">Loading…</div></div>
<script src="{{.GraphiQL.URL}}" integrity="{{.GraphiQL.SRI}}" crossorigin="anonymous"></script>
<script src="{{.Explorer.URL}}" integrity="{{.Explorer.SRI}}" crossorigin="anonymous"></script>
<script nonce="{{.Nonce}}">
// Styles GraphiQL adds as it runs (a dialog's) carry the page's nonce,
// which the page's Content-Security-Policy asks of every inline style.
window.__webpack_nonce__ = document.currentScript.nonce;
// GraphiQL keeps its tabs, history and settings in the storage it is
// given. Its history saves the headers of every run whatever
// shouldPersistHeaders says (GraphiQL 4.1), and the headers carry the API
// key; so GraphiQL gets a storage that lasts as long as the page, and a
// key typed here is never written to the browser.
class PageStorage {
  #items = new Map();
  getItem(key) { return this.#items.has(key) ? this.#items.get(key) : null; }
  setItem(key, value) { this.#items.set(key, String(value)); }
  removeItem(key) { this.#items.delete(key); }
  clear() { this.#items.clear(); }
  key(i) { return [...this.#items.keys()][i] ?? null; }
  get length() { return this.#items.size; }
}
const endpoint = new URL({{.Endpoint}}, location.href).href;
ReactDOM.render(
  React.createElement(GraphiQL, {
    fetcher: GraphiQL.createFetcher({ url: endpoint }),
    defaultQuery: {{.DefaultQuery}},
    defaultHeaders: JSON.stringify({{.DefaultHeaders}}, null, 2),
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false,
    storage: new PageStorage(),
    plugins: [GraphiQLPluginExplorer.explorerPlugin()],
    inputValueDeprecation: true,
  }),
  document.getElementById('graphiql'),
);
</script>
</body>
</html>
`))
