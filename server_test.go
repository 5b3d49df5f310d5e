package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"reflect"
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
		{name: "defaults", want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second}},
		{name: "environment", env: map[string]string{"ADDR": ":9", "UPSTREAM_URL": "https://sure.example.com", "UPSTREAM_TIMEOUT": "3s", "MAX_UPSTREAM_CALLS": "7", "CACHE_TTL": "30s",
			"OPERATION_TIMEOUT": "5s"},
			want: config{addr: ":9", upstream: "https://sure.example.com", upstreamTimeout: 3 * time.Second, maxUpstreamCalls: 7, cacheTTL: 30 * time.Second,
				operationTimeout: 5 * time.Second}},
		{name: "flags win over the environment", args: []string{"-addr", ":7", "-max-upstream-calls", "0", "-cache-ttl", "1m", "-operation-timeout", "2s"},
			env:  map[string]string{"ADDR": ":9", "MAX_UPSTREAM_CALLS": "7", "OPERATION_TIMEOUT": "5s"},
			want: config{addr: ":7", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 0, cacheTTL: time.Minute, operationTimeout: 2 * time.Second}},
		{name: "limits from the environment", env: map[string]string{"MAX_DEPTH": "20", "MAX_RESPONSE_BYTES": "1000"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, maxDepth: 20, maxResponseBytes: 1000}},
		{name: "limits from flags", args: []string{"-max-depth", "8", "-max-response-bytes", "65536"}, env: map[string]string{"MAX_DEPTH": "20"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, maxDepth: 8, maxResponseBytes: 65536}},
		{name: "zero depth", args: []string{"-max-depth", "0"}, wantErr: true},
		{name: "bad response cap", env: map[string]string{"MAX_RESPONSE_BYTES": "4MiB"}, wantErr: true},
		{name: "bad timeout", args: []string{"-upstream-timeout", "soon"}, wantErr: true},
		{name: "negative budget", env: map[string]string{"MAX_UPSTREAM_CALLS": "-1"}, wantErr: true},
		{name: "bad cache TTL", args: []string{"-cache-ttl", "forever"}, wantErr: true},
		{name: "CORS origins", args: []string{"-cors-origins", " https://app.example.com, http://localhost:3000 "},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				corsOrigins: []string{"https://app.example.com", "http://localhost:3000"}}},
		{name: "CORS for any origin from the environment", env: map[string]string{"CORS_ORIGINS": "*"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				corsOrigins: []string{"*"}}},
		{name: "CORS origin with a path", args: []string{"-cors-origins", "https://app.example.com/"}, wantErr: true},
		{name: "CORS origin without a scheme", args: []string{"-cors-origins", "app.example.com"}, wantErr: true},
		{name: "CORS origin with a wildcard", env: map[string]string{"CORS_ORIGINS": "https://*.example.com"}, wantErr: true},
		{name: "production switches", args: []string{"-playground=false", "-introspection=false"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				disablePlayground: true, disableIntrospection: true}},
		{name: "production switches from the environment", env: map[string]string{"PLAYGROUND": "false", "INTROSPECTION": "0"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				disablePlayground: true, disableIntrospection: true}},
		{name: "a switch flag wins over the environment", args: []string{"-playground"}, env: map[string]string{"PLAYGROUND": "false"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second}},
		{name: "bad switch", env: map[string]string{"INTROSPECTION": "maybe"}, wantErr: true},
		{name: "metrics listener", env: map[string]string{"METRICS_ADDR": ":9090"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, metricsAddr: ":9090"}},
		{name: "metrics listener from a flag", args: []string{"-metrics-addr", "127.0.0.1:9091"}, env: map[string]string{"METRICS_ADDR": ":9090"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, metricsAddr: "127.0.0.1:9091"}},
		{name: "zero operation timeout", args: []string{"-operation-timeout", "0"}, wantErr: true},
		{name: "bad operation timeout", env: map[string]string{"OPERATION_TIMEOUT": "soon"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig(tc.args, env(tc.env))
			// A row that leaves the limits out expects their defaults.
			if tc.want.maxDepth == 0 {
				tc.want.maxDepth = 12
			}
			if tc.want.maxResponseBytes == 0 {
				tc.want.maxResponseBytes = 4 << 20
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error: %t", err, tc.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, tc.want) {
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

func TestNewHTTPServer_Limits(t *testing.T) {
	const op = 15 * time.Second
	srv := newHTTPServer(http.NotFoundHandler(), op)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("read header %v, read %v, idle %v: want all set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout <= op || srv.WriteTimeout <= srv.ReadTimeout {
		t.Errorf("write timeout %v, want longer than the operation deadline %v and the read timeout %v", srv.WriteTimeout, op, srv.ReadTimeout)
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes >= http.DefaultMaxHeaderBytes {
		t.Errorf("max header bytes %d, want set below the default %d", srv.MaxHeaderBytes, http.DefaultMaxHeaderBytes)
	}
	// A longer operation deadline lengthens the write deadline with it.
	if long := newHTTPServer(http.NotFoundHandler(), time.Minute); long.WriteTimeout <= time.Minute {
		t.Errorf("write timeout %v with a 1m operation deadline", long.WriteTimeout)
	}
}

// Clients that send their headers or their body a byte at a time are cut
// off at the read timeouts (shortened here), instead of holding their
// connection for as long as they like.
func TestNewHTTPServer_ClosesSlowClients(t *testing.T) {
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body too slow", http.StatusBadRequest)
		}
	}), time.Second)
	srv.ReadHeaderTimeout = 200 * time.Millisecond
	srv.ReadTimeout = 400 * time.Millisecond
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	for name, start := range map[string]string{
		"headers never end": "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a",
		"body never ends":   "POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			if _, err := io.WriteString(conn, start); err != nil {
				t.Fatal(err)
			}
			// The guard only bounds a failing test: the server closes the
			// connection long before.
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(conn); err != nil {
				t.Errorf("connection still open: %v", err)
			}
		})
	}
}

// startRun runs the server with args until the test ends, and returns what
// it printed up to the GraphQL endpoint's line, by prefix ("graphql
// endpoint", "metrics"…).
func startRun(t *testing.T, args []string, getenv func(string) string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, getenv, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v after shutdown, want nil", err)
		}
	})
	printed := map[string]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ": ")
		printed[name] = value
		if name == "graphql endpoint" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if printed["graphql endpoint"] == "" {
		t.Fatalf("no endpoint printed; output: %v", printed)
	}
	return printed
}

// get returns the status and body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// /metrics is served on the main listener, or with -metrics-addr on a
// listener of its own (and then not on the main one).
func TestRun_Metrics(t *testing.T) {
	noEnv := func(string) string { return "" }
	t.Run("main listener", func(t *testing.T) {
		printed := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
		if _, ok := printed["metrics"]; ok {
			t.Errorf("a metrics address is printed without -metrics-addr: %v", printed)
		}
		status, body := get(t, strings.TrimSuffix(printed["graphql endpoint"], "/graphql")+"/metrics")
		if status != http.StatusOK || !strings.Contains(body, "suregql_upstream_shared_total") {
			t.Errorf("GET /metrics: status %d, body %.300s", status, body)
		}
	})
	t.Run("own listener", func(t *testing.T) {
		printed := startRun(t, []string{"-addr", "127.0.0.1:0"}, func(k string) string {
			if k == "METRICS_ADDR" {
				return "127.0.0.1:0"
			}
			return ""
		})
		status, body := get(t, printed["metrics"])
		if !strings.HasSuffix(printed["metrics"], "/metrics") || status != http.StatusOK || !strings.Contains(body, "suregql_upstream_shared_total") {
			t.Errorf("GET %q: status %d, body %.300s", printed["metrics"], status, body)
		}
		if status, _ := get(t, strings.TrimSuffix(printed["graphql endpoint"], "/graphql")+"/metrics"); status != http.StatusNotFound {
			t.Errorf("GET /metrics on the main listener: status %d, want 404", status)
		}
	})
}
