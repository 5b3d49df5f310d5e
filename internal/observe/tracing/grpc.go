//go:build otlpgrpc

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Built with -tags otlpgrpc, OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports
// over gRPC (to OTEL_EXPORTER_OTLP_ENDPOINT, http://localhost:4317 by
// default).
func init() {
	grpcExporter = func(ctx context.Context) (sdktrace.SpanExporter, error) {
		return otlptracegrpc.New(ctx)
	}
}
