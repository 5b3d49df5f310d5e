package tracing_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/observe/tracing"
)

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name             string
		exporter, sdkOff string
		want             bool
	}{
		{name: "unset: off, not otlp", want: false},
		{name: "none", exporter: "none", want: false},
		{name: "otlp", exporter: "otlp", want: true},
		{name: "console", exporter: "console", want: true},
		{name: "SDK disabled", exporter: "console", sdkOff: "true", want: false},
		{name: "SDK not disabled", exporter: "otlp", sdkOff: "false", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", tc.exporter)
			t.Setenv("OTEL_SDK_DISABLED", tc.sdkOff)
			if got := tracing.Enabled(); got != tc.want {
				t.Errorf("Enabled() = %t, want %t", got, tc.want)
			}
		})
	}
}

// Off, Setup starts nothing and returns no provider; on, a provider that
// shuts down. An exporter or a protocol this build does not have is an
// error that says what it takes instead. (.ci/run also runs this test
// built with -tags otlpgrpc, where grpc makes a provider.)
func TestSetup(t *testing.T) {
	for _, tc := range []struct {
		name, exporter, protocol string
		wantProvider             bool
		wantErr                  string // in the error; "" for none
	}{
		{name: "unset", exporter: ""},
		{name: "none", exporter: "none"},
		{name: "otlp", exporter: "otlp", wantProvider: true},
		{name: "otlp over http/protobuf", exporter: "otlp", protocol: "http/protobuf", wantProvider: true},
		// Built without -tags otlpgrpc, the error says how to get it.
		{name: "otlp over grpc", exporter: "otlp", protocol: "grpc", wantProvider: grpcBuiltIn,
			wantErr: map[bool]string{false: "build with `go build -tags otlpgrpc`"}[grpcBuiltIn]},
		{name: "otlp over http/json", exporter: "otlp", protocol: "http/json", wantErr: "want http/protobuf"},
		{name: "console", exporter: "console", wantProvider: true},
		{name: "unknown", exporter: "carrier-pigeon", wantErr: "want otlp, console or none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", tc.exporter)
			t.Setenv("OTEL_SDK_DISABLED", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			// Loopback only, and nothing is exported: no span is made.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			tp, shutdown, err := tracing.Setup(t.Context(), tracing.Options{Version: "1.2.3"})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Setup() error = %v, want one saying %q", err, tc.wantErr)
			}
			if (tp != nil) != tc.wantProvider {
				t.Errorf("Setup() provider = %v, want one: %t", tp, tc.wantProvider)
			}
			if err := shutdown(t.Context()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
}

// The console exporter writes its spans where it is told (standard error
// in the server), each with the service's name and version.
func TestSetup_ConsoleSpansNameTheService(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	var out bytes.Buffer
	tp, shutdown, err := tracing.Setup(t.Context(), tracing.Options{Version: "1.2.3", Console: &out})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(t.Context(), "op")
	span.End()
	if err := shutdown(t.Context()); err != nil { // flushes the span
		t.Fatal(err)
	}
	var s struct {
		Name     string
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("console output is no span: %v\n%s", err, out.String())
	}
	res := map[string]any{}
	for _, kv := range s.Resource {
		res[kv.Key] = kv.Value.Value
	}
	if s.Name != "op" || res["service.name"] != "suregql" || res["service.version"] != "1.2.3" {
		t.Errorf("span %q of resource %v, want op of service.name suregql, service.version 1.2.3", s.Name, res)
	}
}
