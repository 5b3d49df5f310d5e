package facade_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// guard bounds how long a test waits for something that should happen
// long before; it never paces the test.
const guard = 10 * time.Second

// At the operation deadline the fields still waiting for the upstream
// answer UPSTREAM_UNAVAILABLE with reason "timeout", what was already
// resolved still answers, and the upstream requests are canceled. The
// upstream client's own timeout is an hour, so only the deadline can end
// the operation.
func TestHTTP_OperationDeadline(t *testing.T) {
	// Not parallel: both upstream requests must reach the upstream within
	// the 300 ms deadline.
	canceled := make(chan string, 10)
	e := newEnv(t, withTimeout(time.Hour), withConfig(func(c *facade.Config) { c.OperationTimeout = 300 * time.Millisecond }),
		withUpstreamWrapper(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(w, r) // held: returns when the request is canceled
				if r.Context().Err() != nil {
					canceled <- r.URL.Path
				}
			})
		}))
	release := e.upstream.Hold() // no upstream answer until the test ends
	t.Cleanup(release)

	done := make(chan result, 1)
	go func() {
		done <- e.do(restclienttest.DemoKey, `{ __typename categories(first: 1) { totalCount } chats(first: 1) { totalCount } }`, nil)
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(guard):
		t.Fatalf("no answer %v after the deadline", guard)
	}
	if !strings.Contains(string(r.data), `"__typename":"Query"`) {
		t.Errorf("data = %s, want __typename answered", r.data)
	}
	timedOut := 0
	for _, err := range r.errs {
		if err.Extensions["code"] == "UPSTREAM_UNAVAILABLE" && err.Extensions["reason"] == "timeout" {
			timedOut++
		}
	}
	if timedOut != 2 {
		t.Errorf("errors = %v, want categories and chats UPSTREAM_UNAVAILABLE with reason timeout", r.errs)
	}
	wantCalls(t, r, 2) // one each, not retried after the deadline
	for range 2 {
		select {
		case <-canceled:
		case <-time.After(guard):
			t.Fatal("an upstream request outlived the operation's deadline")
		}
	}
}

// When the client goes away, the request's context ends and the upstream
// request it was waiting for is canceled too: nothing in the handler
// detaches from it. (A mutation: writes are never shared between
// requests, so the upstream call belongs to this request alone.)
func TestHTTP_ClientGoneCancelsUpstream(t *testing.T) {
	t.Parallel()
	arrived, canceled, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	e := newEnv(t, withTimeout(time.Hour), withUpstreamWrapper(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				next.ServeHTTP(w, r)
				return
			}
			// net/http notices a closed connection only once the body
			// has been read.
			_, _ = io.Copy(io.Discard, r.Body)
			close(arrived)
			select {
			case <-r.Context().Done():
				close(canceled)
			case <-stop: // the test failed; let the server close
			}
		})
	}))
	t.Cleanup(func() { close(stop) })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sent := make(chan error, 1)
	go func() {
		body := `{"query":"mutation { createChat(input: {title: \"left behind\"}) { chat { id } } }"}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.server.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	select {
	case <-arrived:
	case <-time.After(guard):
		t.Fatal("the mutation never reached the upstream")
	}
	cancel()
	select {
	case <-canceled:
	case <-time.After(guard):
		t.Fatal("the upstream request was not canceled when the client went away")
	}
	if err := <-sent; err == nil {
		t.Error("the client's request succeeded after it was canceled")
	}
}
