//go:build !otlpgrpc

package tracing_test

// grpcBuiltIn: this test binary has the OTLP-over-gRPC exporter.
const grpcBuiltIn = false
