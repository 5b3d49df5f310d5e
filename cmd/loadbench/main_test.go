package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMain serves the floor when a run of the tests starts this binary as
// the floor (see startFloor).
func TestMain(m *testing.M) {
	if addr := os.Getenv(floorEnv); addr != "" {
		if err := serveFloor(addr); err != nil {
			panic(err)
		}
		return
	}
	os.Exit(m.Run())
}

// With -floor, each row also holds the floor's req/s and CPU per answer,
// measured on the facade's own answers (every one checked).
func TestRun_Floor(t *testing.T) {
	var out bytes.Buffer
	cfg := config{c: 4, n: 40, seqN: 2, timeout: 30 * time.Second, ours: oursInProcess, floor: true}
	if err := run(&out, cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	row := regexp.MustCompile(`(?m)^\| W.* \| [1-9][0-9]* / [1-9][0-9]* \| [1-9][0-9]* / [1-9][0-9]* \|$`)
	if rows := len(row.FindAllString(out.String(), -1)); rows != 6 {
		t.Errorf("%d workload rows with the floor's req/s and CPU, want 6:\n%s", rows, out.String())
	}
}

// A short run answers every workload without error and prints its row.
func TestRun(t *testing.T) {
	for _, ours := range []string{oursProcess, oursInProcess} {
		t.Run(ours, func(t *testing.T) {
			if ours == oursProcess && testing.Short() {
				t.Skip("load run of the server built as a process: skipped with -short")
			}
			var out bytes.Buffer
			cfg := config{c: 4, n: 40, seqN: 2, timeout: 30 * time.Second, ours: ours}
			if err := run(&out, cfg); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if rows := strings.Count(out.String(), "\n| W"); rows != 6 {
				t.Errorf("%d workload rows, want 6:\n%s", rows, out.String())
			}
		})
	}
}

// post counts as failures what a benchmark must not hide: error entries
// (even beside data), statuses other than 200 and a missing data.
func TestPostFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		ok     bool
	}{
		"data":        {200, `{"data":{"a":1}}`, true},
		"field error": {200, `{"data":{"a":null},"errors":[{"message":"boom"}]}`, false},
		"refusal":     {400, `{"errors":[{"message":"bad"}]}`, false},
		"bad status":  {502, `{"data":{"a":1}}`, false},
		"null data":   {200, `{"data":null}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			err := post(srv.Client(), srv.URL, "k", "{ a }", nil, nil)
			if (err == nil) != tc.ok {
				t.Errorf("post: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// A run beside a real Tailcall prints a side-by-side table per mode, every
// answer of both checked. CI has no Tailcall: set LOADBENCH_TAILCALL to the
// binary's path to run it (see BENCHMARKS.md).
func TestRun_Tailcall(t *testing.T) {
	bin := os.Getenv("LOADBENCH_TAILCALL")
	if bin == "" {
		t.Skip("LOADBENCH_TAILCALL is not set")
	}
	var out bytes.Buffer
	cfg := config{c: 4, n: 40, seqN: 2, timeout: 30 * time.Second, ours: oursProcess,
		tailcall: bin, tailcallConfig: "../../bench/tailcall/sure.graphql"}
	if err := run(&out, cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if tables := strings.Count(out.String(), "| workload | calls ours / Tailcall |"); tables != 3 {
		t.Errorf("%d tables, want 3:\n%s", tables, out.String())
	}
	if rows := strings.Count(out.String(), "\n| W"); rows != 18 {
		t.Errorf("%d workload rows, want 18:\n%s", rows, out.String())
	}
	// Tailcall cannot batch the demo tree's subcategories: 1 + 22 calls.
	if !strings.Contains(out.String(), "| W2 roots with subcategories | 1.00 / 23.00 |") {
		t.Errorf("no W2 row with 1 and 23 calls:\n%s", out.String())
	}
}

// failures counts every failed answer of every run, and names the first
// failure in the order the runs were made.
func TestFailures(t *testing.T) {
	if err := failures([][][]result{{{{done: 3}}}}); err != nil {
		t.Errorf("no failed answer: %v", err)
	}
	first, second := errors.New("first"), errors.New("second")
	err := failures([][][]result{
		{{{done: 3}, {errs: 2, firstErr: first}}},
		{{{errs: 1, firstErr: second}}, {{done: 1}}},
	})
	if err == nil || !errors.Is(err, first) || !strings.HasPrefix(err.Error(), "3 answers failed") {
		t.Errorf("failures = %v, want 3 answers failed, the first %v", err, first)
	}
}
