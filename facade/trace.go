package facade

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"suregql/restclient"
)

// attrRetryAttempt is the attempt of an upstream call's span: 0 for the
// first try, 1 for the first retry…
const attrRetryAttempt = attribute.Key("suregql.retry.attempt")

// tracedHandler gives each request to next a server span, continuing the
// trace of the caller's traceparent. otelhttp's own metrics go nowhere:
// the facade's metrics are Prometheus's.
func tracedHandler(next http.Handler, tp trace.TracerProvider, prop propagation.TextMapPropagator) http.Handler {
	return otelhttp.NewHandler(next, "graphql",
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
}

// tracedUpstream returns the wrapper of the upstream client's transport
// that gives each attempt a client span, child of the span in the
// request's context (the operation's), and sends its traceparent
// upstream. The span is named after the endpoint template, e.g. "GET
// /api/v1/categories/{id}", never the URL, whose ids would make every
// name unique.
func tracedUpstream(tp trace.TracerProvider, prop propagation.TextMapPropagator) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return otelhttp.NewTransport(attemptAttribute{rt},
			otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop),
			otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelhttp.WithSpanNameFormatter(upstreamSpanName))
	}
}

func upstreamSpanName(_ string, r *http.Request) string {
	if endpoint, _, ok := restclient.RequestEndpoint(r.Context()); ok {
		return endpoint
	}
	return r.Method
}

// attemptAttribute sets the attempt number on the span otelhttp started
// for the request.
type attemptAttribute struct{ next http.RoundTripper }

func (a attemptAttribute) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, attempt, ok := restclient.RequestEndpoint(r.Context()); ok {
		trace.SpanFromContext(r.Context()).SetAttributes(attrRetryAttempt.Int(attempt))
	}
	return a.next.RoundTrip(r)
}
