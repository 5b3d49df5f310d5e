package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/redisstate/redistest"
)

// startRun runs the server with args and getenv until the test ends
// (when run must return nil), and returns the URLs it logged up to its
// GraphQL endpoint's, by message ("graphql endpoint", "metrics",
// "playground"…), and its log.
func startRun(t *testing.T, args []string, getenv func(string) string) (urls map[string]string, log *runLog) {
	t.Helper()
	return startRunWith(t, args, getenv, fireNow)
}

// fireNow is a shutdown delay's timer that has fired already.
func fireNow(time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

// startRunWith is startRun with the timer of the shutdown delay.
func startRunWith(t *testing.T, args []string, getenv func(string) string, after func(time.Duration) <-chan time.Time) (urls map[string]string, log *runLog) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	log = &runLog{cancel: cancel, done: make(chan error, 1), changed: make(chan struct{})}
	go func() {
		log.done <- runWith(ctx, args, getenv, pw, after)
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
	// A Sure outage does not take the replica out of the load balancer:
	// clients get GraphQL errors, not connection errors.
	if status, ready := get(t, base+"/readyz"); status != http.StatusOK || !strings.Contains(ready, `"status":"ready"`) {
		t.Errorf("/readyz: %d %s, want 200 ready", status, ready)
	}
	status, ready := get(t, base+"/readyz?verbose")
	if status != http.StatusOK || !strings.Contains(ready, `"reason":"connection_refused"`) || !strings.Contains(ready, `"mode":"upstream"`) ||
		!strings.Contains(ready, `"circuit":{"state":"closed"`) {
		t.Errorf("/readyz?verbose: %d %s, want 200 with the upstream's reason connection_refused in mode upstream, circuit closed", status, ready)
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

// SIGTERM (the run's context ending, as main's signal.NotifyContext ends
// it): /readyz turns 503 at once, so load balancers stop sending, while the
// server still answers for the shutdown delay; then it drains and run
// returns nil. The delay's timer is the test's: it fires when the test has
// seen both, not after real seconds.
func TestRun_SIGTERMServesOnForTheDelay(t *testing.T) {
	delayed := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	after := func(d time.Duration) <-chan time.Time {
		delayed <- d
		return fire
	}
	urls, log := startRunWith(t, []string{"-addr", "127.0.0.1:0", "-shutdown-delay", "7s"}, noEnv, after)
	endpoint := urls["graphql endpoint"]
	base := strings.TrimSuffix(endpoint, "/graphql")
	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM: %d, want 200", status)
	}

	log.cancel() // SIGTERM
	if d := <-delayed; d != 7*time.Second {
		t.Errorf("shutdown delay %s, want -shutdown-delay's 7s", d)
	}
	// The delay has begun: readiness is already false…
	if status, body := get(t, base+"/readyz"); status != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"shutting_down"`) {
		t.Errorf("/readyz during the delay: %d %s, want 503 shutting_down", status, body)
	}
	// …and requests are still answered, on new connections too.
	body := `{"query":"{ categories(first: 1) { totalCount } }"}`
	status, answer := request(t, endpoint, map[string]string{"Content-Type": "application/json", "X-Api-Key": "demo-key"}, body)
	if status != http.StatusOK || !strings.Contains(answer, `"totalCount"`) {
		t.Errorf("a request during the delay: %d %s, want an answer", status, answer)
	}
	if status, _ := get(t, base+"/healthz"); status != http.StatusOK {
		t.Errorf("/healthz during the delay: %d, want 200", status)
	}
	select {
	case err := <-log.done:
		t.Fatalf("run returned %v before the delay ended", err)
	default:
	}
	log.contains(t, `msg="shutting down: /readyz answers 503; serving on for the shutdown delay" delay=7s`)

	close(fire)
	if err := log.stop(); err != nil {
		t.Errorf("run returned %v, want nil after a clean drain", err)
	}
	log.contains(t, "msg=stopped")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/healthz", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Error("the server still answers after the drain")
	}
}

// SIGHUP, which process managers send to reload, does not stop the server:
// it is logged, and the server answers on.
func TestRun_SIGHUPIsIgnored(t *testing.T) {
	urls, log := startRun(t, []string{"-addr", "127.0.0.1:0"}, noEnv)
	base := strings.TrimSuffix(urls["graphql endpoint"], "/graphql")
	// run has registered for SIGHUP before it logged its endpoint: the
	// signal cannot end this test's process.
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	log.contains(t, `msg="SIGHUP received: ignored`)
	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Errorf("/readyz after SIGHUP: %d, want 200", status)
	}
	select {
	case err := <-log.done:
		t.Fatalf("run returned %v after SIGHUP", err)
	default:
	}
}

// Redis is checked at start: a password it refuses stops the start with
// one line that does not quote the password; a Redis that does not answer
// is a WARN with its reason, and the server starts with /readyz?verbose and
// suregql_redis_up saying so from the first request.
func TestRun_RedisCheckedAtStart(t *testing.T) {
	srv := redistest.StartWith(t, "--requirepass", "right-p4ss")
	env := func(url string) func(string) string {
		return func(k string) string {
			return map[string]string{"REDIS_URL": url, "REDIS_SECRET": "a secret of the replicas"}[k]
		}
	}
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}, env("redis://:wrong-p4ss@"+srv.Addr()+"/0"), io.Discard)
	if err == nil || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "wrong-p4ss") || !strings.Contains(err.Error(), "password") {
		t.Errorf("run with a wrong Redis password returned %v, want one line saying the password was refused, without it", err)
	}

	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "redis://" + ln.Addr().String() + "/0"
	_ = ln.Close()
	urls, log := startRun(t, []string{"-addr", "127.0.0.1:0"}, env(closed))
	log.contains(t, `msg="redis check failed: serving without shared state until it answers" reason=connection_refused`)
	base := strings.TrimSuffix(urls["graphql endpoint"], "/graphql")
	status, ready := get(t, base+"/readyz?verbose")
	if status != http.StatusOK || !strings.Contains(ready, `"redis":{"state":"down"`) || !strings.Contains(ready, `"reason":"connection_refused"`) {
		t.Errorf("/readyz?verbose: %d %s, want 200 with Redis down, connection_refused", status, ready)
	}
	if _, metrics := get(t, base+"/metrics"); !strings.Contains(metrics, "suregql_redis_up 0") {
		t.Error("/metrics does not show suregql_redis_up 0 on the first scrape")
	}
}

// The built binary, signalled for real: SIGHUP (what process managers send
// to reload) is logged and the server answers on; SIGTERM makes it turn
// /readyz to 503, drain and exit 0.
func TestBinary_Signals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "suregql")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0", "-shutdown-delay", "1ms")
	cmd.Env = []string{"HOME=" + t.TempDir()}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	log := &runLog{cancel: func() {}, done: make(chan error, 1), changed: make(chan struct{})}
	go log.read(pr)
	var endpoint string
	log.waitFor(t, func(line string) bool {
		msg, url := loggedURL(line)
		if msg == "graphql endpoint" {
			endpoint = url
		}
		return endpoint != ""
	})
	base := strings.TrimSuffix(endpoint, "/graphql")

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	log.contains(t, `msg="SIGHUP received: ignored`)
	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Errorf("/readyz after SIGHUP: %d, want 200", status)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Errorf("after SIGTERM the binary exited with %v, want 0", err)
	}
	log.contains(t, "msg=stopped")
	order := []string{`msg="shutting down: /readyz answers 503; serving on for the shutdown delay" delay=1ms`, `msg="shutting down: answering the requests in flight"`, `msg=stopped`}
	text, at := log.String(), 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("the log lacks %s after position %d:\n%s", want, at, text)
		}
		at += i
	}
}
