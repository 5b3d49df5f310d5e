package facade

import (
	"context"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/suregql/suregql/graph"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/planning/planner"
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
		graph.CodeUnsupportedByUpstream,
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
		limitBodyBytes, limitOperationName,
	} {
		queryLimits[l] = true
	}
}

// observer is a gqlgen extension that records every GraphQL request once,
// as metrics and, with a tracer, as a span: the operations that ran (and
// those refused by an operation middleware, which skip the response
// middlewares) through InterceptOperation, and the requests refused before
// an operation (parse, validation, query limits) through
// InterceptResponse. Register it first, so that it is outermost.
type observer struct {
	metrics *metrics.Metrics // nil: no metrics
	tracer  trace.Tracer     // nil: no spans
	// accepted are the keys whose operations' names the metrics label
	// (metrics.AdmitOperationName); nil admits none.
	accepted *acceptedKeys
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

// InterceptOperation records the operation once its answer is made. Its
// span is the parent of the upstream calls' spans: resolvers run under
// the context given to next.
func (o *observer) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	ctx = context.WithValue(ctx, inOperation{}, true)
	var span trace.Span
	if o.tracer != nil {
		ctx, span = o.startSpan(ctx)
	}
	h := next(ctx)
	done := false
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if !done { // queries and mutations answer once
			done = true
			o.record(ctx, resp, span)
		}
		return resp
	}
}

// InterceptResponse records the requests refused before an operation ran:
// the executor answers them with the response middlewares alone.
func (o *observer) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if ctx.Value(inOperation{}) == nil {
		var span trace.Span
		if o.tracer != nil {
			_, span = o.startSpan(ctx)
		}
		o.record(ctx, resp, span)
	}
	return resp
}

// Attributes of operation spans, after OpenTelemetry's GraphQL semantic
// conventions, and the facade's own.
const (
	attrOperationName = attribute.Key("graphql.operation.name")
	attrOperationType = attribute.Key("graphql.operation.type")
	attrUpstreamCalls = attribute.Key("suregql.upstream.calls")
	attrErrorCodes    = attribute.Key("suregql.error.codes")
)

// startSpan starts the span of the request's operation, from the
// request's arrival: named "query Name" ("query" when anonymous), or
// "GraphQL Operation" when the document was not read.
func (o *observer) startSpan(ctx context.Context) (context.Context, trace.Span) {
	name, opType, start := describe(ctx)
	spanName := "GraphQL Operation"
	var attrs []attribute.KeyValue
	if opType != metrics.TypeUnknown {
		spanName = opType
		attrs = append(attrs, attrOperationType.String(opType))
	}
	if name != "" && metrics.ValidOperationName(name) {
		attrs = append(attrs, attrOperationName.String(name))
		if opType != metrics.TypeUnknown {
			spanName += " " + name
		}
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	return o.tracer.Start(ctx, spanName, opts...)
}

// describe returns the request's operation name ("" for none), type
// (metrics.TypeUnknown when the document was not read) and arrival.
func describe(ctx context.Context) (name, opType string, start time.Time) {
	if !graphql.HasOperationContext(ctx) {
		return "", metrics.TypeUnknown, time.Time{}
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return oc.OperationName, metrics.TypeUnknown, oc.Stats.OperationStart
	}
	return oc.Operation.Name, string(oc.Operation.Operation), oc.Stats.OperationStart
}

// record counts one answered request, and ends its span (when not nil).
func (o *observer) record(ctx context.Context, resp *graphql.Response, span trace.Span) {
	name, opType, start := describe(ctx)
	var d time.Duration
	if !start.IsZero() {
		d = time.Since(start)
	}
	outcome := metrics.OutcomeOK
	budget, rateLimited, limit := false, false, ""
	var errCodes []string // for the span only
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
			if span != nil && !slices.Contains(errCodes, code) {
				errCodes = append(errCodes, code)
			}
			switch code {
			case graph.CodeQueryTooExpensive:
				budget = true
			case graph.CodeRateLimited:
				rateLimited = true
			case querylimit.Code:
				if l, _ := err.Extensions["limit"].(string); limit == "" && queryLimits[l] {
					limit = l
				}
			}
		}
	}
	if name != "" && o.accepted.has(callerID(ctx)) {
		// A name gets a series of its own only from a caller the upstream
		// accepted, so that strangers cannot take the bounded set.
		o.metrics.AdmitOperationName(name)
	}
	o.metrics.Operation(name, opType, outcome, d)
	if budget {
		o.metrics.BudgetRefused()
	}
	if limit != "" {
		o.metrics.QueryLimitRefused(limit)
	}
	// The flag is the request's: in a batch, only the operations refused
	// with RATE_LIMITED count.
	if l := planner.From(ctx); rateLimited && l != nil && l.RefusedOutOfQuota() {
		o.metrics.RateLimitRefused()
	}
	if span == nil {
		return
	}
	span.SetAttributes(attrUpstreamCalls.Int(planner.OperationCalls(ctx)))
	if len(errCodes) > 0 {
		span.SetAttributes(attrErrorCodes.StringSlice(errCodes))
	}
	if outcome != metrics.OutcomeOK {
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}
