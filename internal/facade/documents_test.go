package facade_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/edge/gqlhttp"
	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// Trusted documents: a manifest as relay-compiler (an MD5 id) and GraphQL
// Code Generator (a SHA-256 id) write them.
const (
	relayID  = "0f3ad1c3c2a9c7c6b9e0f5e54c1f3a8d" // an MD5 of relay-compiler's: not checked
	chatsDoc = `query ChatsQuery { chats(first: 5) { totalCount nodes { title } } }`
	treeDoc  = `query CategoryTree { categories(rootsOnly: true, first: 100) { totalCount } }`
)

func sha256Of(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// documentsEnv serves the manifest, with arbitrary documents allowed or
// not; the manifest is read from a file, as -persisted-documents does.
func documentsEnv(t *testing.T, allowArbitrary bool) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "persisted-documents.json")
	b, _ := json.Marshal(map[string]string{relayID: chatsDoc, sha256Of(treeDoc): treeDoc})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	docs, err := gqlhttp.LoadDocuments(path, allowArbitrary)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, withConfig(func(c *facade.Config) { c.Documents = docs }))
}

// sendDoc posts body as the demo key and returns the answer and the
// upstream calls it cost.
func sendDoc(t *testing.T, e *env, body string) (httpResult, int) {
	t.Helper()
	before := e.upstream.Calls()
	r := postJSON(t, e, body, map[string]string{"X-Api-Key": restclienttest.DemoKey})
	return r, e.upstream.Calls() - before
}

// wantRefused checks a refusal made before GraphQL read the request: 400,
// the code, no data, 0 upstream calls, and no extensions.upstream (which
// every answer of the executor carries, a parse failure's included).
func wantRefused(t *testing.T, r httpResult, calls int, code string) {
	t.Helper()
	errs, _ := r.body["errors"].([]any)
	var got string
	if len(errs) == 1 {
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		got, _ = ext["code"].(string)
	}
	if r.status != http.StatusBadRequest || got != code {
		t.Errorf("status %d, code %q, want 400 %s: %s", r.status, got, code, r.raw)
	}
	if calls != 0 {
		t.Errorf("%d upstream calls, want 0", calls)
	}
	if ext, _ := r.body["extensions"].(map[string]any); ext["upstream"] != nil {
		t.Errorf("the executor answered (extensions.upstream): %s", r.raw)
	}
	if _, ok := r.body["data"]; ok {
		t.Errorf("a refusal with data: %s", r.raw)
	}
}

// wantData checks an answer with data and no error.
func wantData(t *testing.T, r httpResult, field string) {
	t.Helper()
	data, _ := r.body["data"].(map[string]any)
	if r.status != http.StatusOK || r.body["errors"] != nil || data[field] == nil {
		t.Errorf("status %d, want data.%s without errors: %s", r.status, field, r.raw)
	}
}

// With arbitrary documents refused, the manifest's documents run by id
// (documentId, Relay's doc_id, id) or by hash (Apollo's and urql's
// persisted-query extension); anything else is refused at 0 upstream
// calls and without being parsed.
func TestDocuments_OnlyTrusted(t *testing.T) {
	t.Parallel()
	e := documentsEnv(t, false)
	for _, body := range []string{
		`{"documentId":"` + relayID + `","variables":{}}`,
		`{"doc_id":"` + relayID + `","variables":{}}`,
		`{"id":"` + relayID + `"}`,
		`{"documentId":"` + relayID + `","query":` + jsonString(chatsDoc) + `}`,
	} {
		r, calls := sendDoc(t, e, body)
		wantData(t, r, "chats")
		if calls != 1 {
			t.Errorf("%s: %d upstream calls, want 1", body, calls)
		}
	}
	r, _ := sendDoc(t, e, `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"`+sha256Of(treeDoc)+`"}}}`)
	wantData(t, r, "categories")
	r, _ = sendDoc(t, e, `{"documentId":"`+sha256Of(treeDoc)+`"}`)
	wantData(t, r, "categories")

	for name, tc := range map[string]struct{ body, code string }{
		"an unknown id":             {`{"documentId":"a-document-nobody-persisted"}`, gqlhttp.CodePersistedDocumentNotFound},
		"an unknown doc_id":         {`{"doc_id":"ffff"}`, gqlhttp.CodePersistedDocumentNotFound},
		"an unknown hash":           {`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Of("{ chats { totalCount } }") + `"}}}`, gqlhttp.CodePersistedDocumentNotFound},
		"an unknown hash with text": {`{"query":"{ chats { totalCount } }","extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Of("{ chats { totalCount } }") + `"}}}`, gqlhttp.CodePersistedDocumentNotFound},
		"a valid document":          {`{"query":` + jsonString(chatsDoc) + `}`, gqlhttp.CodePersistedDocumentRequired},
		"text that is no GraphQL":   {`{"query":"{{{ not graphql"}`, gqlhttp.CodePersistedDocumentRequired},
		"an id with another text":   {`{"documentId":"` + relayID + `","query":"{ rateLimit { limit } }"}`, "BAD_REQUEST"},
	} {
		t.Run(name, func(t *testing.T) {
			r, calls := sendDoc(t, e, tc.body)
			wantRefused(t, r, calls, tc.code)
		})
	}

	// A batch of ids runs; one arbitrary document refuses it whole.
	r, _ = sendDoc(t, e, `[{"doc_id":"`+relayID+`"},{"documentId":"`+sha256Of(treeDoc)+`"}]`)
	var answers []map[string]any
	if err := json.Unmarshal([]byte(r.raw), &answers); err != nil || len(answers) != 2 || answers[0]["errors"] != nil || answers[1]["errors"] != nil {
		t.Errorf("a batch of ids: %s", r.raw)
	}
	r, calls := sendDoc(t, e, `[{"doc_id":"`+relayID+`"},{"query":"{ rateLimit { limit } }"}]`)
	wantRefused(t, r, calls, gqlhttp.CodePersistedDocumentRequired)

	// GET: by documentId, or refused.
	get := func(params url.Values) (httpResult, int) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/graphql?"+params.Encode(), nil)
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		before := e.upstream.Calls()
		r := send(t, req)
		return r, e.upstream.Calls() - before
	}
	r, _ = get(url.Values{"documentId": {relayID}})
	wantData(t, r, "chats")
	r, calls = get(url.Values{"query": {chatsDoc}})
	wantRefused(t, r, calls, gqlhttp.CodePersistedDocumentRequired)
	r, calls = get(url.Values{"doc_id": {"nope"}})
	wantRefused(t, r, calls, gqlhttp.CodePersistedDocumentNotFound)
}

// With arbitrary documents allowed (the default), a manifest adds its ids
// to what runs; documents sent as text and Automatic Persisted Queries
// work as without it.
func TestDocuments_ArbitraryAllowed(t *testing.T) {
	t.Parallel()
	e := documentsEnv(t, true)
	r, _ := sendDoc(t, e, `{"doc_id":"`+relayID+`"}`)
	wantData(t, r, "chats")
	r, _ = sendDoc(t, e, `{"query":"{ rateLimit { unlimited } }"}`)
	wantData(t, r, "rateLimit")
	r, calls := sendDoc(t, e, `{"documentId":"unknown"}`)
	wantRefused(t, r, calls, gqlhttp.CodePersistedDocumentNotFound)
	// A hash the manifest does not hold is APQ's, as before.
	q := `{ rateLimit { limit } }`
	r, _ = sendDoc(t, e, `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"`+sha256Of(q)+`"}}}`)
	if !strings.Contains(r.raw, "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("an unknown APQ hash: %s", r.raw)
	}

	// Without a manifest, an id is refused as unknown, and the rest is
	// today's behaviour.
	plain := newEnv(t)
	r, calls = sendDoc(t, plain, `{"documentId":"`+relayID+`"}`)
	wantRefused(t, r, calls, gqlhttp.CodePersistedDocumentNotFound)
	r, _ = sendDoc(t, plain, `{"query":`+jsonString(chatsDoc)+`}`)
	wantData(t, r, "chats")
}

// A manifest whose SHA-256 ids do not hash their documents does not load.
func TestDocuments_ManifestHashesChecked(t *testing.T) {
	t.Parallel()
	_, err := gqlhttp.NewDocuments(map[string]string{sha256Of(treeDoc): chatsDoc}, false)
	if err == nil || !strings.Contains(err.Error(), "hashes to "+sha256Of(chatsDoc)) {
		t.Errorf("a mismatched hash: %v", err)
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`["not", "a", "manifest"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := gqlhttp.LoadDocuments(path, false); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("a manifest that is an array: %v", err)
	}
	if _, err := gqlhttp.NewDocuments(map[string]string{relayID: chatsDoc, strings.ToUpper(sha256Of(treeDoc)): treeDoc}, false); err != nil {
		t.Errorf("an MD5 id and an upper-case SHA-256: %v", err)
	}
	if _, err := gqlhttp.NewDocuments(map[string]string{"sha256:" + sha256Of(treeDoc): chatsDoc}, false); err == nil {
		t.Error("a mismatched sha256:<hex> id of GraphQL Code Generator's loaded")
	}
}

// GraphQL Code Generator's ids ("sha256:<hex>") are found as they are
// (documentId: the document's __meta__.hash) and by the bare hash (what
// Apollo's persisted-query link sends as sha256Hash).
func TestDocuments_CodegenIDs(t *testing.T) {
	t.Parallel()
	docs, err := gqlhttp.NewDocuments(map[string]string{"sha256:" + sha256Of(treeDoc): treeDoc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if docs.Len() != 1 {
		t.Errorf("Len %d, want 1", docs.Len())
	}
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Documents = docs }))
	for _, body := range []string{
		`{"documentId":"sha256:` + sha256Of(treeDoc) + `"}`,
		`{"documentId":"` + sha256Of(treeDoc) + `"}`,
		`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Of(treeDoc) + `"}}}`,
	} {
		r, _ := sendDoc(t, e, body)
		wantData(t, r, "categories")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Members that may name a document are read leniently (a red-team pass
// found each of these refused): beside a document sent as text, an id
// that names no document (a client's own operation id, a number, or any
// id on a server without a manifest) is ignored and the text runs; two
// different ids are refused; a hash is found whatever its case.
func TestDocuments_IDsReadLeniently(t *testing.T) {
	t.Parallel()
	plain := newEnv(t)
	for _, body := range []string{
		`{"query":"{ chats(first: 1) { totalCount } }","id":"abc"}`,
		`{"query":"{ chats(first: 1) { totalCount } }","id":7}`,
		`{"query":"{ chats(first: 1) { totalCount } }","documentId":null,"doc_id":{"x":1}}`,
	} {
		r, _ := sendDoc(t, plain, body)
		if r.status != http.StatusOK {
			t.Errorf("%s on a server without documents: %d %s", body, r.status, r.raw)
			continue
		}
		wantData(t, r, "chats")
	}
	if r, _ := sendDoc(t, plain, `[{"id":"x","query":"{ chats(first: 1) { totalCount } }"}]`); r.status != http.StatusOK || strings.Contains(r.raw, "PERSISTED_DOCUMENT") {
		t.Errorf("a batch with an operation id: %d %s", r.status, r.raw)
	}

	trusted := documentsEnv(t, false)
	r, calls := sendDoc(t, trusted, `{"documentId":"`+relayID+`","doc_id":"`+sha256Of(treeDoc)+`"}`)
	wantRefused(t, r, calls, "BAD_REQUEST")
	r, _ = sendDoc(t, trusted, `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"`+strings.ToUpper(sha256Of(treeDoc))+`"}}}`)
	wantData(t, r, "categories")
}
