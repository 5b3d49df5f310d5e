package restclienttest

import (
	"encoding/json"
	"net/http"
	"time"
)

// jsonContentType is what the upstream (Rails) sends with every JSON answer.
const jsonContentType = "application/json; charset=utf-8"

// response is an answer computed under the lock and written after it, so that
// a slow client or SetDelay never holds the mutex.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
}

// jsonResponse renders v. encoding/json escapes <, > and & as \u003c, \u003e
// and \u0026, which is also what Rails does by default
// (escape_html_entities_in_json), so "Food & Drink" goes over the wire as
// "Food \u0026 Drink" in both.
func jsonResponse(status int, v any) response {
	body, err := json.Marshal(v)
	if err != nil {
		// Only the fake's own types are rendered: this is a programming error.
		panic("restclienttest: rendering JSON: " + err.Error())
	}
	h := http.Header{}
	h.Set("Content-Type", jsonContentType)
	return response{status: status, header: h, body: body}
}

// errorBody is the upstream's error shape. Message and Details are left out
// when empty: some upstream errors are just {"error": "Chat not found"}.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
	Details any    `json:"details,omitempty"`
}

func errorResponse(status int, code, message string) response {
	return jsonResponse(status, errorBody{Error: code, Message: message})
}

// unauthorized is the answer to a missing, unknown or revoked key, and to any
// request carrying an Authorization header.
func unauthorized() response {
	return errorResponse(http.StatusUnauthorized, "unauthorized",
		"Access token or API key is invalid, expired, or missing")
}

// routeNotFound is Rails' answer to a path and method no route matches: the
// router answers before any controller runs, so there is no authentication,
// no rate limiting and no X-RateLimit-* header. Rails' public exceptions app
// renders it as JSON for a JSON request.
func routeNotFound() response {
	return railsException(http.StatusNotFound, "Not Found")
}

// railsException is the body Rails' public exceptions app renders for an
// exception no controller rescued: {"status":404,"error":"Not Found"}.
func railsException(status int, text string) response {
	return jsonResponse(status, struct {
		Status int    `json:"status"`
		Error  string `json:"error"`
	}{status, text})
}

// internalServerError is the upstream's own 500 (UPSTREAM.md, "Other
// answers a client must survive").
func internalServerError() response {
	return errorResponse(http.StatusInternalServerError, "internal_server_error", "An unexpected error occurred")
}

func featureDisabled() response {
	return errorResponse(http.StatusForbidden, "feature_disabled",
		"AI features are not enabled for this user")
}

// insufficientScope is authorize_scope!'s refusal; the message names the
// scope as the controller asked for it: "write" for chats and messages,
// "read_write" for POST /categories. Both need a read_write key.
func insufficientScope(scope string) response {
	return errorResponse(http.StatusForbidden, "insufficient_scope",
		"This action requires the '"+scope+"' scope")
}

// badRequest is Rails' public exception answer, in JSON, to a body that does
// not parse (ActionDispatch::Http::Parameters::ParseError). UPSTREAM.md is
// silent on it; this is Rails' stock behaviour.
func badRequest() response {
	return railsException(http.StatusBadRequest, "Bad Request")
}

// iso8601 formats a timestamp the way the upstream's jbuilder views do
// (Time#iso8601): seconds, UTC, e.g. 2025-12-17T15:00:01Z.
func iso8601(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// railsJSONTime formats a timestamp as Rails' default JSON encoding does
// (used by the import view): milliseconds, e.g. 2026-01-10T11:39:18.123Z.
func railsJSONTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// optional returns nil for "", so that absent values render as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
