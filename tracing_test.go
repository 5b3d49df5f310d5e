package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// consoleHelperEnv makes the test binary, run again by
// TestRun_ConsoleTraces, serve one traced query and exit.
const consoleHelperEnv = "SUREGQL_TEST_CONSOLE_TRACES"

// With OTEL_TRACES_EXPORTER=console, the server prints its spans on
// standard output as JSON lines (autoexport's console exporter writes to
// the process's stdout, so the test runs the server in a child process):
// the request's, the operation's and the upstream call's, in one trace,
// from the service "suregql", flushed on shutdown.
func TestRun_ConsoleTraces(t *testing.T) {
	if os.Getenv(consoleHelperEnv) == "1" {
		printed, _ := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, printed["graphql endpoint"],
			strings.NewReader(`{"query":"query Console { categories(first: 1) { totalCount } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "demo-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return // startRun's cleanup shuts the server down, which flushes the spans
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRun_ConsoleTraces$", "-test.count=1")
	cmd.Env = append(os.Environ(), consoleHelperEnv+"=1", "OTEL_TRACES_EXPORTER=console",
		"OTEL_SDK_DISABLED=", "OTEL_SERVICE_NAME=", "OTEL_RESOURCE_ATTRIBUTES=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the server in a child process: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	type span struct {
		Name        string
		SpanContext struct{ TraceID string }
		Resource    []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	traces := map[string]string{}
	service := map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var s span
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("a line of stdout is no span: %v\n%s", err, sc.Text())
		}
		traces[s.Name] = s.SpanContext.TraceID
		for _, kv := range s.Resource {
			if kv.Key == "service.name" {
				service[s.Name] = kv.Value.Value
			}
		}
	}
	for _, name := range []string{"POST /graphql", "query Console", "GET /api/v1/categories"} {
		if traces[name] == "" || traces[name] != traces["POST /graphql"] {
			t.Errorf("span %q in trace %q, want one in the request's trace %q; stdout:\n%s", name, traces[name], traces["POST /graphql"], out)
		}
		if service[name] != "suregql" {
			t.Errorf("span %q of service %v, want suregql", name, service[name])
		}
	}
}
