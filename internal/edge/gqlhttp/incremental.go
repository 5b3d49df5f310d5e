package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/internal/limits/querylimit"
)

// Incremental delivery (@defer) over multipart/mixed, in the format of
// gqlgen's MultipartMixed transport, which Apollo Client and urql read
// (graphql-over-http's IncrementalDelivery RFC, deferSpec=20220824): each
// part is a JSON payload under "Content-Type: application/json", the first
// one the initial answer with "hasNext": true, each later one
// {"incremental":[…],"hasNext":…}; every part is followed by the boundary
// that opens the next, the last by the closing boundary.
const (
	// streamWriteMargin is how long past the operation's deadline the
	// parts of a streamed answer may still take to write.
	streamWriteMargin = 10 * time.Second
)

const (
	multipartBoundary = "-"
	mediaMultipart    = `multipart/mixed; boundary="` + multipartBoundary + `"; deferSpec=20220824`
	partHeader        = "Content-Type: application/json\r\n\r\n"
)

// acceptsMultipart reports whether an Accept header names multipart/mixed
// (Apollo Client sends "multipart/mixed;deferSpec=20220824,application/json"
// for an operation with @defer; urql names it for every operation).
func acceptsMultipart(accept string) bool {
	if !strings.Contains(accept, "multipart/mixed") {
		return false
	}
	for part := range strings.SplitSeq(accept, ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "multipart/mixed" {
			return true
		}
	}
	return false
}

// answersIncrementally reports whether a single POST is answered incrementally: its
// client accepts multipart/mixed and its document may hold @defer. Such a
// request never shares another's execution (see sharedQueries.middleware),
// so it is run on its own.
func answersIncrementally(r *http.Request, req postRequest) bool {
	return req.batch == nil && req.params != nil && strings.Contains(req.params.Query, "defer") &&
		acceptsMultipart(r.Header.Get("Accept"))
}

// streamAnswer answers a POST streams accepted. An operation that turns out
// to have nothing deferred (or is refused before it runs) answers in one
// piece, as postAnswer would; otherwise the initial payload is written and
// flushed at once, and each deferred fragment as the executor yields it,
// once its calls completed. Every payload passed the executor's response
// middlewares: each carries the request id, extensions.upstream (the calls
// made so far) and the response-size limit.
//
// The response cap holds for every byte written (querylimit.Stream): the
// first part that would pass it is replaced by its refusal
// (RESPONSE_TOO_LARGE), written as the last part ("hasNext": false) before
// the closing boundary; the operation's upstream calls then end as if the
// client had left, and its remaining fragments are drained, unwritten.
//
// The query runs on a context the request's end does not cancel (see
// package detach): gqlgen's executor waits for each deferred fragment
// without watching any context, and a fragment is sent only while the
// operation's context lives. When the client goes away, the operation's
// upstream calls end at once and no new one is made, its fragments are
// still yielded (with their errors) and read here without being written,
// and the handler returns once the last one is in: nothing waits forever.
func (s *server) streamAnswer(w http.ResponseWriter, r *http.Request, req postRequest) {
	ctx := r.Context()
	media := answerMedia(r.Header.Get("Accept"))
	// The request as the operation's calls see it (detach.Live): it ends
	// with the client, at its deadline, or when the answer is cut short.
	// Its parts are counted together, from before it runs (the deferred
	// parts, querylimit.ComplexityLimit) to its last byte (the cap).
	op, stop := context.WithCancel(querylimit.WithStream(ctx))
	defer stop()
	status, first, withData, next := start(op, s.exec, req.params, r.Header, media, true)
	if first.HasNext == nil || next == nil {
		w.Header().Set("Content-Type", media)
		if secs, ok := rateLimitedFor(respErrors(first)); ok {
			setRetryAfter(w.Header(), secs)
		}
		w.WriteHeader(status)
		writeAnswer(w, first, withData)
		return
	}
	// Cache-Control stays cacheHeaders' "private, no-store" (gqlgen's
	// transport says "no-cache", which lets a shared cache keep a user's
	// answer): no-store asks no proxy to buffer a stream either.
	w.Header().Set("Content-Type", mediaMultipart)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if d, ok := ctx.Deadline(); ok {
		// A client that stops reading blocks a write, which no context
		// ends: it is let go streamWriteMargin after the deadline (the
		// server's WriteTimeout is later, and an embedding server may
		// have none), and its fragments drained.
		_ = rc.SetWriteDeadline(d.Add(streamWriteMargin))
	}
	enc := &partEncoder{sent: querylimit.StreamOf(op), stop: stop}
	resp, ended := first, false
	for {
		hasNext := resp.HasNext != nil && *resp.HasNext
		if !ended {
			b, last := enc.encode(resp, hasNext)
			ended = last
			// Past the deadline the client is still there: the fragments
			// that failed with it, and the closing boundary, are its to
			// read. Only a client that left (or a failed write) ends it.
			if _, err := w.Write(b); err != nil || errors.Is(ctx.Err(), context.Canceled) {
				ended = true // the client left: the rest is drained, unwritten
			} else {
				_ = rc.Flush()
			}
		}
		if !hasNext {
			return
		}
		resp = next()
		if resp == nil { // the executor had no fragment left after all
			resp = &graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("the executor ended the answer before its deferred fragments")}}
		}
	}
}

// partEncoder encodes the parts of a streamed answer, each against the
// response cap.
type partEncoder struct {
	sent    *querylimit.Stream
	stop    func() // ends the operation's upstream calls
	buf     []byte
	started bool // the initial payload is encoded
}

// encode returns resp's part as written: its header (after the opening
// boundary, for the initial payload), its payload and the delimiter
// after it; last reports that it ends the answer: hasNext false, or the
// part the cap refused, whose refusal it is instead (and the operation's
// calls are stopped). The bytes are the encoder's until the next call.
func (e *partEncoder) encode(resp *graphql.Response, hasNext bool) (b []byte, last bool) {
	initial := !e.started
	e.started = true
	prefix := partHeader
	if initial {
		prefix = "--" + multipartBoundary + "\r\n" + partHeader
	}
	b = appendPart(append(e.buf[:0], prefix...), resp, initial, hasNext)
	if refusal := e.sent.Admit(len(b)); refusal != nil {
		// Past the cap: the refusal, in the part's place, ends the
		// answer, and the operation's calls end.
		b = appendPart(b[:len(prefix)], &graphql.Response{Errors: gqlerror.List{refusal}, Extensions: resp.Extensions,
			Path: resp.Path, Label: resp.Label}, initial, false)
		e.stop()
		hasNext = false
	}
	e.buf = b
	return b, !hasNext
}

// appendPart appends resp's payload, the initial one or a subsequent one,
// and the delimiter after it; hasNext is the payload's.
func appendPart(b []byte, resp *graphql.Response, initial, hasNext bool) []byte {
	var err error
	if initial {
		payload := *resp
		payload.HasNext = &hasNext
		b, err = appendAnswer(b, &payload, true)
	} else {
		b, err = appendSubsequent(b, resp, hasNext)
	}
	if err != nil {
		panic(err) // recovered by ServeHTTP; an answer that cannot be encoded is a bug
	}
	return appendBoundary(b, hasNext)
}

// appendBoundary appends the delimiter after a part: the next part's
// opening boundary, or the closing one.
func appendBoundary(b []byte, hasNext bool) []byte {
	b = append(b, "\r\n--"+multipartBoundary...)
	if !hasNext {
		b = append(b, "--"...)
	}
	return append(b, "\r\n"...)
}

// incrementalItem is one deferred fragment's result in a subsequent
// payload, as gqlgen's transport writes it.
type incrementalItem struct {
	Data    json.RawMessage `json:"data"`
	Errors  gqlerror.List   `json:"errors,omitempty"`
	Label   string          `json:"label,omitempty"`
	Path    ast.Path        `json:"path,omitempty"`
	HasNext *bool           `json:"hasNext,omitempty"`
}

// appendSubsequent appends a subsequent payload: the fragment resp
// answers, and resp's extensions (request id, the calls so far) at the
// payload's top level, where clients read them.
func appendSubsequent(b []byte, resp *graphql.Response, hasNext bool) ([]byte, error) {
	payload := struct {
		Incremental []incrementalItem `json:"incremental"`
		HasNext     bool              `json:"hasNext"`
		Extensions  map[string]any    `json:"extensions,omitempty"`
	}{HasNext: hasNext, Extensions: resp.Extensions}
	data := resp.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	payload.Incremental = []incrementalItem{{Data: data, Errors: resp.Errors, Label: resp.Label, Path: resp.Path, HasNext: resp.HasNext}}
	out, err := json.Marshal(payload)
	return append(b, out...), err
}
