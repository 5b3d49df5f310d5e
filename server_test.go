package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
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
		{name: "batch size from a flag", args: []string{"-max-batch", "3"}, env: map[string]string{"MAX_BATCH": "20"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, maxBatch: 3}},
		{name: "batch size from the environment", env: map[string]string{"MAX_BATCH": "1"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second, maxBatch: 1}},
		{name: "zero batch size", args: []string{"-max-batch", "0"}, wantErr: true},
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
		{name: "the API root as upstream", args: []string{"-upstream", "https://sure.example.com/api/v1/"},
			want: config{addr: ":8080", upstream: "https://sure.example.com", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second}},
		{name: "an upstream under a path", env: map[string]string{"UPSTREAM_URL": "http://10.0.0.7:3000/sure/api/v1"},
			want: config{addr: ":8080", upstream: "http://10.0.0.7:3000/sure", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second}},
		{name: "an upstream without a scheme", env: map[string]string{"UPSTREAM_URL": "sure.example.com"}, wantErr: true},
		{name: "an upstream of another scheme", args: []string{"-upstream", "ftp://sure.example.com"}, wantErr: true},
		{name: "an upstream with a password", args: []string{"-upstream", "https://me:secret@sure.example.com"}, wantErr: true},
		{name: "an unparsable upstream", args: []string{"-upstream", "http://sure.example.com:port"}, wantErr: true},
		{name: "an endpoint as upstream", args: []string{"-upstream", "https://sure.example.com/api/v1/categories"}, wantErr: true},
		{name: "JSON logs from the environment", env: map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "debug"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				logFormat: "json", logLevel: slog.LevelDebug}},
		{name: "log flags win over the environment", args: []string{"-log-format", "TEXT", "-log-level", "warn"}, env: map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "debug"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				logFormat: "text", logLevel: slog.LevelWarn}},
		{name: "bad log format", env: map[string]string{"LOG_FORMAT": "logfmt"}, wantErr: true},
		{name: "bad log level", args: []string{"-log-level", "verbose"}, wantErr: true},
		{name: "version", args: []string{"-version"}, want: config{showVersion: true}},
		{name: "redis from the environment", env: map[string]string{"REDIS_URL": "rediss://app:pw@redis.internal:6380/2", "REDIS_SECRET": "0123456789abcdef"},
			want: config{addr: ":8080", upstreamTimeout: 10 * time.Second, maxUpstreamCalls: 100, operationTimeout: 15 * time.Second,
				redisURL: "rediss://app:pw@redis.internal:6380/2", redisSecret: "0123456789abcdef"}},
		{name: "redis without a secret", args: []string{"-redis-url", "redis://127.0.0.1:6379"}, wantErr: true},
		{name: "redis with a short secret", args: []string{"-redis-url", "redis://127.0.0.1:6379", "-redis-secret", "short"}, wantErr: true},
		{name: "redis of another scheme", args: []string{"-redis-url", "http://127.0.0.1:6379", "-redis-secret", "0123456789abcdef"}, wantErr: true},
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
			if tc.want.maxBatch == 0 {
				tc.want.maxBatch = 10
			}
			if tc.want.logFormat == "" {
				tc.want.logFormat = "text"
			}
			if tc.want.showVersion {
				// Nothing else is read: the server only prints its version.
				tc.want = config{showVersion: true}
				got = config{showVersion: got.showVersion}
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

// A wrong upstream URL is refused at start in one line that names the
// flag and its variable, in words rather than a Go parse error, and
// without the password the URL may carry.
func TestParseConfig_UpstreamErrors(t *testing.T) {
	for _, raw := range []string{
		"sure.example.com", "ftp://sure.example.com", "http://", "http://sure.example.com:port/",
		"https://admin:secret@sure.example.com", "https://sure.example.com/api/v1/chats", "https://sure.example.com/?key=secret",
	} {
		_, err := parseConfig([]string{"-upstream", raw}, func(string) string { return "" })
		if err == nil {
			t.Errorf("-upstream %q: accepted", raw)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "-upstream / UPSTREAM_URL ") || strings.Contains(msg, "\n") ||
			strings.Contains(msg, "secret") || strings.Contains(msg, "invalid port") || strings.Contains(msg, "parse ") {
			t.Errorf("-upstream %q: error %q, want one line naming -upstream / UPSTREAM_URL, no password, no Go parse error", raw, msg)
		}
	}
}

// startRun runs the server with args and getenv until the test ends
// (when run must return nil), and returns the URLs it logged up to its
// GraphQL endpoint's, by message ("graphql endpoint", "metrics",
// "playground"…), and its log.
func startRun(t *testing.T, args []string, getenv func(string) string) (urls map[string]string, log *runLog) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	log = &runLog{cancel: cancel, done: make(chan error, 1), changed: make(chan struct{})}
	go func() {
		log.done <- run(ctx, args, getenv, pw)
		pw.Close()
	}()
	go log.read(pr)
	t.Cleanup(func() {
		if err := log.stop(); err != nil {
			t.Errorf("run returned %v after shutdown, want nil", err)
		}
	})
	urls = map[string]string{}
	log.waitFor(t, func(line string) bool {
		msg, url := loggedURL(line)
		if url != "" {
			urls[msg] = url
		}
		return msg == "graphql endpoint"
	})
	return urls, log
}

func noEnv(string) string { return "" }

// runLog is what a server started by startRun logs, line by line.
type runLog struct {
	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	lines   []string
	eof     bool
	changed chan struct{} // closed and replaced when a line arrives

	stopOnce sync.Once
	err      error
}

func (l *runLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for {
		more := sc.Scan()
		l.mu.Lock()
		if more {
			l.lines = append(l.lines, sc.Text())
		} else {
			l.eof = true
		}
		close(l.changed)
		l.changed = make(chan struct{})
		l.mu.Unlock()
		if !more {
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
}

// waitFor returns once a line for which match is true is logged; it fails
// the test if the log ends without one.
func (l *runLog) waitFor(t *testing.T, match func(string) bool) {
	t.Helper()
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if match(line) {
				l.mu.Unlock()
				return
			}
		}
		eof, changed := l.eof, l.changed
		l.mu.Unlock()
		if eof {
			t.Fatalf("the server's log ended without the line awaited:\n%s", l.String())
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("the test ended before the line awaited:\n%s", l.String())
		}
	}
}

// contains waits for a line holding s.
func (l *runLog) contains(t *testing.T, s string) {
	t.Helper()
	l.waitFor(t, func(line string) bool { return strings.Contains(line, s) })
}

// stop ends the server and returns what run returned.
func (l *runLog) stop() error {
	l.stopOnce.Do(func() {
		l.cancel()
		l.err = <-l.done
	})
	return l.err
}

func (l *runLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

var textURL = regexp.MustCompile(`msg=("[^"]*"|\S+) url=(\S+)`)

// loggedURL returns the message and url of a log line (text or JSON) that
// logs a URL, as .ci/run and cmd/memcheck read the GraphQL endpoint's.
func loggedURL(line string) (msg, url string) {
	if m := textURL.FindStringSubmatch(line); m != nil {
		return strings.Trim(m[1], `"`), m[2]
	}
	var rec struct{ Msg, URL string }
	if json.Unmarshal([]byte(line), &rec) == nil {
		return rec.Msg, rec.URL
	}
	return "", ""
}

// get returns the status and body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return request(t, url, nil, "")
}

// request sends a GET of url, or a POST of body, with header, and returns
// the status and body of the answer.
func request(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	method := http.MethodGet
	if body != "" {
		method = http.MethodPost
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

// Demo mode: with no upstream, run serves the built-in demo upstream, says
// so loudly (a WARN line, the playground, /readyz), logs the playground URL
// and the demo key, answers a nested query with that key, checks the
// upstream once, and shuts down when its context ends.
func TestRun_DemoModeAndGracefulShutdown(t *testing.T) {
	urls, log := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
	endpoint := urls["graphql endpoint"]
	base := strings.TrimSuffix(endpoint, "/graphql")

	body := `{"query":"{ categories(rootsOnly: true, first: 100) { totalCount nodes { name subcategories { nodes { name } } } } }"}`
	status, answer := request(t, endpoint, map[string]string{"Content-Type": "application/json", "X-Api-Key": "demo-key"}, body)
	if status != http.StatusOK || !strings.Contains(answer, `"totalCount":22`) || !strings.Contains(answer, `"Restaurants"`) {
		t.Errorf("status %d, answer %s", status, answer)
	}
	if status, page := get(t, base+"/"); status != http.StatusOK || !strings.Contains(page, `id="notice"`) {
		t.Errorf("the playground (status %d) shows no demo-mode notice", status)
	}
	if status, ready := get(t, base+"/readyz"); status != http.StatusOK || !strings.Contains(ready, `"mode":"demo"`) {
		t.Errorf("/readyz: %d %s, want 200 in mode demo", status, ready)
	}

	// The upstream check runs beside the server: its line comes when it
	// is done.
	log.contains(t, `msg="upstream check: a Sure server answers"`)
	for _, want := range []string{
		`level=WARN msg="demo mode: serving the built-in demo upstream; set -upstream/UPSTREAM_URL for a real Sure server"`,
		`msg=playground url=` + base + `/ demoKey=demo-key`,
		`msg="graphql operation"`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log has no %s:\n%s", want, log)
		}
	}
	if err := log.stop(); err != nil {
		t.Errorf("run returned %v after shutdown, want nil", err)
	}
	log.contains(t, "msg=stopped")
}

// The server starts when its upstream is down, says so in its log (JSON
// here) and in /readyz, and stays alive (/healthz).
func TestRun_UpstreamDown(t *testing.T) {
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/api/v1"
	_ = ln.Close()
	urls, log := startRun(t, []string{"-addr", "127.0.0.1:0", "-log-format", "json"}, func(k string) string {
		return map[string]string{"UPSTREAM_URL": down}[k]
	})
	base := strings.TrimSuffix(urls["graphql endpoint"], "/graphql")
	if status, _ := get(t, base+"/healthz"); status != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", status)
	}
	status, ready := get(t, base+"/readyz")
	if status != http.StatusServiceUnavailable || !strings.Contains(ready, `"reason":"connection_refused"`) || !strings.Contains(ready, `"mode":"upstream"`) {
		t.Errorf("/readyz: %d %s, want 503 connection_refused in mode upstream", status, ready)
	}
	log.waitFor(t, func(line string) bool {
		var rec map[string]any
		return json.Unmarshal([]byte(line), &rec) == nil && rec["level"] == "WARN" &&
			strings.HasPrefix(fmt.Sprint(rec["msg"]), "upstream check failed") && rec["reason"] == "connection_refused"
	})
	if err := log.stop(); err != nil {
		t.Errorf("run returned %v after shutdown, want nil", err)
	}
	log.contains(t, `"msg":"stopped"`)
	for line := range strings.Lines(log.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line that is not JSON: %q", line)
			continue
		}
		if rec["msg"] == "upstream" && rec["url"] != strings.TrimSuffix(down, "/api/v1") {
			t.Errorf("upstream logged as %v, want the base URL without /api/v1", rec["url"])
		}
	}
}

func TestRun_Version(t *testing.T) {
	var out strings.Builder
	// -version needs no port and no upstream: it prints and returns.
	if err := run(t.Context(), []string{"-version", "-addr", "256.0.0.1:-1"}, func(string) string { return "" }, &out); err != nil {
		t.Fatalf("run -version: %v", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "suregql ") || strings.Count(got, "\n") != 1 {
		t.Errorf("run -version printed %q, want one line \"suregql <version>\"", got)
	}
}

func TestVersionOf(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "devel"},
		{"a tagged module", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"built without VCS stamps (-buildvcs=false)", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings(
			"vcs.revision", "6f3ed2bfdaa5c0ffee0123456789abcdef012345", "vcs.time", "2026-11-22T04:00:00Z", "vcs.modified", "false")},
			"devel-6f3ed2bfdaa5 (2026-11-22T04:00:00Z)"},
		{"a modified checkout", &debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: settings(
			"vcs.revision", "6f3ed2bfdaa5c0ffee0123456789abcdef012345", "vcs.modified", "true")},
			"devel-6f3ed2bfdaa5+modified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(tc.info, tc.info != nil); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
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

// /metrics is served on the main listener, or with -metrics-addr on a
// listener of its own (and then not on the main one).
func TestRun_Metrics(t *testing.T) {
	t.Run("main listener", func(t *testing.T) {
		printed, _ := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
		if _, ok := printed["metrics"]; ok {
			t.Errorf("a metrics address is printed without -metrics-addr: %v", printed)
		}
		status, body := get(t, strings.TrimSuffix(printed["graphql endpoint"], "/graphql")+"/metrics")
		if status != http.StatusOK || !strings.Contains(body, "suregql_upstream_shared_total") {
			t.Errorf("GET /metrics: status %d, body %.300s", status, body)
		}
	})
	t.Run("own listener", func(t *testing.T) {
		printed, _ := startRun(t, []string{"-addr", "127.0.0.1:0"}, func(k string) string {
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

// Without GOGC the server collects at defaultGCPercent; a GOGC the operator
// set (which the runtime has applied) is left alone and reported.
func TestSetGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	if got := setGCPercent(func(string) string { return "" }); got != "400" {
		t.Errorf("reported %q, want 400", got)
	}
	if now := debug.SetGCPercent(100); now != defaultGCPercent {
		t.Errorf("GOGC in force %d, want %d", now, defaultGCPercent)
	}
	env := map[string]string{"GOGC": "150"}
	if got := setGCPercent(func(k string) string { return env[k] }); got != "150" {
		t.Errorf("reported %q, want the environment's 150", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("GOGC changed to %d although the environment set it", now)
	}
}
