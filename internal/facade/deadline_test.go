package facade_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// guard bounds how long a test waits for something that should happen
// long before; it never paces the test.
const guard = 10 * time.Second

// At the operation deadline the fields still waiting for the upstream
// answer UPSTREAM_UNAVAILABLE with reason "timeout", what was already
// resolved still answers, and the upstream requests are canceled. The
// upstream client has no timeout of its own, so only the deadline can end
// the operation. In a synctest bubble, over an in-process upstream: the
// 300 ms pass on the bubble's clock once every goroutine waits, however
// busy the machine.
func TestHTTP_OperationDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		release := fake.Hold() // no upstream answer until the test ends
		defer release()
		canceled := make(chan string, 10)
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fake.ServeHTTP(w, r) // held: returns when the request is canceled
			if r.Context().Err() != nil {
				canceled <- r.URL.Path
			}
		})
		h := inBubble(t, upstream, 300*time.Millisecond)
		rec := postIn(h, `{"query":"{ __typename categories(first: 1) { totalCount } chats(first: 1) { totalCount } }"}`)

		var answer struct {
			Data   json.RawMessage
			Errors []struct {
				Extensions map[string]any
			}
			Extensions struct{ Upstream struct{ Calls int } }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if !strings.Contains(string(answer.Data), `"__typename":"Query"`) {
			t.Errorf("data = %s, want __typename answered", answer.Data)
		}
		timedOut := 0
		for _, err := range answer.Errors {
			if err.Extensions["code"] == "UPSTREAM_UNAVAILABLE" && err.Extensions["reason"] == "timeout" {
				timedOut++
			}
		}
		if timedOut != 2 {
			t.Errorf("answer = %s, want categories and chats UPSTREAM_UNAVAILABLE with reason timeout", rec.Body)
		}
		// One each, not retried after the deadline.
		if got := answer.Extensions.Upstream.Calls; got != 2 || fake.Calls() != 2 {
			t.Errorf("extensions.upstream.calls = %d, the upstream counted %d; want 2", got, fake.Calls())
		}
		synctest.Wait()
		if len(canceled) != 2 {
			t.Errorf("%d upstream requests canceled at the deadline, want 2", len(canceled))
		}
	})
}

// inBubble returns the facade over upstream, in process, with an
// operation timeout: for tests in a synctest bubble, whose clock runs
// only when every goroutine of the bubble waits.
func inBubble(t *testing.T, upstream http.Handler, timeout time.Duration) http.Handler {
	t.Helper()
	return inBubbleWith(t, upstream, timeout, 0)
}

// inBubbleWith is inBubble whose upstream requests also time out after
// requestTimeout (0: never), as -upstream-timeout makes them.
func inBubbleWith(t *testing.T, upstream http.Handler, timeout, requestTimeout time.Duration) http.Handler {
	t.Helper()
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{
		Timeout: requestTimeout, Transport: facade.HandlerTransport{Handler: upstream},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return facade.New(facade.Config{Upstream: client, OperationTimeout: timeout, DisablePlayground: true,
		Log: slog.New(slog.DiscardHandler)})
}

// postIn posts body to h's /graphql as the demo key.
func postIn(h http.Handler, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", restclienttest.DemoKey)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
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
