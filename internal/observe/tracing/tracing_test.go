package tracing_test

import (
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
// shuts down; an exporter autoexport does not know is an error.
func TestSetup(t *testing.T) {
	for _, tc := range []struct {
		name, exporter string
		wantProvider   bool
		wantErr        bool
	}{
		{name: "unset", exporter: ""},
		{name: "none", exporter: "none"},
		{name: "otlp", exporter: "otlp", wantProvider: true},
		{name: "console", exporter: "console", wantProvider: true},
		{name: "unknown", exporter: "carrier-pigeon", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", tc.exporter)
			t.Setenv("OTEL_SDK_DISABLED", "")
			// Loopback only, and nothing is exported: no span is made.
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			tp, shutdown, err := tracing.Setup(t.Context())
			if (err != nil) != tc.wantErr {
				t.Fatalf("Setup() error = %v, want error: %t", err, tc.wantErr)
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
