// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables, through the contrib autoexport package.
//
// Tracing is off unless OTEL_TRACES_EXPORTER names an exporter: "otlp"
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL and the other
// OTEL_EXPORTER_OTLP_* variables configure it) or "console" (spans as JSON
// lines on standard output). Unset, "none", or OTEL_SDK_DISABLED=true
// leave it off: no exporter starts and the facade adds no span work.
// (autoexport alone would read an unset OTEL_TRACES_EXPORTER as "otlp".)
// OTEL_SERVICE_NAME (default "suregql"), OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* apply as the SDK reads them.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName names the service in traces unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "suregql"

// Setup returns the tracer provider the environment asks for, and a
// function that flushes the spans not yet exported and stops it (call it
// on exit). When tracing is off (see the package comment) the provider is
// nil and shutdown does nothing. It fails when a variable names an
// exporter or protocol autoexport does not know.
func Setup(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	if !Enabled() {
		return nil, off, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, off, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%s: %w", os.Getenv("OTEL_TRACES_EXPORTER"), err)
	}
	if autoexport.IsNoneSpanExporter(exp) {
		return nil, off, nil
	}
	// Later sources win: the default name, then the SDK's own attributes,
	// then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", ServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, off, fmt.Errorf("tracing: resource: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return provider, provider.Shutdown, nil
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
// tracestate) and baggage, which the facade reads from its callers and
// sends upstream.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}
