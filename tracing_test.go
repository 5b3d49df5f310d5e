package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// consoleHelperEnv makes the test binary, run again by
// TestRun_ConsoleTraces, serve one traced query, then print the server's
// log lines on its standard output and exit.
const consoleHelperEnv = "SUREGQL_TEST_CONSOLE_TRACES"

// With OTEL_TRACES_EXPORTER=console, the server prints its spans on
// standard error as JSON lines (the test runs the server in a child
// process, whose standard error it reads): the request's, the
// operation's and the upstream call's, in one trace, from the service
// "suregql" of the build's version, flushed on shutdown. Standard output
// holds the JSON log lines alone, and those of the request carry its
// trace's id.
func TestRun_ConsoleTraces(t *testing.T) {
	if os.Getenv(consoleHelperEnv) == "1" {
		printed, log := startRun(t, []string{"-addr", "127.0.0.1:0", "-log-format", "json"}, noEnv)
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
		log.waitFor(t, func(line string) bool { return strings.Contains(line, `"msg":"graphql operation"`) })
		if err := log.stop(); err != nil { // flushes the spans
			t.Fatal(err)
		}
		fmt.Println(log.String())
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRun_ConsoleTraces$", "-test.count=1")
	cmd.Env = append(os.Environ(), consoleHelperEnv+"=1", "OTEL_TRACES_EXPORTER=console",
		"OTEL_SDK_DISABLED=", "OTEL_SERVICE_NAME=", "OTEL_RESOURCE_ATTRIBUTES=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the server in a child process: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr.String())
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
	resources := map[string]map[string]any{}
	for line := range jsonLines(t, stderr.Bytes()) {
		var s span
		if err := json.Unmarshal(line, &s); err != nil || s.SpanContext.TraceID == "" {
			t.Fatalf("a JSON line of stderr is no span: %v\n%s", err, line)
		}
		traces[s.Name] = s.SpanContext.TraceID
		resources[s.Name] = map[string]any{}
		for _, kv := range s.Resource {
			resources[s.Name][kv.Key] = kv.Value.Value
		}
	}
	trace := traces["POST /graphql"]
	for _, name := range []string{"POST /graphql", "query Console", "GET /api/v1/categories"} {
		if traces[name] == "" || traces[name] != trace {
			t.Errorf("span %q in trace %q, want one in the request's trace %q; stderr:\n%s", name, traces[name], trace, stderr.String())
		}
		if r := resources[name]; r["service.name"] != "suregql" || r["service.version"] != buildVersion() {
			t.Errorf("span %q of resource %v, want service.name suregql, service.version %s", name, r, buildVersion())
		}
	}

	var operationLogged bool
	for line := range jsonLines(t, stdout) {
		var fields map[string]any
		if json.Unmarshal(line, &fields) != nil || fields["msg"] == nil {
			t.Fatalf("a JSON line of stdout is no log line: %s", line)
		}
		if _, ok := fields["SpanContext"]; ok {
			t.Errorf("a span on stdout, among the logs: %s", line)
		}
		if fields["msg"] == "graphql operation" {
			operationLogged = true
			if fields["trace_id"] != trace || fields["span_id"] == "" || fields["span_id"] == nil {
				t.Errorf("the operation's log line %s, want trace_id %s and a span_id", line, trace)
			}
		}
	}
	if !operationLogged {
		t.Errorf("no graphql operation line on stdout:\n%s", stdout)
	}
}

// jsonLines yields the lines of out that hold a JSON object (the others
// are the test binary's own).
func jsonLines(t *testing.T, out []byte) iter.Seq[[]byte] {
	t.Helper()
	return func(yield func([]byte) bool) {
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "{") && !yield(sc.Bytes()) {
				return
			}
		}
	}
}
