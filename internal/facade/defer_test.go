package facade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// deferQuery reads the newest chat's title at once and its messages,
// which need a second upstream call, deferred. (gqlgen resolves the root
// fields of a query together: a deferred fragment is one of an object.)
const deferQuery = `query Home {
  chats(first: 1) { totalCount nodes { title
    ... @defer(label: "messages") { messages(first: 5) { totalCount nodes { content } } }
  } }
}`

// apolloAccept is the Accept header Apollo Client 4's HttpLink sends with
// an operation holding @defer (its Defer20220824Handler, 4.3.8).
const apolloAccept = "multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9"

// A client that accepts multipart/mixed gets an operation with @defer in
// parts: the initial payload as soon as its own calls answered, while the
// deferred fragment's call is still held by the upstream, then the
// fragment once its call answered; at the cost of the same operation
// without @defer.
func TestDefer_Multipart(t *testing.T) {
	gate := make(chan struct{})
	closeGate := sync.OnceFunc(func() { close(gate) })
	var logged syncBuffer
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Log = slog.New(slog.NewJSONHandler(&logged, nil)) }), withUpstreamWrapper(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/v1/chats/") {
				<-gate
			}
			h.ServeHTTP(w, r)
		})
	}))
	t.Cleanup(closeGate) // first: a failure before the release must not hang the servers' shutdown
	resp := postAccept(t, e, deferQuery, apolloAccept)
	defer func() { _ = resp.Body.Close() }()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["deferspec"] != "20220824" {
		t.Fatalf("Content-Type = %q, want multipart/mixed with deferSpec=20220824", resp.Header.Get("Content-Type"))
	}
	parts := multipart.NewReader(resp.Body, params["boundary"])

	// The initial payload arrives while the chat's call is held.
	var initial struct {
		Data struct {
			Chats struct {
				TotalCount int
				Nodes      []map[string]json.RawMessage
			}
		}
		HasNext    *bool
		Extensions struct {
			RequestID string
			Upstream  struct{ Calls int }
		}
	}
	readPart(t, parts, &initial)
	if c := initial.Data.Chats; len(c.Nodes) != 1 || c.Nodes[0]["title"] == nil || c.Nodes[0]["messages"] != nil || initial.HasNext == nil || !*initial.HasNext {
		t.Fatalf("initial payload: %+v, want the chat's title, not its (deferred) messages, and hasNext true", initial)
	}
	if initial.Extensions.RequestID == "" {
		t.Error("the initial payload has no extensions.requestId")
	}
	closeGate()

	var later struct {
		Incremental []struct {
			Data struct {
				Messages *struct{ TotalCount int }
			}
			Label  string
			Path   []any
			Errors []any
		}
		HasNext    bool
		Extensions struct {
			RequestID string
			Upstream  struct{ Calls int }
		}
	}
	readPart(t, parts, &later)
	if len(later.Incremental) != 1 || later.HasNext {
		t.Fatalf("subsequent payload: %+v, want one fragment and hasNext false", later)
	}
	frag := later.Incremental[0]
	if frag.Label != "messages" || frag.Data.Messages == nil || frag.Data.Messages.TotalCount == 0 || len(frag.Errors) > 0 ||
		fmt.Sprint(frag.Path) != "[chats nodes 0]" {
		t.Fatalf("deferred fragment: %+v, want the messages labelled messages at chats.nodes.0", frag)
	}
	if later.Extensions.RequestID != initial.Extensions.RequestID {
		t.Errorf("request ids %q and %q, want the request's in both payloads", initial.Extensions.RequestID, later.Extensions.RequestID)
	}
	if _, err := parts.NextPart(); err != io.EOF {
		t.Fatalf("after the last payload: %v, want the closing boundary", err)
	}
	deferred := e.upstream.Calls()
	if later.Extensions.Upstream.Calls != deferred {
		t.Errorf("the last payload reports %d calls, the upstream counted %d", later.Extensions.Upstream.Calls, deferred)
	}

	// One log line for the operation, with all its calls.
	var lines []map[string]any
	for line := range strings.Lines(logged.String()) {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "graphql operation" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || lines[0]["upstreamCalls"] != float64(deferred) {
		t.Errorf("operation log lines %v, want one with upstreamCalls %d", lines, deferred)
	}

	// The same operation without @defer costs the same calls.
	plain := e.do(restclienttest.DemoKey, strings.Replace(deferQuery, `@defer(label: "messages")`, "", 1), nil)
	if plain.calls != deferred {
		t.Errorf("deferred: %d upstream calls, without @defer: %d", deferred, plain.calls)
	}
}

// Without @defer, or without multipart/mixed in Accept, an operation
// answers in one JSON piece, as before.
func TestDefer_OnePieceOtherwise(t *testing.T) {
	e := newEnv(t)
	resp := postAccept(t, e, `{ chats(first: 2) { totalCount } }`, apolloAccept)
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/graphql-response+json") {
		t.Fatalf("Content-Type = %q, want one JSON answer", ct)
	}
}

// A query holding @defer that is not answered in parts (a client that does
// not accept multipart/mixed, a batch, a GET) answers in one piece with
// its deferred fragments in place, as the same query without @defer: the
// same data and calls, reported in extensions.upstream. (gqlgen alone
// answers the initial payload, the deferred fields null and "hasNext":
// true, while still making the deferred calls, whose answers it drops.)
func TestDefer_OnePieceInlinesTheFragments(t *testing.T) {
	e := newEnv(t)
	plain := e.do(restclienttest.DemoKey, strings.Replace(deferQuery, `@defer(label: "messages")`, "", 1), nil)
	type answer struct {
		Data struct {
			Chats struct {
				Nodes []struct {
					Title    string
					Messages *struct{ TotalCount int }
				}
			}
		}
		HasNext    *bool
		Extensions struct{ Upstream struct{ Calls int } }
	}
	body, _ := json.Marshal(map[string]any{"query": deferQuery})
	for _, tc := range []struct {
		name   string
		method string
		body   string
		accept string
		batch  bool
	}{
		{name: "no multipart", method: http.MethodPost, body: string(body), accept: "application/json"},
		{name: "batch", method: http.MethodPost, body: "[" + string(body) + "]", accept: apolloAccept, batch: true},
		{name: "GET", method: http.MethodGet, accept: apolloAccept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := e.server.URL + "/graphql"
			if tc.method == http.MethodGet {
				url += "?query=" + neturl.QueryEscape(deferQuery)
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tc.accept)
			req.Header.Set("X-Api-Key", restclienttest.DemoKey)
			before := e.upstream.Calls()
			resp, err := e.server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			calls := e.upstream.Calls() - before
			var got answer
			if tc.batch {
				var all []answer
				if err := json.Unmarshal(b, &all); err != nil || len(all) != 1 {
					t.Fatalf("answer %s (%v), want an array of one", b, err)
				}
				got = all[0]
			} else if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("answer %s: %v", b, err)
			}
			nodes := got.Data.Chats.Nodes
			if len(nodes) != 1 || nodes[0].Title == "" || nodes[0].Messages == nil || nodes[0].Messages.TotalCount == 0 || got.HasNext != nil {
				t.Fatalf("answer %s, want the chat with its messages and no hasNext", b)
			}
			if calls != plain.calls || got.Extensions.Upstream.Calls != calls {
				t.Errorf("%d upstream calls, %d reported; without @defer: %d", calls, got.Extensions.Upstream.Calls, plain.calls)
			}
		})
	}
}

func postAccept(t *testing.T, e *env, query, accept string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.server.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("X-Api-Key", restclienttest.DemoKey)
	resp, err := e.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return resp
}

// readPart decodes the next part of a multipart answer into out.
func readPart(t *testing.T, parts *multipart.Reader, out any) {
	t.Helper()
	p, err := parts.NextPart()
	if err != nil {
		t.Fatalf("next part: %v", err)
	}
	if ct := p.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("part Content-Type %q, want application/json", ct)
	}
	b, err := io.ReadAll(p)
	if err != nil {
		t.Fatalf("read part: %v", err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("decode part %s: %v", b, err)
	}
}

// A client that goes away while a fragment is pending ends the answer: the
// handler does not wait for the fragment (gqlgen's executor would, without
// watching the request's context), so the server can shut down.
func TestDefer_ClientGoesAway(t *testing.T) {
	gate := make(chan struct{})
	closeGate := sync.OnceFunc(func() { close(gate) })
	e := newEnv(t, withUpstreamWrapper(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/v1/chats/") {
				select {
				case <-gate:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}))
	t.Cleanup(closeGate)
	resp := postAccept(t, e, deferQuery, apolloAccept)
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var initial struct{ HasNext bool }
	readPart(t, multipart.NewReader(resp.Body, params["boundary"]), &initial)
	if !initial.HasNext {
		t.Fatal("the initial payload has hasNext false")
	}
	_ = resp.Body.Close()
	// Close waits for the handler: it returns once the request's context
	// ended, whether the fragment is ever sent or not.
	e.server.Close()
}

// streamIn posts deferQuery to h as Apollo Client would, on ctx, and
// returns the recorder and a channel closed once the initial payload was
// flushed; done is closed when the handler returned.
func streamIn(ctx context.Context, h http.Handler) (rec *flushRecorder, flushed, done chan struct{}) {
	body, _ := json.Marshal(map[string]any{"query": deferQuery})
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", apolloAccept)
	req.Header.Set("X-Api-Key", restclienttest.DemoKey)
	flushed, done = make(chan struct{}), make(chan struct{})
	rec = &flushRecorder{ResponseRecorder: httptest.NewRecorder(), first: sync.OnceFunc(func() { close(flushed) })}
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	return rec, flushed, done
}

// flushRecorder is a ResponseRecorder that tells when it is first flushed.
type flushRecorder struct {
	*httptest.ResponseRecorder
	first func()
}

func (r *flushRecorder) Flush() {
	r.ResponseRecorder.Flush()
	r.first()
}

// heldChats is an upstream that holds every read of one chat (the deferred
// fragment's call) until its request is canceled or release is called,
// and counts the calls it receives and those canceled.
type heldChats struct {
	fake     *restclienttest.Server
	release  chan struct{}
	calls    atomic.Int64
	held     atomic.Int64
	canceled atomic.Int64
}

func (u *heldChats) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	if strings.HasPrefix(r.URL.Path, "/api/v1/chats/") {
		u.held.Add(1)
		select {
		case <-u.release:
		case <-r.Context().Done():
			u.canceled.Add(1)
			return
		}
	}
	u.fake.ServeHTTP(w, r)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Clients that leave while their deferred fragment's call is in flight
// leave nothing behind: the call is canceled, no further call is made,
// and every handler returns, with nothing of the operation parked (the
// bubble fails the test if a goroutine of it stays blocked). gqlgen's
// executor waits for a deferred fragment without watching any context;
// the operation runs on one the client's leaving does not end, so the
// fragment, failed, is still delivered to the handler, which drains it.
func TestDefer_ClientsLeaveMidStream(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		h := inBubble(t, up, time.Hour)
		const clients = 4
		var cancels []context.CancelFunc
		var dones []chan struct{}
		for range clients {
			ctx, cancel := context.WithCancel(t.Context())
			cancels = append(cancels, cancel)
			_, flushed, done := streamIn(ctx, h)
			<-flushed
			dones = append(dones, done)
		}
		synctest.Wait() // every deferred fragment waits for its held call
		if up.held.Load() == 0 {
			t.Fatal("no deferred call reached the upstream before the clients left")
		}
		before := up.calls.Load()
		for _, cancel := range cancels {
			cancel()
		}
		synctest.Wait()
		for i, done := range dones {
			if !isClosed(done) {
				t.Errorf("client %d left, its handler still runs", i)
			}
		}
		if got := up.calls.Load(); got != before {
			t.Errorf("%d upstream calls after the clients left, %d before: want no further call", got, before)
		}
		if held, canceled := up.held.Load(), up.canceled.Load(); canceled != held {
			t.Errorf("%d of the %d held calls canceled when their clients left, want all", canceled, held)
		}
	})
}

// A deferred call that two clients share goes on when one of them leaves:
// the other still gets its fragment, from that one call.
func TestDefer_SharedCallOutlivesAClientLeaving(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		h := inBubble(t, up, time.Hour)
		ctxA, leave := context.WithCancel(t.Context())
		_, flushedA, doneA := streamIn(ctxA, h)
		<-flushedA
		synctest.Wait() // A's deferred call is held
		recB, flushedB, doneB := streamIn(t.Context(), h)
		<-flushedB
		synctest.Wait() // B waits for the same call
		if held := up.held.Load(); held != 1 {
			t.Fatalf("%d deferred calls held, want the one both clients wait for", held)
		}
		leave()
		synctest.Wait()
		if !isClosed(doneA) {
			t.Error("client A left, its handler still runs")
		}
		if up.canceled.Load() != 0 {
			t.Fatal("the call client B waits for was canceled when client A left")
		}
		close(up.release)
		<-doneB
		_, params, _ := mime.ParseMediaType(recB.Header().Get("Content-Type"))
		parts := multipart.NewReader(recB.Body, params["boundary"])
		var initial, later struct {
			HasNext     bool
			Incremental []struct {
				Data struct{ Messages *struct{ TotalCount int } }
			}
		}
		readPart(t, parts, &initial)
		readPart(t, parts, &later)
		if len(later.Incremental) != 1 || later.Incremental[0].Data.Messages == nil || later.HasNext {
			t.Errorf("client B's second payload %+v, want the messages and hasNext false", later)
		}
		if held := up.held.Load(); held != 1 {
			t.Errorf("%d deferred calls, want 1", held)
		}
	})
}

// At the operation deadline a deferred fragment whose call is unanswered
// is delivered with its error, and the answer ends.
func TestDefer_Deadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		h := inBubble(t, up, 300*time.Millisecond)
		rec, _, done := streamIn(t.Context(), h)
		<-done
		_, params, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
		parts := multipart.NewReader(rec.Body, params["boundary"])
		var initial struct{ HasNext bool }
		var later struct {
			HasNext     bool
			Incremental []struct {
				Data   struct{ Messages *struct{ TotalCount int } }
				Errors []struct{ Extensions map[string]any }
			}
		}
		readPart(t, parts, &initial)
		readPart(t, parts, &later)
		if !initial.HasNext || later.HasNext || len(later.Incremental) != 1 {
			t.Fatalf("payloads %+v then %+v, want the initial one then the fragment, last", initial, later)
		}
		frag := later.Incremental[0]
		if frag.Data.Messages != nil || len(frag.Errors) != 1 || frag.Errors[0].Extensions["code"] != "UPSTREAM_UNAVAILABLE" || frag.Errors[0].Extensions["reason"] != "timeout" {
			t.Errorf("fragment %+v, want no messages and UPSTREAM_UNAVAILABLE with reason timeout", frag)
		}
		if _, err := parts.NextPart(); err != io.EOF {
			t.Errorf("after the fragment: %v, want the closing boundary", err)
		}
		synctest.Wait() // the held call ends with its request
		if up.canceled.Load() != up.held.Load() {
			t.Errorf("%d held calls, %d canceled at the deadline", up.held.Load(), up.canceled.Load())
		}
	})
}

// At the deadline every pending fragment is delivered, each with its
// error, and the answer closes: the client is still there, only the
// upstream calls ended. (Several fragments: one per chat.)
func TestDefer_DeadlineDeliversEveryFragment(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		h := inBubble(t, up, 300*time.Millisecond)
		const chats = 3
		q := fmt.Sprintf(`{ chats(first: %d) { nodes { title ... @defer(label: "m") { messages(first: 5) { totalCount } } } } }`, chats)
		body, _ := json.Marshal(map[string]any{"query": q})
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", apolloAccept)
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		_, params, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
		parts := multipart.NewReader(rec.Body, params["boundary"])
		var initial struct{ HasNext bool }
		readPart(t, parts, &initial)
		if !initial.HasNext {
			t.Fatal("the initial payload has hasNext false")
		}
		paths := map[string]bool{}
		for i := range chats {
			var later struct {
				HasNext     bool
				Incremental []struct {
					Path   []any
					Errors []struct{ Extensions map[string]any }
				}
			}
			readPart(t, parts, &later)
			if len(later.Incremental) != 1 || later.HasNext != (i < chats-1) {
				t.Fatalf("payload %d: %+v, want one fragment, hasNext %v", i+1, later, i < chats-1)
			}
			frag := later.Incremental[0]
			if len(frag.Errors) != 1 || frag.Errors[0].Extensions["reason"] != "timeout" {
				t.Errorf("fragment %+v, want its timeout error", frag)
			}
			paths[fmt.Sprint(frag.Path)] = true
		}
		if len(paths) != chats {
			t.Errorf("fragments at %v, want one per chat", paths)
		}
		if _, err := parts.NextPart(); err != io.EOF {
			t.Errorf("after the last fragment: %v, want the closing boundary", err)
		}
	})
}

// A query holding @defer answered in one piece still ends at its
// deadline: the deferred fragment whose call is unanswered is in place
// with its error, and nothing of the operation stays parked (the bubble
// fails the test otherwise).
func TestDefer_OnePieceDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		h := inBubble(t, up, 300*time.Millisecond)
		body, _ := json.Marshal(map[string]any{"query": deferQuery})
		rec := postIn(h, string(body))
		var got struct {
			Data struct {
				Chats struct {
					Nodes []struct {
						Title    string
						Messages *struct{ TotalCount int }
					}
				}
			}
			Errors  []struct{ Extensions map[string]any }
			HasNext *bool
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if n := got.Data.Chats.Nodes; len(n) != 1 || n[0].Title == "" || n[0].Messages != nil || got.HasNext != nil ||
			len(got.Errors) != 1 || got.Errors[0].Extensions["reason"] != "timeout" {
			t.Errorf("answer %s, want the title, the messages null with one timeout error, no hasNext", rec.Body)
		}
		synctest.Wait()
		if up.canceled.Load() != up.held.Load() {
			t.Errorf("%d held calls, %d canceled at the deadline", up.held.Load(), up.canceled.Load())
		}
	})
}

// @defer in a mutation is refused before it runs, as a validation
// failure with no upstream call and nothing written: gqlgen's executor
// delivers deferred fragments for queries only, and the mutation's
// deferred fields would answer null with no error. With "if: false" it
// does not defer and the mutation runs.
func TestDefer_MutationRefused(t *testing.T) {
	e := newEnv(t)
	var before struct {
		Chats struct{ Nodes []struct{ ID, Title string } }
	}
	e.ok(restclienttest.DemoKey, `{ chats(first: 1) { nodes { id title } } }`, nil, &before)
	chat := before.Chats.Nodes[0]
	const mutation = `mutation Rename($id: ID!, $later: Boolean!) { updateChat(input: {id: $id, title: "renamed"}) {
  chat { title ... @defer(if: $later) { messages(first: 5) { totalCount } } } } }`
	r := e.do(restclienttest.DemoKey, mutation, map[string]any{"id": chat.ID, "later": true})
	got := wantError(t, r, "GRAPHQL_VALIDATION_FAILED")
	if !strings.Contains(got.Message, "@defer") {
		t.Errorf("message %q, want it to name @defer", got.Message)
	}
	wantCalls(t, r, 0)
	var after struct {
		Chats struct{ Nodes []struct{ Title string } }
	}
	e.ok(restclienttest.DemoKey, `{ chats(first: 1) { nodes { title } } }`, nil, &after)
	if after.Chats.Nodes[0].Title != chat.Title {
		t.Errorf("title %q after the refused mutation, want %q unchanged", after.Chats.Nodes[0].Title, chat.Title)
	}

	var ran struct {
		UpdateChat struct {
			Chat struct {
				Title    string
				Messages *struct{ TotalCount int }
			}
		}
	}
	e.ok(restclienttest.DemoKey, mutation, map[string]any{"id": chat.ID, "later": false}, &ran)
	if c := ran.UpdateChat.Chat; c.Title != "renamed" || c.Messages == nil {
		t.Errorf("with if: false: %+v, want the chat renamed with its messages", c)
	}
}

// streamWithCap posts q as Apollo Client would to a facade over upstream
// whose answers are capped at maxBytes, and returns the recorded answer.
func streamWithCap(t *testing.T, upstream http.Handler, q string, maxBytes int) *httptest.ResponseRecorder {
	t.Helper()
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{
		Transport: facade.HandlerTransport{Handler: upstream},
	}))
	if err != nil {
		t.Fatal(err)
	}
	h := facade.New(facade.Config{Upstream: client, OperationTimeout: time.Hour, DisablePlayground: true,
		MaxResponseBytes: maxBytes, Log: slog.New(slog.DiscardHandler)})
	body, _ := json.Marshal(map[string]any{"query": q})
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", apolloAccept)
	req.Header.Set("X-Api-Key", restclienttest.DemoKey)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// streamedPart is a part of a streamed answer: its payload, and its bytes
// on the wire (its header, its payload and the delimiter after it).
type streamedPart struct {
	Data        json.RawMessage
	Errors      []struct{ Extensions map[string]any }
	HasNext     bool
	Incremental []struct {
		Data   json.RawMessage
		Label  string
		Path   []any
		Errors []struct{ Extensions map[string]any }
	}
}

// refusedAt returns the RESPONSE_TOO_LARGE error of p, nil when it has
// none.
func (p streamedPart) refused() map[string]any {
	errs := p.Errors
	if len(p.Incremental) == 1 {
		errs = p.Incremental[0].Errors
	}
	if len(errs) == 1 && errs[0].Extensions["code"] == "RESPONSE_TOO_LARGE" {
		return errs[0].Extensions
	}
	return nil
}

// readParts reads every part of a recorded multipart answer, to its
// closing boundary.
func readParts(t *testing.T, rec *httptest.ResponseRecorder) []streamedPart {
	t.Helper()
	_, params, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		t.Fatalf("Content-Type %q, want multipart: %s", rec.Header().Get("Content-Type"), rec.Body)
	}
	parts := multipart.NewReader(bytes.NewReader(rec.Body.Bytes()), params["boundary"])
	var all []streamedPart
	for {
		p, err := parts.NextPart()
		if err == io.EOF {
			return all
		}
		if err != nil {
			t.Fatalf("after %d parts: %v (want the closing boundary)", len(all), err)
		}
		var payload streamedPart
		if err := json.NewDecoder(p).Decode(&payload); err != nil {
			t.Fatalf("part %d: %v", len(all), err)
		}
		all = append(all, payload)
	}
}

// capDefer is three chats, each with its messages deferred.
const capDefer = `{ chats(first: 3) { nodes { title ... @defer(label: "m") { messages(first: 5) { nodes { content } } } } } }`

// The response cap bounds every byte of a streamed answer (the parts'
// headers, extensions and boundaries too, not only their data): the part
// that would pass it is replaced by RESPONSE_TOO_LARGE in its place, as
// the last part (hasNext false), and the closing boundary follows. (The
// cap counted the data alone, and parts kept coming after the refusal:
// under a 100 KB cap an answer streamed 1.2 MB.) Nothing of the operation
// stays parked (the bubble fails the test otherwise).
func TestDefer_ResponseCapCountsEveryByte(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The initial payload and one fragment fit (about 430 and 550
		// bytes), two fragments do not; the data of all four parts would
		// (under 1 KB).
		const maxBytes = 1200
		rec := streamWithCap(t, restclienttest.New(), capDefer, maxBytes)
		parts := readParts(t, rec)
		if len(parts) != 3 {
			t.Fatalf("%d parts, want the initial payload, a fragment and the refusal: %s", len(parts), rec.Body)
		}
		if !parts[0].HasNext || !parts[1].HasNext || parts[0].refused() != nil || parts[1].refused() != nil {
			t.Errorf("parts %+v, want the initial payload and a fragment, more to come", parts[:2])
		}
		last := parts[2]
		if last.HasNext || last.refused() == nil || len(last.Incremental) != 1 || last.Incremental[0].Label != "m" ||
			len(last.Incremental[0].Path) != 3 || string(last.Incremental[0].Data) != "null" {
			t.Fatalf("last part %+v, want RESPONSE_TOO_LARGE in the fragment's place, no data, hasNext false", last)
		}
		if got := last.refused()["max"]; got != float64(maxBytes) {
			t.Errorf("max %v, want %d", got, maxBytes)
		}
		// What was written before the refusal fits; the refusal itself
		// is a few hundred bytes.
		refusal := rec.Body.Len() - bytes.LastIndex(rec.Body.Bytes()[:rec.Body.Len()-len("\r\n---\r\n")], []byte("\r\n---\r\n"))
		if before := rec.Body.Len() - refusal; before > maxBytes || refusal > 600 {
			t.Errorf("%d bytes before the refusal, %d in it: want at most %d, then a short part", before, refusal, maxBytes)
		}
	})
}

// upstreamOneAtATime holds every read of one chat (a deferred fragment's
// call) until the test releases it, one by one, or its request is
// canceled; it counts the calls held and those canceled.
type upstreamOneAtATime struct {
	fake     *restclienttest.Server
	release  chan struct{} // a send lets one held call through
	held     atomic.Int64
	canceled atomic.Int64
}

func (u *upstreamOneAtATime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/v1/chats/") {
		u.held.Add(1)
		select {
		case <-u.release:
		case <-r.Context().Done():
			u.canceled.Add(1)
			return
		}
	}
	u.fake.ServeHTTP(w, r)
}

// Once the cap is reached, the work ends: the calls the other fragments
// wait for are canceled, as if the client had left, and the handler
// returns with the refusal as the last part, without waiting for them.
// (They went on, each fragment refused in turn, until the last.)
func TestDefer_ResponseCapEndsTheWork(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &upstreamOneAtATime{fake: restclienttest.New(), release: make(chan struct{})}
		done := make(chan *httptest.ResponseRecorder)
		// The initial payload fits (about 430 bytes), no fragment does.
		go func() { done <- streamWithCap(t, up, capDefer, 700) }()
		synctest.Wait() // the three fragments' calls are held
		if up.held.Load() != 3 {
			t.Fatalf("%d calls held, want one per chat", up.held.Load())
		}
		up.release <- struct{}{} // one fragment comes, past the cap
		rec := <-done
		synctest.Wait()
		if held, canceled := up.held.Load(), up.canceled.Load(); canceled != held-1 {
			t.Errorf("%d of the %d other held calls canceled once the cap was reached, want all", canceled, held-1)
		}
		parts := readParts(t, rec)
		if len(parts) != 2 || parts[0].refused() != nil || parts[1].refused() == nil || parts[1].HasNext {
			t.Fatalf("parts %+v, want the initial payload, then the refusal, last", parts)
		}
	})
}

// An initial payload past the cap is refused in its place, as the only
// part (hasNext false), and the fragments' calls are canceled: nothing
// stays parked (the bubble fails the test otherwise).
func TestDefer_ResponseCapOnTheInitialPayload(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &upstreamOneAtATime{fake: restclienttest.New(), release: make(chan struct{})}
		rec := streamWithCap(t, up, deferQuery, 50)
		parts := readParts(t, rec)
		if len(parts) != 1 || string(parts[0].Data) != "null" || parts[0].refused() == nil || parts[0].HasNext {
			t.Fatalf("parts %+v, want one: data null, RESPONSE_TOO_LARGE and hasNext false", parts)
		}
		synctest.Wait()
		if up.canceled.Load() != up.held.Load() {
			t.Errorf("%d calls held, %d canceled", up.held.Load(), up.canceled.Load())
		}
	})
}

// A query holding @defer answered in one piece is logged once, with its
// calls, as any operation (gqlgen's initial payload alone, "hasNext":
// true, was never logged nor recorded: its last part never came).
func TestDefer_OnePieceLoggedOnce(t *testing.T) {
	var logged syncBuffer
	e := newEnv(t, withConfig(func(c *facade.Config) { c.Log = slog.New(slog.NewJSONHandler(&logged, nil)) }))
	r := e.do(restclienttest.DemoKey, deferQuery, nil)
	if len(r.errs) > 0 {
		t.Fatalf("errors %v", r.errs)
	}
	var lines []map[string]any
	for line := range strings.Lines(logged.String()) {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "graphql operation" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || lines[0]["upstreamCalls"] != float64(r.calls) || lines[0]["outcome"] != "ok" {
		t.Errorf("operation log lines %v, want one, ok, with upstreamCalls %d", lines, r.calls)
	}
}

// stalledClient is a connection whose client read the initial payload
// and then stopped reading: every later write blocks, as on a full TCP
// buffer, until the write deadline set on it passes (forever without
// one: the bubble then fails the test).
type stalledClient struct {
	header   http.Header
	mu       sync.Mutex
	deadline time.Time
	writes   int
}

func (c *stalledClient) Header() http.Header { return c.header }
func (c *stalledClient) WriteHeader(int)     {}
func (c *stalledClient) Flush()              {}

func (c *stalledClient) SetWriteDeadline(d time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = d
	return nil
}

func (c *stalledClient) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writes++
	first, d := c.writes == 1, c.deadline
	c.mu.Unlock()
	if first {
		return len(b), nil
	}
	if d.IsZero() {
		select {} // the buffer never drains
	}
	<-time.After(time.Until(d)) // fake time: the bubble's clock
	return 0, os.ErrDeadlineExceeded
}

// A client that stops reading mid-stream is let go shortly after the
// operation's deadline (streamWriteMargin, 10 s): the blocked write
// fails, the fragments are drained and the handler returns, though no
// server WriteTimeout is set (an embedding server may have none).
func TestDefer_StalledClientLetGoAfterTheDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		up := &heldChats{fake: restclienttest.New(), release: make(chan struct{})}
		const timeout = 300 * time.Millisecond
		h := inBubble(t, up, timeout)
		body, _ := json.Marshal(map[string]any{"query": deferQuery})
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", apolloAccept)
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		start := time.Now()
		h.ServeHTTP(&stalledClient{header: http.Header{}}, req)
		if took := time.Since(start); took > timeout+10*time.Second {
			t.Errorf("the handler returned %v after the request, want at most the deadline plus 10s", took)
		}
	})
}
