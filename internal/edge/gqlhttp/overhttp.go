package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/edge/requestid"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/observe/metrics"
)

// allowedMethods is what /graphql answers to; the Allow header of a 405
// for any other method lists them.
const allowedMethods = "GET, POST, OPTIONS"

// overHTTP answers a request as the GraphQL-over-HTTP specification asks
// (checked by the graphql-http audit in CI), where gqlgen's own transports
// would answer otherwise:
//
//   - a method other than GET, POST and OPTIONS is refused with 405 and
//     Allow (gqlgen would answer 400 "transport not supported");
//   - a POST whose body is not application/json is refused with 415 (gqlgen
//     would answer 400 in text/plain);
//   - a request without a document (no "query" and no persisted query) is
//     a bad request: 400, before any execution;
//   - a body that is a JSON array is a batch of at most MaxBatch requests
//     (see decodeBatch), refused whole with 400 when it is not one;
//   - an operationName over maxOperationNameBytes (a GET's, a POST's, or
//     one of a batch's) is refused with 400 and QUERY_LIMIT_EXCEEDED
//     (limit "operationName"), before GraphQL reads the request: the name
//     is never logged, echoed nor used as a label (see
//     operationNameTooLong);
//   - a mutation sent with GET is refused with 405 and "Allow: POST" (gqlgen
//     answers 406, which is about the Accept header, not the method);
//   - with the legacy application/json media type, parse and validation
//     failures SHOULD answer 200 (gqlgen answers 422), because clients of
//     that type read errors from the body.
//
// Every refusal is a JSON body with an extensions.code, like the errors of
// GraphQL itself, so that a client has one way to read them, and with the
// request's id in extensions.requestId; each is logged in one line, and
// those of a limit (bodyBytes, batchSize, operationName) are counted.
func (s *server) overHTTP(w http.ResponseWriter, r *http.Request) {
	refused := refusedRequest{w: w, ctx: r.Context(), log: s.opts.Log}
	m := s.opts.Metrics
	switch r.Method {
	case http.MethodGet:
		if name := r.URL.Query().Get("operationName"); len(name) > maxOperationNameBytes {
			refused.operationNameTooLong(m, len(name), -1)
			return
		}
		if why := s.opts.Documents.resolveGET(r); why != nil {
			refused.document(why)
			return
		}
		s.getAnswer(&statusWriter{ResponseWriter: w, method: r.Method, refused: refused}, r)
	case http.MethodOptions:
		w.Header().Set("Allow", allowedMethods)
		w.WriteHeader(http.StatusOK)
	case http.MethodPost:
		req, ok := readPost(r, refused, m, s.opts.MaxBatch, s.opts.Documents)
		if !ok {
			return
		}
		s.postAnswer(&statusWriter{ResponseWriter: w, method: r.Method, refused: refused}, r, req)
	default:
		w.Header().Set("Allow", allowedMethods)
		refused.answer(http.StatusMethodNotAllowed, graph.CodeMethodNotAllowed,
			"method "+r.Method+" is not allowed; send GET or POST")
	}
}

// postRequest is a POST as readPost decoded it: one request (its
// parameters and its body, which names it for sharing), or a batch.
type postRequest struct {
	params *graphql.RawParams
	body   string
	batch  []*graphql.RawParams
}

// readPost reads and decodes the body of a POST to /graphql; ok is false
// when it refused the request instead (refused answered it).
func readPost(r *http.Request, refused refusedRequest, m *metrics.Metrics, maxBatch int, docs *Documents) (_ postRequest, ok bool) {
	if !isJSON(r.Header.Get("Content-Type")) {
		refused.answer(http.StatusUnsupportedMediaType, graph.CodeUnsupportedMediaType,
			"the body of a POST must be application/json")
		return postRequest{}, false
	}
	body, err := readBody(r)
	if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
		// Refused after reading at most the limit: a megabyte of
		// padding costs a stranger's request nothing more.
		m.QueryLimitRefused(LimitBodyBytes)
		refused.answerError(http.StatusRequestEntityTooLarge, map[string]any{
			"message":    fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit),
			"extensions": map[string]any{"code": querylimit.Code, "limit": LimitBodyBytes, "max": tooLarge.Limit},
		})
		return postRequest{}, false
	}
	if err != nil {
		refused.answer(http.StatusBadRequest, graph.CodeBadRequest, "the request body could not be read")
		return postRequest{}, false
	}
	if isBatch(body) {
		return readBatch(body, refused, m, maxBatch, docs)
	}
	// Decoded once, here: postAnswer takes the result.
	params, id, err := decodeParams(body)
	if err != nil {
		// Said here, not by gqlgen, whose message quotes the whole
		// body back to the sender.
		refused.answer(http.StatusBadRequest, graph.CodeBadRequest, "the request body is not a JSON object of a GraphQL request: "+jsonProblem(err))
		return postRequest{}, false
	}
	// A persisted document is looked up (or the request refused) before
	// GraphQL reads anything.
	if why := docs.resolve(params, id); why != nil {
		refused.document(why)
		return postRequest{}, false
	}
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		refused.answer(http.StatusBadRequest, graph.CodeBadRequest, "the request has no query")
		return postRequest{}, false
	}
	if len(params.OperationName) > maxOperationNameBytes {
		refused.operationNameTooLong(m, len(params.OperationName), -1)
		return postRequest{}, false
	}
	return postRequest{params: params, body: string(body)}, true
}

// readBatch decodes the body of a batch (see decodeBatch).
func readBatch(body []byte, refused refusedRequest, m *metrics.Metrics, maxBatch int, docs *Documents) (_ postRequest, ok bool) {
	ops, problem := decodeBatch(body, maxBatch, docs)
	if problem != nil {
		if ext, _ := problem.err["extensions"].(map[string]any); ext["limit"] == LimitBatchSize {
			m.QueryLimitRefused(LimitBatchSize)
		}
		refused.answerError(problem.status, problem.err)
		return postRequest{}, false
	}
	for i, op := range ops {
		if len(op.OperationName) > maxOperationNameBytes {
			refused.operationNameTooLong(m, len(op.OperationName), i)
			return postRequest{}, false
		}
	}
	return postRequest{batch: ops}, true
}

// maxOperationNameBytes bounds a request's operationName: a GraphQL name
// is rarely longer than 60 bytes, and the name is logged with each
// operation (logOperation), echoed by gqlgen when no operation has it, and
// named in traces.
const maxOperationNameBytes = 256

// outcomeFailed is the outcome the log line of a refused request names,
// as the operations' log lines name one that answered no data.
const outcomeFailed = "failed"

// Limits of a request refused before GraphQL reads it, by their
// extensions.limit (QUERY_LIMIT_EXCEEDED).
const (
	// LimitBodyBytes: a body over maxBodyBytes.
	LimitBodyBytes = "bodyBytes"
	// LimitOperationName: an operationName over maxOperationNameBytes.
	LimitOperationName = "operationName"
	// LimitBatchSize: a batch of more operations than MaxBatch.
	LimitBatchSize = "batchSize"
)

// operationNameTooLong refuses a request whose operationName is n bytes
// long (the index-th operation of its batch, or -1 for a single request),
// and counts it in m (nil: none). Neither the answer nor the log line
// holds any of the name.
func (r refusedRequest) operationNameTooLong(m *metrics.Metrics, n, index int) {
	m.QueryLimitRefused(LimitOperationName)
	msg := fmt.Sprintf("the operationName is %d bytes long; the limit is %d", n, maxOperationNameBytes)
	ext := map[string]any{"code": querylimit.Code, "limit": LimitOperationName, "max": maxOperationNameBytes, "actual": n}
	if index >= 0 {
		msg = fmt.Sprintf("the operationName of operation %d of the batch is %d bytes long; the limit is %d", index, n, maxOperationNameBytes)
		ext["index"] = index
	}
	r.answerError(http.StatusBadRequest, map[string]any{"message": msg, "extensions": ext})
}

// readBody reads a request body into one buffer sized by Content-Length
// (when the client sent it, bounded by the body limit the reader
// enforces), rather than growing one by doubling.
func readBody(r *http.Request) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), maxBodyBytes)+bytes.MinRead))
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}

// jsonProblem says what is wrong with a body encoding/json refused, with
// its offset but none of its content.
func jsonProblem(err error) string {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s where an object member was expected, at byte %d", typ.Value, typ.Offset)
	}
	return "invalid JSON"
}

// decodeParams decodes a POST body as gqlgen's transports do (numbers kept
// as json.Number), and the id of the persisted document it names, if any
// (see wireParams).
func decodeParams(body []byte) (_ *graphql.RawParams, documentID string, _ error) {
	wire := &wireParams{RawParams: graphql.RawParams{ReadTime: graphql.TraceTiming{Start: graphql.Now()}}}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(wire); err != nil {
		return nil, "", err
	}
	wire.ReadTime.End = graphql.Now()
	return &wire.RawParams, wire.documentID(), nil
}

func isJSON(contentType string) bool {
	if contentType == mediaJSON { // what most clients send: no map to parse into
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// refusedRequest answers a request refused before GraphQL read it.
type refusedRequest struct {
	w   http.ResponseWriter
	ctx context.Context // the request's: its id
	log *slog.Logger
}

// answer refuses the request with one error of code.
func (r refusedRequest) answer(status int, code, msg string) {
	r.answerError(status, map[string]any{"message": msg, "extensions": map[string]any{"code": code}})
}

// answerError refuses the request with err (a GraphQL error: message and
// extensions with a code), and logs it.
func (r refusedRequest) answerError(status int, err map[string]any) {
	ext, _ := err["extensions"].(map[string]any)
	code, _ := ext["code"].(string)
	r.log.InfoContext(r.ctx, "graphql request refused", "status", status, "outcome", outcomeFailed,
		"errorCodes", []string{code})
	answer := map[string]any{"errors": []map[string]any{err}}
	if id := requestid.FromContext(r.ctx); id != "" {
		answer["extensions"] = map[string]any{"requestId": id}
	}
	r.w.Header().Set("Content-Type", "application/json")
	r.w.WriteHeader(status)
	_ = json.NewEncoder(r.w).Encode(answer)
}

// statusWriter rewrites the statuses gqlgen chooses where the
// specification asks for others.
type statusWriter struct {
	http.ResponseWriter
	method  string
	refused refusedRequest // answers in the writer's place
	// replaced is set once the answer was written here; what gqlgen writes
	// after that is dropped.
	replaced bool
}

func (w *statusWriter) WriteHeader(status int) {
	switch {
	case status == http.StatusNotAcceptable && w.method == http.MethodGet:
		// gqlgen's GET transport answers 406 for exactly one thing: an
		// operation other than a query. Rewriting its answer (rather than
		// parsing the document here first) also covers a persisted query
		// sent by hash alone.
		w.replaced = true
		w.Header().Set("Allow", http.MethodPost)
		w.refused.answer(http.StatusMethodNotAllowed, graph.CodeMethodNotAllowed,
			"only queries may be sent with GET; send mutations with POST")
		return
	case status == http.StatusUnprocessableEntity && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json"):
		status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
