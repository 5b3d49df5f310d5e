package gqlhttp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph"
)

// Trusted documents (persisted documents): a manifest of id → document,
// written by the app's build, lets a client send an operation by its id
// instead of its text, and lets the server run only the app's own
// operations.
//
// Manifests: a JSON object {"<id>": "<document>"}, which is what
// relay-compiler writes with persistConfig {"file": …} (ids of MD5, SHA1
// or SHA256, by its "algorithm") and what GraphQL Code Generator's client
// preset writes with persistedDocuments (persisted-documents.json, ids
// "sha256:<hex>" of the document by default). An id of 64 hex digits
// (bare or after "sha256:") is a SHA-256: it must be the hash of its
// document, and is found by either spelling.
//
// A request names a document by one of:
//   - "documentId" (GraphQL over HTTP's persisted documents), "doc_id"
//     (Relay's documented network layer) or "id", members of a POST's body
//     or parameters of a GET;
//   - extensions.persistedQuery.sha256Hash (Apollo Client's and urql's
//     persisted-query links, which GraphQL Code Generator's documents feed
//     with their hash).
//
// The document is looked up before GraphQL reads the request: an unknown
// id is refused (PERSISTED_DOCUMENT_NOT_FOUND, 400) without parsing
// anything or calling the upstream. With arbitrary documents refused (the
// manifest's mode of -allow-arbitrary-documents=false), a request that
// names no document of the manifest is refused the same way
// (PERSISTED_DOCUMENT_REQUIRED, or PERSISTED_DOCUMENT_NOT_FOUND for a
// hash), a document sent as text included, even a valid one. With
// arbitrary documents allowed (the default), a hash the manifest does not
// hold goes on to Automatic Persisted Queries as before.

// Codes of requests refused by the trusted documents.
const (
	// CodePersistedDocumentNotFound: the request names a document (by id
	// or hash) the server does not hold.
	CodePersistedDocumentNotFound = "PERSISTED_DOCUMENT_NOT_FOUND"
	// CodePersistedDocumentRequired: the server runs only its trusted
	// documents, and the request names none.
	CodePersistedDocumentRequired = "PERSISTED_DOCUMENT_REQUIRED"
)

// Documents are the trusted documents of a server: nil holds none and
// allows any document.
type Documents struct {
	byID      map[string]string // by id, SHA-256 ids under both spellings
	count     int               // the manifest's entries
	onlyThese bool
}

// NewDocuments returns the documents of manifest (id → document); when
// allowArbitrary is false the server runs only those. An id of 64 hex
// digits must be the SHA-256 of its document.
func NewDocuments(manifest map[string]string, allowArbitrary bool) (*Documents, error) {
	byID := make(map[string]string, len(manifest))
	for _, id := range slices.Sorted(maps.Keys(manifest)) {
		doc := manifest[id]
		hash := strings.TrimPrefix(id, sha256Prefix)
		switch {
		case id == "":
			return nil, fmt.Errorf("an entry has an empty id")
		case doc == "":
			return nil, fmt.Errorf("the document of id %s is empty", id)
		case sha256Hex.MatchString(hash):
			sum := sha256.Sum256([]byte(doc))
			if got := hex.EncodeToString(sum[:]); !equalFoldASCII(got, hash) {
				return nil, fmt.Errorf("id %s looks like a SHA-256 but its document hashes to %s: the manifest does not match its documents", id, got)
			}
			// Either spelling finds it: a hash sent bare (Apollo's
			// sha256Hash) or prefixed (GraphQL Code Generator's ids).
			byID[strings.ToLower(hash)] = doc
			byID[sha256Prefix+strings.ToLower(hash)] = doc
		}
		byID[id] = doc
	}
	return &Documents{byID: byID, count: len(manifest), onlyThese: !allowArbitrary}, nil
}

// sha256Prefix starts the ids GraphQL Code Generator's client preset
// writes: "sha256:<hex>".
const sha256Prefix = "sha256:"

// LoadDocuments reads a manifest file (see NewDocuments).
func LoadDocuments(path string, allowArbitrary bool) (*Documents, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("persisted documents: %w", err)
	}
	var manifest map[string]string
	if err := json.Unmarshal(b, &manifest); err != nil {
		return nil, fmt.Errorf("persisted documents %s: not a JSON object of id → document (as relay-compiler's persistConfig or GraphQL Code Generator's persistedDocuments write it): %s", path, jsonProblem(err))
	}
	d, err := NewDocuments(manifest, allowArbitrary)
	if err != nil {
		return nil, fmt.Errorf("persisted documents %s: %w", path, err)
	}
	return d, nil
}

// Len is the number of documents.
func (d *Documents) Len() int {
	if d == nil {
		return 0
	}
	return d.count
}

// OnlyThese reports whether the server runs its trusted documents only.
func (d *Documents) OnlyThese() bool { return d != nil && d.onlyThese }

var sha256Hex = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

func equalFoldASCII(lower, s string) bool {
	if len(lower) != len(s) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// documentRefusal is why a request's document is refused.
type documentRefusal struct{ code, msg string }

// resolve fills in the query of params from the document it names (id, or
// its persisted query's hash), or says why it is refused. A hash answered
// from the manifest is taken out of params' extensions, so that Automatic
// Persisted Queries neither check it against the text (a Relay id is no
// hash of it) nor store the document again.
func (d *Documents) resolve(params *graphql.RawParams, id string) *documentRefusal {
	hash := persistedHash(params)
	if id == conflictingIDs {
		return &documentRefusal{graph.CodeBadRequest, "the request names two different documents (documentId, doc_id, id): send one"}
	}
	if id == "" && hash == "" && !d.OnlyThese() {
		return nil // today's path: a document sent as text, nothing to look up
	}
	named := id
	if named == "" {
		named = hash
	}
	if sha256Hex.MatchString(strings.TrimPrefix(named, sha256Prefix)) {
		named = strings.ToLower(named) // the manifest keeps hashes in lower case
	}
	doc, found := "", false
	if d != nil && named != "" {
		doc, found = d.byID[named]
	}
	switch {
	case found:
		if params.Query != "" && params.Query != doc {
			return &documentRefusal{graph.CodeBadRequest, "the request sends a document with the id of another: send the id alone"}
		}
		params.Query = doc
		if id == "" {
			params.Extensions = maps.Clone(params.Extensions)
			delete(params.Extensions, "persistedQuery")
		}
		return nil
	case id != "" && params.Query != "" && !d.OnlyThese():
		// An id that names no document beside a document sent as text (a
		// client's own operation id, a server without a manifest): the
		// text runs, as it would without the id.
		return nil
	case id != "":
		if d.Len() == 0 {
			return &documentRefusal{CodePersistedDocumentNotFound, "this server holds no persisted documents (start it with -persisted-documents)"}
		}
		return &documentRefusal{CodePersistedDocumentNotFound, "no persisted document has this id"}
	case !d.OnlyThese():
		return nil // a hash for Automatic Persisted Queries
	case hash != "":
		return &documentRefusal{CodePersistedDocumentNotFound, "no persisted document has this hash; this server runs only its persisted documents"}
	}
	return &documentRefusal{CodePersistedDocumentRequired, "this server runs only its persisted documents: send a documentId (or the persisted query's sha256Hash), not a document"}
}

// persistedHash is extensions.persistedQuery.sha256Hash, or "".
func persistedHash(params *graphql.RawParams) string {
	pq, _ := params.Extensions["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}

// document refuses the request for why.
func (r refusedRequest) document(why *documentRefusal) {
	r.answer(http.StatusBadRequest, why.code, why.msg)
}

// wireParams is a POST's body: a GraphQL request, and the id of a
// persisted document under one of the names clients send it.
type wireParams struct {
	graphql.RawParams
	DocumentID idMember `json:"documentId"`
	DocID      idMember `json:"doc_id"`
	ID         idMember `json:"id"`
}

// idMember is a member that may name a document: a string names one; any
// other JSON value (a client's own numeric "id", say) names none and is
// no error.
type idMember string

func (m *idMember) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*m = idMember(s)
	}
	return nil
}

// conflictingIDs is the id of a request that names two different
// documents: no manifest id can be it (it is a NUL byte).
const conflictingIDs = "\x00"

// documentID is the id the request names, "" for none, or
// conflictingIDs.
func (p *wireParams) documentID() string {
	return oneID(string(p.DocumentID), string(p.DocID), string(p.ID))
}

// oneID is the one id among ids ("" ignored), "" for none, or
// conflictingIDs when two differ.
func oneID(ids ...string) string {
	id := ""
	for _, v := range ids {
		switch {
		case v == "":
		case id == "":
			id = v
		case v != id:
			return conflictingIDs
		}
	}
	return id
}

// getDocumentIDs are the parameters of a GET that may name a document
// (resolveGET reads the same three).
var getDocumentIDs = []string{"documentId", "doc_id", "id"}

// resolveGET fills in a GET's query from the document it names, as
// resolve does a POST's, rewriting the query string gqlgen's GET
// transport reads. A server without documents leaves GETs as they are.
func (d *Documents) resolveGET(r *http.Request) *documentRefusal {
	if d == nil {
		return nil
	}
	q := r.URL.Query()
	id := oneID(q.Get("documentId"), q.Get("doc_id"), q.Get("id"))
	params := &graphql.RawParams{Query: q.Get("query")}
	if ext := q.Get("extensions"); ext != "" {
		_ = json.Unmarshal([]byte(ext), &params.Extensions) // gqlgen refuses a bad one
	}
	hadHash := persistedHash(params) != ""
	if why := d.resolve(params, id); why != nil {
		return why
	}
	if params.Query == q.Get("query") {
		return nil
	}
	q.Set("query", params.Query)
	for _, name := range getDocumentIDs {
		q.Del(name)
	}
	if hadHash && id == "" {
		if len(params.Extensions) == 0 {
			q.Del("extensions")
		} else if b, err := json.Marshal(params.Extensions); err == nil {
			q.Set("extensions", string(b))
		}
	}
	r.URL.RawQuery = q.Encode()
	return nil
}
