// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables, and ties the logs to the traces (LogHandler).
//
// Tracing is off unless OTEL_TRACES_EXPORTER names an exporter: "otlp"
// (OTLP over HTTP with protobuf, to OTEL_EXPORTER_OTLP_ENDPOINT,
// http://localhost:4318 by default; the exporter reads the other
// OTEL_EXPORTER_OTLP_* variables itself) or "console" (spans as JSON lines
// on standard error, never mixed with the logs on standard output). Unset,
// "none", or OTEL_SDK_DISABLED=true leave it off: no exporter starts and
// the facade adds no span work. OTEL_SERVICE_NAME (default "suregql"),
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* apply
// as the SDK reads them.
//
// OTLP over gRPC is not built in: its exporter compiles gRPC's client and
// would double the first build of every checkout. A collector's OTLP/HTTP
// receiver (port 4318) takes the same spans; a binary built with
// "-tags otlpgrpc" also takes OTEL_EXPORTER_OTLP_PROTOCOL=grpc.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName names the service in traces unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "suregql"

// Options are what Setup takes besides the environment.
type Options struct {
	// Version is the resource's service.version (unless
	// OTEL_RESOURCE_ATTRIBUTES says otherwise); empty leaves it out.
	Version string
	// Console receives the spans of OTEL_TRACES_EXPORTER=console; nil
	// means standard error.
	Console io.Writer
	// Log receives OpenTelemetry's own errors (a failed export, say) as
	// WARN lines, in the server's log format; nil leaves OpenTelemetry's
	// default, a plain line on standard error.
	Log *slog.Logger
}

// Protocols of OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL.
const (
	protocolHTTPProtobuf = "http/protobuf"
	protocolGRPC         = "grpc"
)

// grpcExporter makes the OTLP exporter over gRPC; nil unless the binary is
// built with -tags otlpgrpc (grpc.go).
var grpcExporter func(context.Context) (sdktrace.SpanExporter, error)

// Setup returns the tracer provider the environment asks for, and a
// function that flushes the spans not yet exported and stops it (call it
// on exit). When tracing is off (see the package comment) the provider is
// nil and shutdown does nothing. It fails, saying what it takes instead,
// when a variable names an exporter or a protocol this build does not
// have.
func Setup(ctx context.Context, opts Options) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	if !Enabled() {
		return nil, off, nil
	}
	exp, err := newExporter(ctx, opts)
	if err != nil {
		return nil, off, fmt.Errorf("tracing: %w", err)
	}
	// Later sources win: the defaults, then the SDK's own attributes,
	// then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if opts.Version != "" {
		attrs = append(attrs, attribute.String("service.version", opts.Version))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, off, fmt.Errorf("tracing: resource: %w", err)
	}
	if opts.Log != nil {
		// Without it a failed export is a plain line of the standard
		// library's log, which breaks JSON log parsing.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			opts.Log.Warn("opentelemetry error", "err", err)
		}))
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return provider, provider.Shutdown, nil
}

// newExporter returns the exporter OTEL_TRACES_EXPORTER names.
func newExporter(ctx context.Context, opts Options) (sdktrace.SpanExporter, error) {
	switch name := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); name {
	case "console":
		w := opts.Console
		if w == nil {
			w = os.Stderr
		}
		return stdouttrace.New(stdouttrace.WithWriter(w))
	case "otlp":
		return newOTLPExporter(ctx)
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp, console or none", name)
	}
}

// newOTLPExporter returns the OTLP exporter of the protocol the
// environment names: http/protobuf unless it says otherwise.
func newOTLPExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	variable := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	protocol := strings.TrimSpace(os.Getenv(variable))
	if protocol == "" {
		variable = "OTEL_EXPORTER_OTLP_PROTOCOL"
		protocol = strings.TrimSpace(os.Getenv(variable))
	}
	switch protocol {
	case "", protocolHTTPProtobuf:
		return otlptracehttp.New(ctx)
	case protocolGRPC:
		if grpcExporter == nil {
			return nil, fmt.Errorf("%s=grpc: this binary exports OTLP over HTTP only; "+
				"set %s=http/protobuf and send to the collector's OTLP/HTTP port (4318), "+
				"or build with `go build -tags otlpgrpc`", variable, variable)
		}
		return grpcExporter(ctx)
	default:
		return nil, fmt.Errorf("%s=%q: want http/protobuf (or grpc, built with -tags otlpgrpc)", variable, protocol)
	}
}

// Enabled reports whether the environment turns tracing on: it names a
// traces exporter other than "none", and does not disable the SDK.
func Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")) {
	case "", "none":
		return false
	}
	return true
}

// Propagator returns the propagator of W3C trace context (traceparent,
// tracestate), which the facade reads from its callers and sends
// upstream, and, when baggage is set, of W3C baggage too. Baggage is the
// caller's own data (up to 8 KB of it, whatever it holds), sent with every
// upstream request: a facade in front of a server of another party (Sure)
// forwards it only when asked to (-trace-baggage).
func Propagator(baggage bool) propagation.TextMapPropagator {
	if !baggage {
		return propagation.TraceContext{}
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}
