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
	"github.com/suregql/suregql/internal/edge/gqlhttp"
	"github.com/suregql/suregql/internal/limits/querylimit"
	"github.com/suregql/suregql/internal/observe/metrics"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/restcache"
)

// errorCodes is the closed set of extensions.code values an answer may
// carry: the outcome label of a metric is one of them, or "error".
var errorCodes = setOf(
	graph.CodeUnauthenticated, graph.CodeForbidden, graph.CodeNotFound, graph.CodeRateLimited,
	graph.CodeUpstreamUnavailable, graph.CodeBadUserInput, graph.CodeUpstreamRejected, graph.CodeInternal,
	graph.CodeQueryTooExpensive, graph.CodeBadRequest, graph.CodeUpstreamOutcomeUnknown,
	graph.CodeUnsupportedByUpstream,
	graph.CodeMethodNotAllowed, graph.CodeUnsupportedMediaType, graph.CodeIntrospectionDisabled,
	querylimit.Code, querylimit.CodeResponseTooLarge,
	errcode.ParseFailed, errcode.ValidationFailed,
	"PERSISTED_QUERY_NOT_FOUND", // gqlgen's extension.AutomaticPersistedQuery
)

// queryLimits is the closed set of extensions.limit values of
// QUERY_LIMIT_EXCEEDED.
var queryLimits = setOf(
	querylimit.LimitBytes, querylimit.LimitTokens, querylimit.LimitDepth, querylimit.LimitFields,
	querylimit.LimitFragments, querylimit.LimitAliases, querylimit.LimitRootFields,
	querylimit.LimitDirectives, querylimit.LimitSameResponseKey, querylimit.LimitComplexity,
	querylimit.LimitDeferredParts, gqlhttp.LimitBodyBytes, gqlhttp.LimitOperationName,
)

func setOf(members ...string) map[string]bool {
	set := make(map[string]bool, len(members))
	for _, m := range members {
		set[m] = true
	}
	return set
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
	accepted *restcache.AcceptedKeys
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
		if !done && !moreToCome(resp) { // once: at the last part of a @defer
			done = true
			o.record(ctx, resp, span)
		}
		return resp
	}
}

// moreToCome reports whether resp is a part of an incrementally delivered
// answer (@defer) that others follow: an operation is recorded, and
// logged, once, with its last part, when all its calls are known.
func moreToCome(resp *graphql.Response) bool {
	return resp != nil && resp.HasNext != nil && *resp.HasNext
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

// answerErrors is what an answer's errors tell the metrics: the outcome
// (the first error's code, or ok), every distinct code, and the refusals
// counted on their own.
type answerErrors struct {
	outcome           string
	codes             []string
	budget, ratelimit bool
	limit             string // the first query limit named, or ""
}

func readErrors(resp *graphql.Response) answerErrors {
	a := answerErrors{outcome: metrics.OutcomeOK}
	if resp == nil {
		a.outcome = metrics.OutcomeError // the client went away
		return a
	}
	for i, err := range resp.Errors {
		code, _ := err.Extensions["code"].(string)
		if !errorCodes[code] {
			code = metrics.OutcomeError
		}
		if i == 0 {
			a.outcome = code
		}
		if !slices.Contains(a.codes, code) {
			a.codes = append(a.codes, code)
		}
		switch code {
		case graph.CodeQueryTooExpensive:
			a.budget = true
		case graph.CodeRateLimited:
			a.ratelimit = true
		case querylimit.Code:
			if l, _ := err.Extensions["limit"].(string); a.limit == "" && queryLimits[l] {
				a.limit = l
			}
		}
	}
	return a
}

// sampledTraceID returns the trace of span (else of the span in ctx, the
// request's) when it is sampled, else "": the exemplar of the operation's
// duration, which leads to a trace only when it was recorded.
func sampledTraceID(ctx context.Context, span trace.Span) string {
	sc := trace.SpanContextFromContext(ctx)
	if span != nil {
		sc = span.SpanContext()
	}
	if !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String()
}

// record counts one answered request, and ends its span (when not nil).
func (o *observer) record(ctx context.Context, resp *graphql.Response, span trace.Span) {
	name, opType, start := describe(ctx)
	var d time.Duration
	if !start.IsZero() {
		d = time.Since(start)
	}
	a := readErrors(resp)
	if name != "" && o.accepted.AcceptedID(gqlhttp.CallerID(ctx)) {
		// A name gets a series of its own only from a caller the upstream
		// accepted, so that strangers cannot take the bounded set.
		o.metrics.AdmitOperationName(name)
	}
	o.metrics.Operation(name, opType, a.outcome, d, sampledTraceID(ctx, span))
	if a.budget {
		o.metrics.BudgetRefused()
	}
	if a.limit != "" {
		o.metrics.QueryLimitRefused(a.limit)
	}
	// The flag is the request's: in a batch, only the operations refused
	// with RATE_LIMITED count.
	if l := planner.From(ctx); a.ratelimit && l != nil && l.RefusedOutOfQuota() {
		o.metrics.RateLimitRefused()
	}
	if span == nil {
		return
	}
	span.SetAttributes(attrUpstreamCalls.Int(planner.OperationCalls(ctx)))
	if len(a.codes) > 0 {
		span.SetAttributes(attrErrorCodes.StringSlice(a.codes))
	}
	if a.outcome != metrics.OutcomeOK {
		span.SetStatus(codes.Error, a.outcome)
	}
	span.End()
}
