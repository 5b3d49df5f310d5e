package gqlhttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/graph"
)

// Retry-After: an answer whose every error is RATE_LIMITED carries the
// HTTP header Retry-After, in seconds, so that proxies and HTTP-level
// retry logic (which read no GraphQL body) see what extensions.retryAfter
// says. Its status stays 200: a GraphQL answer, which may hold data of
// fields the limit did not stop. An answer with any other error (or with
// none) has no Retry-After: waiting would not make it succeed. A batch has
// it only when every operation's answer has errors and all of them are
// RATE_LIMITED: a batch retried whole would run again the operations that
// succeeded.
//
// The value is the largest of the errors' retryAfter: the errors of one
// answer are one key's, so they differ only when they were read at
// different moments of its window (a 429's Retry-After, a reading of the
// rate-limit headers); before the largest has passed, a retry would be
// refused again, in part at least.

// rateLimitedFor returns the Retry-After, in seconds, of an answer whose
// every error is RATE_LIMITED; ok is false for any other answer, and for
// one whose errors say no retryAfter.
func rateLimitedFor(errs gqlerror.List) (secs int, ok bool) {
	if len(errs) == 0 {
		return 0, false
	}
	secs = -1
	for _, e := range errs {
		if e == nil || e.Extensions["code"] != graph.CodeRateLimited {
			return 0, false
		}
		if s, ok := seconds(e.Extensions["retryAfter"]); ok && s > secs {
			secs = s
		}
	}
	return secs, secs >= 0
}

// seconds reads an extensions.retryAfter: an int as the error presenter
// sets it, or a JSON number as a decoded answer holds it.
func seconds(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, n >= 0
	case float64:
		return int(n), n >= 0
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil && i >= 0
	}
	return 0, false
}

// setRetryAfter sets h's Retry-After to secs.
func setRetryAfter(h http.Header, secs int) { h.Set("Retry-After", strconv.Itoa(secs)) }

// retryAfterWriter gives Retry-After to an answer written by gqlgen's GET
// transport, which writes the whole answer in one Write, after no
// WriteHeader for an executed operation: at that first Write the answer's
// errors are read (only when the answer names RATE_LIMITED at all).
type retryAfterWriter struct {
	http.ResponseWriter
	started bool // the status is written: too late for a header
}

func (w *retryAfterWriter) WriteHeader(status int) {
	w.started = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *retryAfterWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		if bytes.Contains(b, rateLimitedCode) {
			var answer struct{ Errors gqlerror.List }
			if json.Unmarshal(b, &answer) == nil {
				if secs, ok := rateLimitedFor(answer.Errors); ok {
					setRetryAfter(w.Header(), secs)
				}
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var rateLimitedCode = []byte(`"` + graph.CodeRateLimited + `"`)

// respErrors returns resp's errors; none for no answer.
func respErrors(resp *graphql.Response) gqlerror.List {
	if resp == nil {
		return nil
	}
	return resp.Errors
}
