package planner_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// lateWrite is an upstream whose first POST to path is answered 502 by a
// proxy but reaches the app later: just after the next GET of path is
// answered (a write still running when its answer was lost).
type lateWrite struct {
	fake *restclienttest.Server
	path string

	mu      sync.Mutex
	pending *http.Request
	body    []byte
	sent    bool
}

func (h *lateWrite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == h.path && !h.sent:
		h.sent = true
		h.body, _ = io.ReadAll(r.Body)
		h.pending = r.Clone(r.Context())
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>502</html>")
	case r.Method == http.MethodGet && r.URL.Path == h.path && h.pending != nil:
		h.fake.ServeHTTP(w, r)
		late := h.pending
		h.pending = nil
		late.Body = io.NopCloser(bytes.NewReader(h.body))
		h.fake.ServeHTTP(httptest.NewRecorder(), late)
	default:
		h.fake.ServeHTTP(w, r)
	}
}

// A chat creation whose answer was lost, that the check read did not
// find, may still land: the key's next read of its chats asks the
// upstream, rather than being served the check's answer, which would hide
// the new chat (and invite creating it twice).
func TestCreateChat_UnsettledLeavesNothingKept(t *testing.T) {
	fake := restclienttest.New()
	srv := httptest.NewServer(&lateWrite{fake: fake, path: "/api/v1/chats"})
	t.Cleanup(srv.Close)
	client, err := restclient.New(srv.URL, restclient.WithRetryPolicy(restclient.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	cache := restcache.NewCache(100, time.Hour)
	shared := &planner.Shared{Upstream: client, Cache: cache, Generations: cache.Generations(), MaxCalls: 100}
	const title = "landed late"
	_, err = planner.New(shared, caller(restclienttest.DemoKey)).CreateChat(t.Context(), restclient.CreateChatRequest{Title: title})
	var unknown *planner.OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Checked {
		t.Fatalf("create: %v, want an outcome unknown, checked", err)
	}
	page, err := planner.New(shared, caller(restclienttest.DemoKey)).Client().ListChats(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range page.Chats {
		if strings.EqualFold(c.Title, title) {
			return
		}
	}
	t.Errorf("the next read of the chats lacks %q, created upstream: served the check's answer", title)
}
