package facade

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// overHTTP adjusts gqlgen's status codes to the GraphQL-over-HTTP
// specification (checked by the graphql-http audit in CI):
//
//   - a request without a document (no "query" and no persisted query) is
//     a bad request: 400, before any execution;
//   - with the legacy application/json media type, parse and validation
//     failures SHOULD answer 200 (gqlgen answers 422), because clients of
//     that type read errors from the body.
func overHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && isJSON(r.Header.Get("Content-Type")) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				writeRequestError(w, http.StatusRequestEntityTooLarge, "request body too large or unreadable")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			// Raw messages: only whether the keys are there matters, so
			// nothing is unescaped or allocated before gqlgen decodes the
			// body for real.
			var params struct {
				Query      json.RawMessage `json:"query"`
				Extensions struct {
					PersistedQuery json.RawMessage `json:"persistedQuery"`
				} `json:"extensions"`
			}
			if json.Unmarshal(body, &params) == nil && isAbsent(params.Query) && isAbsent(params.Extensions.PersistedQuery) {
				writeRequestError(w, http.StatusBadRequest, "the request has no query")
				return
			}
		}
		next.ServeHTTP(&legacyStatus{ResponseWriter: w}, r)
	})
}

// isAbsent reports whether a JSON member was missing or null.
func isAbsent(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func writeRequestError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": "BAD_REQUEST"}}},
	})
}

// legacyStatus turns gqlgen's 422 into 200 for application/json answers.
type legacyStatus struct {
	http.ResponseWriter
}

func (w *legacyStatus) WriteHeader(status int) {
	if status == http.StatusUnprocessableEntity && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *legacyStatus) Unwrap() http.ResponseWriter { return w.ResponseWriter }
