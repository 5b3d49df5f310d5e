package facade_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
)

// longName is an operationName of n bytes, all of one letter so that a
// log or an answer holding a piece of it is easy to find.
func longName(n int) string { return "Q" + strings.Repeat("z", n-1) }

// An operationName over 256 bytes (a GET's, a POST's, one of a batch's) is
// refused before GraphQL reads the request, with QUERY_LIMIT_EXCEEDED and
// limit "operationName", without a call; neither the answer nor the log
// holds the name, and the refusal is counted. A name of 256 bytes is
// answered.
func TestHTTP_OperationNameIsCapped(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e, logs := jsonLogs(t, withConfig(func(c *facade.Config) { c.Metrics = m }))
	huge := longName(125 << 10) // what the attacker sent, no key
	tests := []struct {
		name      string
		do        func() httpResult
		wantIndex any // extensions.index, nil for a single request
		actual    int
	}{
		{name: "a 125 KB operationName, no key", actual: len(huge), do: func() httpResult {
			return postJSON(t, e, `{"query":"{ __typename }","operationName":"`+huge+`"}`, nil)
		}},
		{name: "257 bytes", actual: 257, do: func() httpResult {
			return postJSON(t, e, `{"query":"{ chats(first: 1) { totalCount } }","operationName":"`+longName(257)+`"}`,
				map[string]string{"X-Api-Key": restclienttest.DemoKey})
		}},
		{name: "257 bytes in a GET", actual: 257, do: func() httpResult {
			q := url.Values{"query": {"{ chats(first: 1) { totalCount } }"}, "operationName": {longName(257)}}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+"/graphql?"+q.Encode(), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", restclienttest.DemoKey)
			return send(t, req)
		}},
		{name: "a batch with a 1 KB operationName second", actual: 1024, wantIndex: float64(1), do: func() httpResult {
			return postJSON(t, e, `[{"query":"{ chats(first: 1) { totalCount } }"},{"query":"{ __typename }","operationName":"`+longName(1024)+`"}]`,
				map[string]string{"X-Api-Key": restclienttest.DemoKey})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do()
			if r.status != http.StatusBadRequest || errorCode(r) != "QUERY_LIMIT_EXCEEDED" {
				t.Fatalf("status %d, answer %.300s; want 400 QUERY_LIMIT_EXCEEDED", r.status, r.raw)
			}
			first := r.body["errors"].([]any)[0].(map[string]any)
			ext := first["extensions"].(map[string]any)
			if ext["limit"] != "operationName" || ext["max"] != float64(256) || ext["actual"] != float64(tc.actual) || ext["index"] != tc.wantIndex {
				t.Errorf("extensions = %v, want limit operationName, max 256, actual %d, index %v", ext, tc.actual, tc.wantIndex)
			}
			if len(r.raw) > 512 || strings.Contains(r.raw, "zzzz") {
				t.Errorf("the answer (%d bytes) echoes the name: %.300s", len(r.raw), r.raw)
			}
		})
	}
	if n := e.upstream.Calls(); n != 0 {
		t.Errorf("upstream calls = %d, want 0 (nothing of a refused request runs)", n)
	}
	if strings.Contains(logs.String(), "zzzz") {
		t.Errorf("the log holds the name: %.500s", logs.String())
	}
	for _, line := range logLines(t, logs.String()) {
		if line["msg"] != "graphql request refused" {
			t.Errorf("log line %v, want only the refusals' lines", line)
		}
	}
	families, _ := scrapeMetrics(t, e.server.URL+"/metrics")
	if got := series(families, "suregql_query_limit_refusals_total")[`limit="operationName"`]; got != float64(len(tests)) {
		t.Errorf(`suregql_query_limit_refusals_total{limit="operationName"} = %v, want %d`, got, len(tests))
	}

	// At the cap: answered.
	name := longName(256)
	r := postJSON(t, e, `{"query":"query `+name+` { __typename }","operationName":"`+name+`"}`, nil)
	if r.status != http.StatusOK || r.body["errors"] != nil {
		t.Errorf("a 256-byte operationName: status %d, answer %.300s; want it answered", r.status, r.raw)
	}
}

// answer is what a test reads of one HTTP answer on a raw connection.
type answer struct {
	status int
	close  bool // it said "Connection: close"
}

// pipelined sends raw (one or more HTTP/1.1 requests written back to back
// on one connection) to the server and returns every answer it reads
// before the server closes the connection.
func pipelined(t *testing.T, e *env, raw string) []answer {
	t.Helper()
	conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", e.server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// A guard against a hung test only: every exchange below ends with the
	// server closing the connection.
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var answers []answer
	for {
		resp, err := http.ReadResponse(br, nil)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return answers
		}
		if err != nil {
			t.Fatalf("after %d answers: %v", len(answers), err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, answer{status: resp.StatusCode, close: resp.Close})
	}
}

// A request with both Content-Length and Transfer-Encoding (RFC 9112 §6.3,
// request smuggling) is answered by its chunked body and its connection
// closed: a request pipelined behind it, which a front proxy going by
// Content-Length took for the rest of the body, is never answered, and its
// upstream call never made. Any chunked request closes its connection
// (net/http drops Content-Length before a handler sees it); a request with
// a Content-Length alone keeps it open for the next.
func TestHTTP_ChunkedRequestClosesItsConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := `{"query":"{ __typename }"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	// The smuggled request would cost an upstream call; it asks for the
	// connection to be closed after it, so that the control case ends.
	smuggled := "GET /graphql?query=" + url.QueryEscape("{ categories(first: 1) { totalCount } }") + " HTTP/1.1\r\n" +
		"Host: facade\r\nX-Api-Key: " + restclienttest.DemoKey + "\r\nConnection: close\r\n\r\n"
	const post = "POST /graphql HTTP/1.1\r\nHost: facade\r\nContent-Type: application/json\r\n"
	tests := []struct {
		name    string
		raw     string
		answers int
		close   bool // the first answer says "Connection: close"
	}{
		{name: "Content-Length and Transfer-Encoding",
			raw: post + fmt.Sprintf("Content-Length: %d\r\n", len(chunked+smuggled)) + "Transfer-Encoding: chunked\r\n\r\n" + chunked + smuggled,
			// What a proxy going by Content-Length sent as one request.
			answers: 1, close: true},
		{name: "Transfer-Encoding and Content-Length",
			raw:     post + "Transfer-Encoding: chunked\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(chunked)) + chunked + smuggled,
			answers: 1, close: true},
		{name: "Transfer-Encoding alone",
			raw:     post + "Transfer-Encoding: chunked\r\n\r\n" + chunked + smuggled,
			answers: 1, close: true},
		{name: "Content-Length alone (control: pipelining works)",
			raw:     post + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body + smuggled,
			answers: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := e.upstream.Calls()
			answers := pipelined(t, e, tc.raw)
			if len(answers) != tc.answers {
				t.Fatalf("%d answers on the connection, want %d", len(answers), tc.answers)
			}
			first := answers[0]
			if first.status != http.StatusOK {
				t.Errorf("the first request: status %d, want 200", first.status)
			}
			if first.close != tc.close {
				t.Errorf("the first answer says Connection: close: %v, want %v", first.close, tc.close)
			}
			if calls := e.upstream.Calls() - before; calls != tc.answers-1 {
				t.Errorf("upstream calls = %d, want %d (only an answered second request calls)", calls, tc.answers-1)
			}
		})
	}
}

// The playground, where users type their API key, is served with a strict
// Content-Security-Policy (its own scripts and styles, the inline ones by a
// nonce new for each answer; requests to its own origin; no framing) and
// the other headers that keep it from being framed, sniffed or named in a
// Referer. Every answer of /graphql, and the playground's files, say
// nosniff too.
func TestHTTP_SecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Demo, c.PlaygroundAPIKey = true, restclienttest.DemoKey }))
	get := func(path string) httpResult {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.server.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return send(t, req)
	}
	var nonces []string
	for range 2 {
		r := get("/")
		if r.status != http.StatusOK {
			t.Fatalf("GET /: status %d", r.status)
		}
		for name, want := range map[string]string{
			"X-Frame-Options":        "DENY",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "no-referrer",
		} {
			if got := r.header.Get(name); got != want {
				t.Errorf("GET /: %s = %q, want %q", name, got, want)
			}
		}
		csp := map[string]string{}
		for d := range strings.SplitSeq(r.header.Get("Content-Security-Policy"), ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			csp[name] = value
		}
		nonce := regexp.MustCompile(`^'self' 'nonce-([A-Za-z0-9_-]{22})'$`).FindStringSubmatch(csp["script-src"])
		if nonce == nil {
			t.Fatalf("script-src %q, want 'self' and a nonce only", csp["script-src"])
		}
		for name, want := range map[string]string{
			"default-src":     "'none'",
			"style-src":       "'self' 'nonce-" + nonce[1] + "'",
			"connect-src":     "'self'",
			"frame-ancestors": "'none'",
			"base-uri":        "'none'",
			"form-action":     "'none'",
		} {
			if csp[name] != want {
				t.Errorf("Content-Security-Policy %s %q, want %q", name, csp[name], want)
			}
		}
		// Every inline script and style carries the nonce; every other
		// script is a file of the server's.
		inline := regexp.MustCompile(`<(script|style)([^>]*)>`).FindAllStringSubmatch(r.raw, -1)
		var inlines int
		for _, tag := range inline {
			switch {
			case strings.Contains(tag[2], `src="/graphiql/`):
			case tag[2] == ` nonce="`+nonce[1]+`"`:
				inlines++
			default:
				t.Errorf("%s is neither a file of the server's nor does it carry the nonce", tag[0])
			}
		}
		if inlines != 2 {
			t.Errorf("%d inline scripts and styles with the nonce, want 2 (the page's script and style)", inlines)
		}
		if regexp.MustCompile(`\son[a-z]+=|\sstyle=`).MatchString(r.raw) {
			t.Error("the page has an inline event handler or style attribute, which its policy refuses")
		}
		nonces = append(nonces, nonce[1])
	}
	if nonces[0] == nonces[1] {
		t.Errorf("two answers share the nonce %s", nonces[0])
	}

	asset := get("/graphiql/graphiql.min.js")
	if asset.status != http.StatusOK || asset.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the playground's script: status %d, X-Content-Type-Options %q; want 200, nosniff", asset.status, asset.header.Get("X-Content-Type-Options"))
	}
	for name, r := range map[string]httpResult{
		"POST answered":  postJSON(t, e, `{"query":"{ __typename }"}`, nil),
		"POST refused":   postJSON(t, e, `{"variables":{}}`, nil),
		"GET answered":   get("/graphql?query=" + url.QueryEscape("{ __typename }")),
		"GET a mutation": get("/graphql?query=" + url.QueryEscape(`mutation { createChat(input: { title: "x" }) { chat { id } } }`)),
	} {
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("/graphql, %s (status %d): X-Content-Type-Options %q, want nosniff", name, r.status, got)
		}
	}
}
