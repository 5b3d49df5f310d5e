package gqlhttp

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rs/cors"

	"github.com/suregql/suregql/internal/edge/requestid"
)

// maxBodyBytes bounds a request's body: a document is at most 64 KiB
// (querylimit); variables are small.
const maxBodyBytes = 128 << 10

// corsMaxAge is how long a browser may cache a preflight's answer, in
// seconds: a page's calls then cost one preflight every 10 minutes.
const corsMaxAge = 600

// DefaultCORSHeaders are the request headers a page of an allowed origin
// may send (a preflight names them): the caller's key and the body's
// type, a request id to quote, and what browser SDKs add to every fetch:
// W3C trace context and baggage (OpenTelemetry), Sentry's trace header,
// and Apollo Client's client awareness and CSRF-prevention headers.
var DefaultCORSHeaders = []string{
	"Content-Type", "X-Api-Key", requestid.Header,
	"traceparent", "tracestate", "baggage", "sentry-trace",
	"apollographql-client-name", "apollographql-client-version", "apollo-require-preflight",
}

// corsExposedHeaders are the answer's headers a page may read besides
// the safelisted ones: the request id, to quote when reporting a fault,
// and Retry-After of a rate-limited answer.
var corsExposedHeaders = []string{requestid.Header, "Retry-After"}

// allowCORS lets pages of origins call next from a browser: a preflight
// (OPTIONS with Access-Control-Request-Method) is answered 204 for GET and
// POST with the headers of DefaultCORSHeaders and extra, and answers to an
// allowed origin name it, with "Vary: Origin" on every answer, and let
// the page read X-Request-Id and Retry-After. Credentials are not
// allowed: the key travels in a header a page sets, not in a cookie a
// browser would add to any site's request.
func allowCORS(origins, extra []string, next http.Handler) http.Handler {
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost},
		AllowedHeaders: slices.Concat(DefaultCORSHeaders, extra),
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         corsMaxAge,
	}).Handler(next)
}

// cacheHeaders marks every answer of /graphql "Cache-Control: private,
// no-store": answers hold a user's financial data, and one URL answers
// each key differently. The answers to GET, the only ones a shared cache
// might keep, also say "Vary: X-Api-Key, Origin, Accept", so that a cache
// that ignores no-store still never hands one key's answer to another
// caller (nor to another page, nor in another media type).
func cacheHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The canonical name and one shared, never-modified value: no
		// canonicalization nor allocation per answer.
		w.Header()["Cache-Control"] = privateNoStore
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			addVary(w.Header(), "X-Api-Key", "Origin", "Accept")
		}
		next.ServeHTTP(w, r)
	})
}

// privateNoStore is the Cache-Control value of every /graphql answer.
var privateNoStore = []string{"private, no-store"}

// addVary adds the names to h's Vary header, each once, keeping what is
// there (CORS adds Origin).
func addVary(h http.Header, names ...string) {
	var have []string
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			have = append(have, strings.ToLower(strings.TrimSpace(f)))
		}
	}
	var add []string
	for _, n := range names {
		if !slices.Contains(have, strings.ToLower(n)) {
			add = append(add, n)
		}
	}
	if len(add) > 0 {
		h.Add("Vary", strings.Join(add, ", "))
	}
}

// withDeadline gives each request's context a deadline d from now. It
// derives from the request's context, so a client that goes away still
// cancels the operation at once; at the deadline the resolvers' upstream
// calls fail and the fields not yet answered carry the error, while those
// already resolved still answer (a partial result, not a 503). A GET that
// the coalescer shares with other requests goes on while one of them still
// waits for it.
func withDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
