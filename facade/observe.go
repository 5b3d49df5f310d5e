package facade

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"

	"suregql/graph"
	"suregql/graph/loader"
	"suregql/metrics"
	"suregql/querylimit"
)

// limitBodyBytes is the extensions.limit of a body over maxBodyBytes,
// refused before GraphQL reads it.
const limitBodyBytes = "bodyBytes"

// errorCodes is the closed set of extensions.code values an answer may
// carry: the outcome label of a metric is one of them, or "error".
var errorCodes = map[string]bool{}

// queryLimits is the closed set of extensions.limit values of
// QUERY_LIMIT_EXCEEDED.
var queryLimits = map[string]bool{}

func init() {
	for _, c := range []string{
		graph.CodeUnauthenticated, graph.CodeForbidden, graph.CodeNotFound, graph.CodeRateLimited,
		graph.CodeUpstreamUnavailable, graph.CodeBadUserInput, graph.CodeUpstreamRejected, graph.CodeInternal,
		graph.CodeQueryTooExpensive, graph.CodeBadRequest, graph.CodeUpstreamOutcomeUnknown,
		graph.CodeMethodNotAllowed, graph.CodeUnsupportedMediaType, graph.CodeIntrospectionDisabled,
		querylimit.Code, querylimit.CodeResponseTooLarge,
		errcode.ParseFailed, errcode.ValidationFailed,
		"PERSISTED_QUERY_NOT_FOUND", // gqlgen's extension.AutomaticPersistedQuery
	} {
		errorCodes[c] = true
	}
	for _, l := range []string{
		querylimit.LimitBytes, querylimit.LimitTokens, querylimit.LimitDepth, querylimit.LimitFields,
		querylimit.LimitFragments, querylimit.LimitAliases, querylimit.LimitRootFields,
		querylimit.LimitDirectives, querylimit.LimitSameResponseKey, querylimit.LimitComplexity,
		limitBodyBytes,
	} {
		queryLimits[l] = true
	}
}

// observer is a gqlgen extension that records every GraphQL request once:
// the operations that ran (and those refused by an operation middleware,
// which skip the response middlewares) through InterceptOperation, and the
// requests refused before an operation (parse, validation, query limits)
// through InterceptResponse. Register it first, so that it is outermost.
type observer struct {
	metrics *metrics.Metrics
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = (*observer)(nil)

// inOperation marks the context of an operation the observer records.
type inOperation struct{}

func (o *observer) ExtensionName() string                   { return "Observer" }
func (o *observer) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation records the operation once its answer is made.
func (o *observer) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	ctx = context.WithValue(ctx, inOperation{}, true)
	h := next(ctx)
	done := false
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if !done { // queries and mutations answer once
			done = true
			o.record(ctx, resp)
		}
		return resp
	}
}

// InterceptResponse records the requests refused before an operation ran:
// the executor answers them with the response middlewares alone.
func (o *observer) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(inOperation{}) == nil {
		o.record(ctx, resp)
	}
	return resp
}

// record counts one answered request.
func (o *observer) record(ctx context.Context, resp *graphql.Response) {
	var (
		name, opType = "", metrics.TypeUnknown
		d            time.Duration
	)
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		name = oc.OperationName
		if oc.Operation != nil {
			name, opType = oc.Operation.Name, string(oc.Operation.Operation)
		}
		if !oc.Stats.OperationStart.IsZero() {
			d = time.Since(oc.Stats.OperationStart)
		}
	}
	outcome := metrics.OutcomeOK
	budget, limit := false, ""
	if resp == nil {
		outcome = metrics.OutcomeError // the client went away
	} else {
		for i, err := range resp.Errors {
			code, _ := err.Extensions["code"].(string)
			if !errorCodes[code] {
				code = metrics.OutcomeError
			}
			if i == 0 {
				outcome = code
			}
			switch code {
			case graph.CodeQueryTooExpensive:
				budget = true
			case querylimit.Code:
				if l, _ := err.Extensions["limit"].(string); limit == "" && queryLimits[l] {
					limit = l
				}
			}
		}
	}
	o.metrics.Operation(name, opType, outcome, d)
	if budget {
		o.metrics.BudgetRefused()
	}
	if limit != "" {
		o.metrics.QueryLimitRefused(limit)
	}
	if l := loader.From(ctx); l != nil && l.RefusedOutOfQuota() {
		o.metrics.RateLimitRefused()
	}
}
