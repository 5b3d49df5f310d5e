package graphiql

import (
	"html/template"
	"net/http"
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
func Page(cfg PageConfig) http.Handler {
	asset := func(name string) map[string]string {
		return map[string]string{"URL": path.Join(cfg.Assets, name), "SRI": sri(name)}
	}
	data := map[string]any{
		"Title":          cfg.Title,
		"React":          asset("react.production.min.js"),
		"ReactDOM":       asset("react-dom.production.min.js"),
		"GraphiQL":       asset("graphiql.min.js"),
		"GraphiQLCSS":    asset("graphiql.min.css"),
		"Explorer":       asset("plugin-explorer.umd.js"),
		"ExplorerCSS":    asset("plugin-explorer.css"),
		"Endpoint":       cfg.Endpoint,
		"DefaultQuery":   cfg.DefaultQuery,
		"DefaultHeaders": cfg.Headers,
		"Notice":         cfg.Notice,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page is the same for everybody, but a shared cache has no
		// business keeping a page that may carry a pre-filled key.
		w.Header().Set("Cache-Control", "no-store")
		_ = page.Execute(w, data)
	})
}

var page = template.Must(template.New("graphiql").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
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
<script>
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
