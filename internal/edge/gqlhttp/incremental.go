package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"slices"
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
	status, first, withData, rest := start(op, s.exec, req.params, r.Header, media, true)
	if first.HasNext == nil || rest == nil {
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
	enc := &partEncoder{sent: querylimit.StreamOf(op), stop: stop, shape: s.defers.shaper(rest.op)}
	resp, ended := first, false
	for {
		more := resp.HasNext != nil && *resp.HasNext // the executor yields more
		if !ended {
			b, last := enc.encode(resp, more) // nothing when resp is held
			ended = last
			// Past the deadline the client is still there: the fragments
			// that failed with it, and the closing boundary, are its to
			// read. Only a client that left (or a failed write) ends it.
			if len(b) > 0 {
				if _, err := w.Write(b); err != nil || errors.Is(ctx.Err(), context.Canceled) {
					ended = true // the client left: the rest is drained, unwritten
				} else {
					_ = rc.Flush()
				}
			}
		}
		if !more {
			return
		}
		resp = rest.next()
		if resp == nil { // the executor had no fragment left after all
			resp = &graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("the executor ended the answer before its deferred fragments")}}
		}
	}
}

// partEncoder encodes the parts of a streamed answer: the initial
// payload, then each fragment once the object it patches was delivered
// (payloadShaper.ready: gqlgen may yield a fragment nested in another
// first), each against the response cap.
type partEncoder struct {
	sent    *querylimit.Stream
	stop    func()         // ends the operation's upstream calls
	shape   *payloadShaper // leaves the deferred fields out; nil: none
	held    []*graphql.Response
	buf     []byte
	started bool // the initial payload is encoded
}

// encode returns the parts resp lets out, as written: the initial
// payload, or each fragment now ready (resp, and those held for it),
// each with its header (after the opening boundary, for the initial
// payload), its payload and the delimiter after it; more tells whether
// the executor yields more. last reports that they end the answer: the
// executor's last fragment (those still held patch an object that never
// came, and are dropped), or the part the cap refused, whose refusal is
// written instead (and the operation's calls are stopped). The bytes are
// the encoder's until the next call.
func (e *partEncoder) encode(resp *graphql.Response, more bool) (b []byte, last bool) {
	b = e.buf[:0]
	defer func() { e.buf = b }()
	if !e.started {
		e.started = true
		initial := *resp
		initial.Data = e.shape.initial(resp.Data)
		return e.append(b, &initial, true, more)
	}
	e.held = append(e.held, resp)
	ready := e.release()
	if !more {
		e.held = nil
	}
	for i, r := range ready {
		b, last = e.append(b, r, false, more || len(e.held) > 0 || i < len(ready)-1)
		if last {
			return b, true
		}
	}
	if !more && len(ready) == 0 {
		// The last fragments were held for objects that never came: the
		// answer ends with a payload saying so.
		return e.append(b, &graphql.Response{}, false, false)
	}
	return b, false
}

// release returns the held fragments whose objects are delivered, in the
// order they came, shaped: delivering one may let another out.
func (e *partEncoder) release() []*graphql.Response {
	var ready []*graphql.Response
	for {
		i := slices.IndexFunc(e.held, func(r *graphql.Response) bool { return e.shape.ready(r.Path) })
		if i < 0 {
			return ready
		}
		r := *e.held[i]
		e.held = slices.Delete(e.held, i, i+1)
		if len(r.Data) > 0 {
			r.Data = e.shape.fragment(r.Path, r.Data)
		}
		ready = append(ready, &r)
	}
}

// append appends resp's part; last reports that it ends the answer:
// hasNext false, or the cap refused it and its refusal was appended
// instead.
func (e *partEncoder) append(b []byte, resp *graphql.Response, initial, hasNext bool) ([]byte, bool) {
	start := len(b)
	prefix := partHeader
	if initial {
		prefix = "--" + multipartBoundary + "\r\n" + partHeader
	}
	b = appendPart(append(b, prefix...), resp, initial, hasNext)
	if refusal := e.sent.Admit(len(b) - start); refusal != nil {
		// Past the cap: the refusal, in the part's place, ends the
		// answer, and the operation's calls end.
		b = appendPart(b[:start+len(prefix)], &graphql.Response{Errors: gqlerror.List{refusal}, Extensions: resp.Extensions,
			Path: resp.Path, Label: resp.Label}, initial, false)
		e.stop()
		return b, true
	}
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
// answers (none for an empty resp), and resp's extensions (request id,
// the calls so far) at the payload's top level, where clients read them.
func appendSubsequent(b []byte, resp *graphql.Response, hasNext bool) ([]byte, error) {
	payload := struct {
		Incremental []incrementalItem `json:"incremental,omitempty"`
		HasNext     bool              `json:"hasNext"`
		Extensions  map[string]any    `json:"extensions,omitempty"`
	}{HasNext: hasNext, Extensions: resp.Extensions}
	if resp.Data != nil || resp.Errors != nil || resp.Path != nil || resp.Label != "" {
		data := resp.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		payload.Incremental = []incrementalItem{{Data: data, Errors: resp.Errors, Label: resp.Label, Path: resp.Path, HasNext: resp.HasNext}}
	} // else no fragment: a payload that only ends the answer
	out, err := json.Marshal(payload)
	return append(b, out...), err
}
