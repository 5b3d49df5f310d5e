package gqlhttp

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/edge/detach"
	"github.com/suregql/suregql/restclient"
)

// Media types of a GraphQL answer (GraphQL over HTTP).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// postAnswer answers a POST readPost decoded, as gqlgen's POST transport
// for application/json bodies would, with these differences:
//   - it takes the parameters readPost already decoded (JSON decoding
//     dominates the cost of refusing a large request; gqlgen's transport
//     decodes the body itself);
//   - identical requests of a caller in flight together run once (see
//     sharedQueries): the others skip GraphQL altogether;
//   - a request refused before execution (parse, validation, limits)
//     answers 200 under application/json, which clients of that legacy
//     type read errors from, and 400 under
//     application/graphql-response+json, without a "data" entry there;
//   - it is never reached with a body that is not a GraphQL request
//     (overHTTP answers those), so it never quotes a body back;
//   - it answers a batch (a JSON array of requests) with an array (see
//     answerBatch).
func (s *server) postAnswer(w http.ResponseWriter, r *http.Request, req postRequest) {
	if answersIncrementally(r, req) {
		s.streamAnswer(w, r, req)
		return
	}
	ctx := r.Context()
	media := answerMedia(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	if req.batch != nil {
		answerBatch(w, r, s.exec, req.batch, media)
		return
	}
	status, withData := http.StatusOK, true
	shared := sharedRequest{
		id:     requestIdentity{caller: CallerID(ctx), method: http.MethodPost, request: req.body},
		header: r.Header, params: req.params,
	}
	resp := s.shares.answer(ctx, shared, func(ctx context.Context) *graphql.Response {
		var resp *graphql.Response
		status, resp, withData = execute(ctx, s.exec, req.params, r.Header, media)
		return resp
	})
	if secs, ok := rateLimitedFor(respErrors(resp)); ok {
		setRetryAfter(w.Header(), secs)
	}
	w.WriteHeader(status)
	writeAnswer(w, resp, withData)
}

// getAnswer answers a GET with gqlgen's GET transport, identical GETs of a
// caller in flight together run once, as postAnswer runs POSTs (see
// sharedQueries). gqlgen picks the answer's media type as answerMedia
// does; a waiter's answer is encoded as gqlgen encodes the leader's.
func (s *server) getAnswer(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	shared := sharedRequest{
		id:     requestIdentity{caller: CallerID(ctx), method: http.MethodGet, request: r.URL.RawQuery},
		header: r.Header,
	}
	resp := s.shares.answer(ctx, shared, func(ctx context.Context) *graphql.Response {
		s.get.Do(&retryAfterWriter{ResponseWriter: w}, r.WithContext(ctx), s.exec)
		return nil // written
	})
	if resp == nil {
		return
	}
	w.Header().Set("Content-Type", answerMedia(r.Header.Get("Accept")))
	if secs, ok := rateLimitedFor(resp.Errors); ok {
		setRetryAfter(w.Header(), secs)
	}
	b, err := json.Marshal(resp) // as gqlgen writes a GET's answer, byte for byte
	if err != nil {
		panic(err) // recovered by ServeHTTP; an answer that cannot be encoded is a bug
	}
	_, _ = w.Write(b)
}

// execute runs one operation and returns the status it answers with alone,
// its answer and whether the answer has a "data" entry. A request refused
// before execution (parse, validation, limits) answers 200 under
// application/json and, with no "data", 400 under
// application/graphql-response+json; an operation whose request ran out of
// time before it started is not run.
func execute(ctx context.Context, exec graphql.GraphExecutor, params *graphql.RawParams, header http.Header, media string) (int, *graphql.Response, bool) {
	status, resp, withData, _ := start(ctx, exec, params, header, media, false)
	return status, resp, withData
}

// laterParts is what follows a streamed operation's initial payload.
type laterParts struct {
	op   *graphql.OperationContext
	next func() *graphql.Response // the next deferred fragment
}

// start runs one operation as execute does; for an answer that streams,
// it also returns what yields its later answers (the deferred fragments;
// nil when it did not run), and a query then runs past its request's end
// (see streamAnswer).
func start(ctx context.Context, exec graphql.GraphExecutor, params *graphql.RawParams, header http.Header, media string, stream bool) (int, *graphql.Response, bool, *laterParts) {
	params.Headers = header
	if stream {
		// A query answered in parts keeps its @defer (see deferSupport).
		ctx = context.WithValue(ctx, streamingKey{}, true)
	}
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil {
		errs = deferOutsideQuery(rc)
	}
	if errs != nil {
		status := http.StatusOK
		if media == mediaGraphQLResponse && errcode.GetErrorKind(errs) == errcode.KindProtocol {
			status = http.StatusBadRequest
		}
		return status, exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs), media == mediaJSON, nil
	}
	if err := ctx.Err(); err != nil {
		// gqlgen would answer null; say why, through the response
		// middlewares (request id, cost, log line, metrics).
		return http.StatusOK, exec.DispatchError(graphql.WithOperationContext(ctx, rc), gqlerror.List{notRun(err)}), media == mediaJSON, nil
	}
	if stream && rc.Operation.Operation == ast.Query {
		ctx = detach.Operation(ctx)
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	if resp == nil {
		// The context ended between the check above and the execution of
		// the fields: gqlgen answers nothing, but a batch's array keeps
		// one answer per operation.
		err := ctx.Err()
		if err == nil {
			err = context.Canceled
		}
		resp = &graphql.Response{Errors: gqlerror.List{notRun(err)}}
	}
	if !stream {
		return http.StatusOK, resp, true, nil
	}
	return http.StatusOK, resp, true, &laterParts{op: rc, next: func() *graphql.Response { return responses(ctx) }}
}

// notRun is the error of an operation not run because its request's
// context ended first: the operation timeout passed (an earlier operation
// of its batch took the time), or the client went away.
func notRun(err error) *gqlerror.Error {
	e := gqlerror.Errorf("the request ran out of time before this operation started; nothing of it was run")
	e.Extensions = map[string]any{"code": graph.CodeUpstreamUnavailable, "reason": restclient.ReasonTimeout}
	if errors.Is(err, context.Canceled) {
		e.Message = "the request was canceled before this operation started; nothing of it was run"
		e.Extensions["reason"] = "canceled"
	}
	return e
}

// answerMedia picks the answer's media type from Accept: the first of
// ours it names, application/json for none or a wildcard.
func answerMedia(accept string) string {
	switch accept { // the common values, without parsing
	case "", mediaJSON:
		return mediaJSON
	case mediaGraphQLResponse:
		return mediaGraphQLResponse
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// writeAnswer writes resp as JSON; withData false leaves out the "data"
// entry of a request that never executed (the graphql-response+json
// media type asks for that).
func writeAnswer(w http.ResponseWriter, resp *graphql.Response, withData bool) {
	b, err := appendAnswer(make([]byte, 0, len(resp.Data)+256), resp, withData)
	if err != nil {
		panic(err) // recovered by net/http; an answer that cannot be encoded is a bug
	}
	_, _ = w.Write(b)
}

// appendAnswer appends resp as graphql.Response's JSON encoding would,
// but copies its data as they are: gqlgen wrote them as compact JSON
// already, and encoding/json would scan and re-compact every byte (a
// seventh of the CPU of a small answer). Incremental-delivery fields
// (label, path, hasNext) are left to encoding/json.
func appendAnswer(buf []byte, resp *graphql.Response, withData bool) ([]byte, error) {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		if !withData {
			resp = &graphql.Response{Errors: resp.Errors, Label: resp.Label, Path: resp.Path, HasNext: resp.HasNext, Extensions: resp.Extensions}
		}
		b, err := json.Marshal(resp)
		return append(buf, b...), err
	}
	start := len(buf)
	buf = append(buf, '{')
	sep := func() {
		if len(buf) > start+1 {
			buf = append(buf, ',')
		}
	}
	if len(resp.Errors) > 0 {
		b, err := json.Marshal(resp.Errors)
		if err != nil {
			return buf, err
		}
		buf = append(append(buf, `"errors":`...), b...)
	}
	if withData {
		sep()
		buf = append(buf, `"data":`...)
		if len(resp.Data) == 0 {
			buf = append(buf, "null"...)
		} else {
			buf = append(buf, resp.Data...)
		}
	}
	if len(resp.Extensions) > 0 {
		sep()
		b, err := json.Marshal(resp.Extensions)
		if err != nil {
			return buf, err
		}
		buf = append(append(buf, `"extensions":`...), b...)
	}
	return append(buf, '}'), nil
}
