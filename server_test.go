package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

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

// A binary stamped with a version (the Dockerfile's
// -ldflags "-X main.version=${VERSION} -X main.revision=${REVISION}";
// .ci/run builds the image's binary so and runs its -version) says it:
// -version, the start line, /readyz and suregql_build_info.
func TestRun_StampedVersion(t *testing.T) {
	defer func(v, r string) { version, revision = v, r }(version, revision)
	version, revision = "1.2.3", "0123abcd"
	var out strings.Builder
	if err := run(t.Context(), []string{"-version"}, noEnv, &out); err != nil {
		t.Fatalf("run -version: %v", err)
	}
	if got := out.String(); got != "suregql 1.2.3\n" {
		t.Errorf("run -version printed %q, want \"suregql 1.2.3\"", got)
	}
	urls, log := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
	// The first line, before the server waits on anything, names the
	// version.
	if first, _, _ := strings.Cut(log.String(), "\n"); !strings.Contains(first, `msg="suregql starting" version=1.2.3`) {
		t.Errorf("the first log line is %q, want the start line with version=1.2.3", first)
	}
	base := strings.TrimSuffix(urls["graphql endpoint"], "/graphql")
	if status, body := get(t, base+"/readyz"); status != http.StatusOK || !strings.Contains(body, `"version":"1.2.3"`) {
		t.Errorf("/readyz: %d %s, want 200 with version 1.2.3", status, body)
	}
	want := `suregql_build_info{goversion="` + runtime.Version() + `",revision="0123abcd",version="1.2.3"} 1`
	if status, body := get(t, base+"/metrics"); status != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("/metrics: %d, want the line %s in:\n%s", status, want, body)
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
