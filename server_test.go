package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr bool
	}{
		{name: "defaults", want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, maxDepth: 12, maxResponseBytes: 4 << 20}},
		{name: "environment", env: map[string]string{"ADDR": ":9", "UPSTREAM_URL": "https://sure.example.com", "UPSTREAM_TIMEOUT": "3s", "MAX_UPSTREAM_CALLS": "7", "CACHE_TTL": "30s"},
			want: config{addr: ":9", upstream: "https://sure.example.com", upstreamTimeout: 3 * time.Second, maxUpstreamCalls: 7, cacheTTL: 30 * time.Second, maxDepth: 12, maxResponseBytes: 4 << 20}},
		{name: "flags win over the environment", args: []string{"-addr", ":7", "-max-upstream-calls", "0", "-cache-ttl", "1m"}, env: map[string]string{"ADDR": ":9", "MAX_UPSTREAM_CALLS": "7"},
			want: config{addr: ":7", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 0, cacheTTL: time.Minute, maxDepth: 12, maxResponseBytes: 4 << 20}},
		{name: "limits from the environment", env: map[string]string{"MAX_DEPTH": "20", "MAX_RESPONSE_BYTES": "1000"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, maxDepth: 20, maxResponseBytes: 1000}},
		{name: "limits from flags", args: []string{"-max-depth", "8", "-max-response-bytes", "65536"}, env: map[string]string{"MAX_DEPTH": "20"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, maxDepth: 8, maxResponseBytes: 65536}},
		{name: "zero depth", args: []string{"-max-depth", "0"}, wantErr: true},
		{name: "bad response cap", env: map[string]string{"MAX_RESPONSE_BYTES": "4MiB"}, wantErr: true},
		{name: "bad timeout", args: []string{"-upstream-timeout", "soon"}, wantErr: true},
		{name: "negative budget", env: map[string]string{"MAX_UPSTREAM_CALLS": "-1"}, wantErr: true},
		{name: "bad cache TTL", args: []string{"-cache-ttl", "forever"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.args, env(tc.env))
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error: %t", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("config = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Demo mode: with no upstream, run serves the built-in demo upstream, prints
// the playground URL and the demo key, answers a nested query with that key,
// and shuts down when its context ends.
func TestRun_DemoModeAndGracefulShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, func(string) string { return "" }, pw)
		pw.Close()
	}()

	var endpoint string
	var printed strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if ep, ok := strings.CutPrefix(line, "graphql endpoint: "); ok {
			endpoint = ep
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if endpoint == "" {
		t.Fatalf("no endpoint printed; output:\n%s", printed.String())
	}
	if !strings.Contains(printed.String(), `"demo-key"`) {
		t.Errorf("the demo key is not printed:\n%s", printed.String())
	}

	body := `{"query":"{ categories(rootsOnly: true, first: 100) { totalCount nodes { name subcategories { nodes { name } } } } }"}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "demo-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"totalCount":22`) || !strings.Contains(string(answer), `"Restaurants"`) {
		t.Errorf("status %d, answer %s", resp.StatusCode, answer)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("run returned %v after shutdown, want nil", err)
	}
}
