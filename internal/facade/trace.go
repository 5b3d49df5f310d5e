package facade

import (
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/suregql/suregql/restclient"
)

// Attributes of upstream calls' spans.
const (
	// attrRetryAttempt is the attempt: 0 for the first try, 1 for the
	// first retry…
	attrRetryAttempt = attribute.Key("suregql.retry.attempt")
	// attrURLFull is OpenTelemetry's url.full, which otelhttp sets to the
	// request's URL (its ids and its query string): the facade sets it
	// again to the endpoint's template on the upstream's origin, e.g.
	// "https://sure.example.com/api/v1/categories/{id}".
	attrURLFull = attribute.Key("url.full")
	// attrURLTemplate is OpenTelemetry's url.template: the path's
	// template, e.g. "/api/v1/categories/{id}".
	attrURLTemplate = attribute.Key("url.template")
)

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
// /api/v1/categories/{id}", and its URL attributes hold that template
// (see upstreamAttributes), never the URL: its ids (and filters) are the
// callers' data, which the logs and metrics avoid too, and would make
// every name unique.
func tracedUpstream(tp trace.TracerProvider, prop propagation.TextMapPropagator) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return otelhttp.NewTransport(upstreamAttributes{rt},
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

// upstreamAttributes sets the facade's attributes on the span otelhttp
// started for the request, before the request is sent: the attempt
// number, and url.full and url.template as the endpoint's template.
// otelhttp set url.full to the request's URL just before; setting an
// attribute again replaces its value (OpenTelemetry's span API), so the
// span ends with the template only.
type upstreamAttributes struct{ next http.RoundTripper }

func (a upstreamAttributes) RoundTrip(r *http.Request) (*http.Response, error) {
	span := trace.SpanFromContext(r.Context())
	if span.IsRecording() {
		endpoint, attempt, ok := restclient.RequestEndpoint(r.Context())
		if !ok {
			endpoint = restclient.Endpoint(r.Method, "")
		}
		full, tmpl := urlTemplate(r.URL, endpoint)
		span.SetAttributes(attrURLFull.String(full), attrURLTemplate.String(tmpl))
		if ok {
			span.SetAttributes(attrRetryAttempt.Int(attempt))
		}
	}
	return a.next.RoundTrip(r)
}

// urlTemplate returns the url.full and url.template of a request to u for
// endpoint (a restclient.Endpoint, e.g. "GET /api/v1/chats/{id}"): u's
// origin, the path u has in front of the API's (a Sure served under a
// prefix), and the endpoint's path; no id, no query.
func urlTemplate(u *url.URL, endpoint string) (full, tmpl string) {
	_, tmpl, _ = strings.Cut(endpoint, " ")
	if i := strings.Index(u.EscapedPath(), "/api/v1/"); i > 0 {
		// The base URL's path, which ParseBaseURL keeps free of "/api/v1/".
		tmpl = u.EscapedPath()[:i] + tmpl
	}
	return u.Scheme + "://" + u.Host + tmpl, tmpl
}
