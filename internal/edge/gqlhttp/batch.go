package gqlhttp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/planning/planner"
)

// Batched operations: a POST whose body is a JSON array of GraphQL
// requests (what Apollo's BatchHttpLink and batching fetchers for urql
// send) is answered with a JSON array of their answers, in the same order.
//
// The operations run one after another, in the order sent, on the
// request's one data layer (a *planner.Planner: made once per HTTP request by
// the edge, withCaller). So a later operation reuses what an earlier one read
// (the family's category list, a category listed, a page) without a call,
// mutations apply in the order sent and the operations after a mutation
// see its effect, and the batch spends one upstream-call budget. A batch
// costs at most what its operations cost sent one by one, usually less.
// Running them in order rather than concurrently (as the root fields of
// one operation run) costs fewer calls: over the 120 ordered triples of
// six demo queries, 330 in all against about 370 for the same selections
// merged into one operation each (TestBatch_NeverCostsMoreThanOneOperation);
// in order loses only where a lookup by id comes before the list that
// would have answered it.
// Each answer reports the calls its own operation sent (planner's
// per-operation counter); a call answered from the memo counts for the
// operation that sent it.
//
// Each operation is parsed, validated, limited by the document limits and
// the cost guard, and observed (log line, metrics, span) on its own; the
// errors of one do not fail the others. The complexity limit and the
// response cap hold for the batch as a whole (querylimit.WithBatch): each
// operation is refused (QUERY_LIMIT_EXCEEDED, or RESPONSE_TOO_LARGE for
// its answer) when it would take the batch past them, so that a batch
// costs the server no more work nor bytes than one operation may. The
// whole body stays under the body limit, and the request's deadline (the
// operation timeout) covers the batch: an operation not started by then
// answers UPSTREAM_UNAVAILABLE (reason "timeout") without running.

// DefaultMaxBatch is the default of Config.MaxBatch: Apollo's
// BatchHttpLink sends at most 10 operations a batch by default.
const DefaultMaxBatch = 10

// isBatch reports whether a JSON body is an array (its first byte after
// JSON's white space is '[').
func isBatch(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// batchProblem is why a batch is refused whole, before any operation runs.
type batchProblem struct {
	status int
	err    map[string]any // a GraphQL error: message, extensions with a code
}

func badBatch(msg string, index int) *batchProblem {
	ext := map[string]any{"code": graph.CodeBadRequest}
	if index >= 0 {
		ext["index"] = index
	}
	return &batchProblem{status: http.StatusBadRequest, err: map[string]any{"message": msg, "extensions": ext}}
}

// decodeBatch decodes a JSON array of GraphQL requests, at most maxBatch of
// them. An empty array, a longer one, an element that is not a JSON object
// of a GraphQL request, one without a query (nor a persisted query's
// hash, nor a persisted document's id), or one whose persisted document is
// refused (docs) refuses the whole batch: such a body is not a batch a client built.
func decodeBatch(body []byte, maxBatch int, docs *Documents) ([]*graphql.RawParams, *batchProblem) {
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, badBatch("the request body is not a JSON array of GraphQL requests: "+jsonProblem(err), -1)
	}
	switch {
	case len(elems) == 0:
		return nil, badBatch("the batch is empty: send at least one operation", -1)
	case len(elems) > maxBatch:
		return nil, &batchProblem{status: http.StatusBadRequest, err: map[string]any{
			"message":    fmt.Sprintf("the batch holds %d operations; this server takes at most %d in one request", len(elems), maxBatch),
			"extensions": map[string]any{"code": querylimit.Code, "limit": LimitBatchSize, "max": maxBatch, "count": len(elems)},
		}}
	}
	ops := make([]*graphql.RawParams, len(elems))
	for i, elem := range elems {
		if t := bytes.TrimLeft(elem, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return nil, badBatch(fmt.Sprintf("operation %d of the batch is not a JSON object of a GraphQL request", i), i)
		}
		params, id, err := decodeParams(elem)
		if err != nil {
			return nil, badBatch(fmt.Sprintf("operation %d of the batch is not a JSON object of a GraphQL request: %s", i, jsonProblem(err)), i)
		}
		if why := docs.resolve(params, id); why != nil {
			return nil, &batchProblem{status: http.StatusBadRequest, err: map[string]any{
				"message":    fmt.Sprintf("operation %d of the batch: %s", i, why.msg),
				"extensions": map[string]any{"code": why.code, "index": i},
			}}
		}
		if params.Query == "" && params.Extensions["persistedQuery"] == nil {
			return nil, badBatch(fmt.Sprintf("operation %d of the batch has no query", i), i)
		}
		ops[i] = params
	}
	return ops, nil
}

// answerBatch runs the operations of a batch in order and writes their
// answers as a JSON array: the batch answers 200 (each element carries its
// own errors). Answers are written as they come, holding one in memory at
// a time, except while every answer so far is refused with RATE_LIMITED
// alone: those are held until an answer of another kind comes (then all
// are written, and the rest as they come), or until the batch ends, when
// the batch carries Retry-After (see rateLimitedFor). Under
// application/graphql-response+json an element refused before execution
// has no "data" entry, as it would alone.
func answerBatch(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, batch []*graphql.RawParams, media string) {
	// One complexity limit and one response cap for the whole batch.
	ctx := querylimit.WithBatch(r.Context())
	held := []byte("[") // the answers not written yet: all rate-limited
	retryAfter, holding := 0, true
	for i, params := range batch {
		// Its own call counter (extensions.upstream.calls) and, after the
		// first, its own start: the log line's and the span's duration is
		// the operation's, not its wait behind the earlier ones.
		opCtx := planner.WithOperationCalls(ctx)
		if i > 0 {
			opCtx = graphql.StartOperationTrace(opCtx)
		}
		_, resp, withData := execute(opCtx, exec, params, r.Header, media)
		if !holding {
			_, _ = io.WriteString(w, ",")
			writeAnswer(w, resp, withData)
			continue
		}
		if i > 0 {
			held = append(held, ',')
		}
		var err error
		if held, err = appendAnswer(held, resp, withData); err != nil {
			panic(err) // recovered by ServeHTTP; an answer that cannot be encoded is a bug
		}
		secs, limited := rateLimitedFor(resp.Errors)
		if limited {
			retryAfter = max(retryAfter, secs)
			continue
		}
		holding = false
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(held)
		held = nil
	}
	if holding {
		setRetryAfter(w.Header(), retryAfter)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(held)
	}
	_, _ = io.WriteString(w, "]")
}
