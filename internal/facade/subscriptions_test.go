package facade_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/suregql/suregql/internal/edge/gqlhttp"
	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// The subscription tests run in a synctest bubble: the facade is served
// by an http.Server over in-memory connections (net.Pipe), its upstream is
// the fake in the same process, and the fake's assistant replies and
// imports move on the bubble's clock, which advances only when every
// goroutine waits. Nothing sleeps; the poll schedule runs as in
// production, on fake time.

// pipeListener is a net.Listener of in-memory connections.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// subsEnv is a facade served in a bubble, and its fake upstream.
type subsEnv struct {
	t      *testing.T
	fake   *restclienttest.Server
	client *http.Client
	// calls counts the upstream's requests by method and path.
	mu    sync.Mutex
	calls map[string]int
	total atomic.Int64
	// slow, when set, is how long the upstream takes to answer a request
	// of the key (on the bubble's clock).
	slow func(key string) time.Duration
}

// newSubsEnv serves a facade configured by cfg (its Upstream set here)
// until the test ends. Call it inside the bubble.
func newSubsEnv(t *testing.T, cfg facade.Config) *subsEnv {
	t.Helper()
	e := &subsEnv{t: t, fake: restclienttest.New(), calls: map[string]int{}}
	e.fake.SetAssistant(3 * time.Second)
	counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.calls[r.Method+" "+r.URL.Path]++
		slow := e.slow
		e.mu.Unlock()
		e.total.Add(1)
		if slow != nil {
			time.Sleep(slow(r.Header.Get("X-Api-Key")))
		}
		e.fake.ServeHTTP(w, r)
	})
	up, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{Transport: facade.HandlerTransport{Handler: counting}}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream = up
	cfg.DisablePlayground = true
	cfg.Log = slog.New(slog.DiscardHandler)
	ln := newPipeListener()
	srv := &http.Server{Handler: facade.New(cfg)}
	go func() { _ = srv.Serve(ln) }()
	tr := &http.Transport{DialContext: ln.dial}
	e.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
	})
	return e
}

// dialWS opens a graphql-transport-ws WebSocket to the facade with header
// on its upgrade request, sends connection_init with payload (nil: none)
// and waits for connection_ack. The connection closes with the test.
func (e *subsEnv) dialWS(ctx context.Context, header http.Header, payload map[string]any) *websocket.Conn {
	e.t.Helper()
	c, _, err := websocket.Dial(ctx, //nolint:bodyclose // a WebSocket's upgrade answer has no body to close
		"ws://suregql.test/graphql", &websocket.DialOptions{
			HTTPClient: e.client, Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header,
		})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.CloseNow() })
	init := map[string]any{"type": "connection_init"}
	if payload != nil {
		init["payload"] = payload
	}
	if err := wsjson.Write(ctx, c, init); err != nil {
		e.t.Fatal(err)
	}
	var ack struct {
		Type string `json:"type"`
	}
	if err := wsjson.Read(ctx, c, &ack); err != nil || ack.Type != "connection_ack" {
		e.t.Fatalf("got %q %v, want connection_ack", ack.Type, err)
	}
	return c
}

// readsOf returns the upstream GETs of path so far.
func (e *subsEnv) readsOf(path string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[http.MethodGet+" "+path]
}

// post runs a query or mutation as key and returns its data.
func (e *subsEnv) post(key, query string, vars map[string]any) map[string]any {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://suregql.test/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Fatal(err)
	}
	if len(out.Errors) > 0 {
		e.t.Fatalf("errors: %v", out.Errors)
	}
	return out.Data
}

// newChat creates a chat of key without a message and returns its id.
func (e *subsEnv) newChat(key string) string {
	e.t.Helper()
	d := e.post(key, `mutation { createChat(input: {title: "Budget"}) { chat { id } } }`, nil)
	return d["createChat"].(map[string]any)["chat"].(map[string]any)["id"].(string)
}

// send sends a message to a chat through the facade, as the demo key.
func (e *subsEnv) send(chatID, content string) {
	const key = restclienttest.DemoKey
	e.t.Helper()
	e.post(key, `mutation($id: ID!, $c: String!) { sendChatMessage(input: {chatId: $id, content: $c}) { message { id } } }`,
		map[string]any{"id": chatID, "c": content})
}

// sseEvent is one event of a graphql-sse stream.
type sseEvent struct {
	event string
	data  map[string]any
}

// sseStream is a graphql-sse subscription.
type sseStream struct {
	events <-chan sseEvent
	cancel func()
}

// subscribeSSE opens a graphql-sse subscription (distinct connections
// mode) as key.
func (e *subsEnv) subscribeSSE(key, query string, vars map[string]any) *sseStream {
	e.t.Helper()
	return openSSE(e.t, e.client, "http://suregql.test/graphql", key, query, vars)
}

// openSSE opens a graphql-sse subscription at endpoint with client.
func openSSE(t *testing.T, client *http.Client, endpoint, key, query string, vars map[string]any) *sseStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Api-Key", key)
	resp, err := client.Do(req) //nolint:bodyclose // closed by the reader below, or here on a refusal
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		cancel()
		t.Fatalf("answer %d %s: %s", resp.StatusCode, ct, b)
	}
	events := make(chan sseEvent, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && ev.event != "":
				events <- ev
				ev = sseEvent{}
			}
		}
	}()
	s := &sseStream{events: events, cancel: cancel}
	t.Cleanup(cancel)
	return s
}

// next returns the stream's next event; ok is false at its end.
func (s *sseStream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(time.Hour):
		t.Fatal("no event within an hour of fake time")
		return sseEvent{}, false
	}
}

const chatSubscription = `subscription($id: ID!) { chatMessageAdded(chatId: $id) { id role content model } }`

// awaitReply reads messages from next until the assistant's, and returns
// the messages read.
func awaitReply(t *testing.T, next func() (map[string]any, bool)) []map[string]any {
	t.Helper()
	var got []map[string]any
	for {
		m, ok := next()
		if !ok {
			t.Fatalf("the stream ended before the reply; got %v", got)
		}
		got = append(got, m)
		if m["role"] == "assistant" {
			return got
		}
	}
}

// An SSE subscriber receives the message sent through the facade and the
// assistant's reply, with its content and model.
func TestSubscriptions_SSEReceivesReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		chat := e.newChat(restclienttest.DemoKey)
		s := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait() // the subscription holds the chat as it was
		e.send(chat, "How much did I spend on food?")
		got := awaitReply(t, func() (map[string]any, bool) {
			ev, ok := s.next(t)
			if !ok || ev.event != "next" {
				return nil, false
			}
			return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
		})
		if len(got) != 2 || got[0]["role"] != "user" || got[0]["content"] != "How much did I spend on food?" {
			t.Errorf("messages: %v, want the user's then the assistant's", got)
		}
		reply := got[len(got)-1]
		if !strings.HasPrefix(reply["content"].(string), `You asked: "How much did I spend on food?"`) || reply["model"] == nil {
			t.Errorf("reply: %v, want its content and model", reply)
		}
		s.cancel()
	})
}

// A WebSocket subscriber (graphql-transport-ws, the key in
// connection_init's payload as a browser sends it) receives the reply.
func TestSubscriptions_WebSocketReceivesReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		chat := e.newChat(restclienttest.DemoKey)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := e.dialWS(ctx, nil, map[string]any{"headers": map[string]any{"X-Api-Key": restclienttest.DemoKey}})
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		var msg struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		must(wsjson.Write(ctx, c, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": chatSubscription, "variables": map[string]any{"id": chat},
		}}))
		synctest.Wait()
		e.send(chat, "And on rent?")
		got := awaitReply(t, func() (map[string]any, bool) {
			for {
				msg.Payload = nil
				if err := wsjson.Read(ctx, c, &msg); err != nil {
					return nil, false
				}
				switch msg.Type {
				case "ping", "pong", "ka":
					continue
				case "next":
					var p struct {
						Data struct {
							M map[string]any `json:"chatMessageAdded"`
						} `json:"data"`
					}
					must(json.Unmarshal(msg.Payload, &p))
					return p.Data.M, true
				}
				t.Fatalf("got %s %s", msg.Type, msg.Payload)
			}
		})
		if reply := got[len(got)-1]; !strings.HasPrefix(reply["content"].(string), `You asked: "And on rent?"`) {
			t.Errorf("reply: %v", reply)
		}
		must(wsjson.Write(ctx, c, map[string]any{"id": "1", "type": "complete"}))
		must(c.Close(websocket.StatusNormalClosure, ""))
	})
}

// Three subscribers of one chat (three tabs of a user) cost the upstream
// what one does: one poll loop per key and chat.
func TestSubscriptions_ThreeSubscribersCostOne(t *testing.T) {
	run := func(subscribers int) (chatReads int) {
		synctest.Test(t, func(t *testing.T) {
			e := newSubsEnv(t, facade.Config{})
			chat := e.newChat(restclienttest.DemoKey)
			var streams []*sseStream
			for range subscribers {
				streams = append(streams, e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat}))
			}
			synctest.Wait()
			e.send(chat, "Three tabs")
			for _, s := range streams {
				awaitReply(t, func() (map[string]any, bool) {
					ev, ok := s.next(t)
					if !ok || ev.event != "next" {
						return nil, false
					}
					return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
				})
			}
			chatReads = e.readsOf("/api/v1/chats/" + chat)
			for _, s := range streams {
				s.cancel()
			}
		})
		return chatReads
	}
	one, three := run(1), run(3)
	if one == 0 || three != one {
		t.Errorf("chat reads: %d with three subscribers, %d with one; want the same", three, one)
	}
	t.Logf("chat reads until the reply: %d", one)
}

// A subscription's first read is its starting state, answered as a query
// of it would be: a chat the page just read costs no second call.
func TestSubscriptions_FirstReadFromFreshness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		chat := e.newChat(restclienttest.DemoKey)
		e.post(restclienttest.DemoKey, `query($id: ID!) { chat(id: $id) { messages(last: 20) { nodes { id } } } }`, map[string]any{"id": chat})
		before := e.readsOf("/api/v1/chats/" + chat)
		s := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		if after := e.readsOf("/api/v1/chats/" + chat); after != before {
			t.Errorf("subscribing to a chat read a moment ago cost %d reads, want none", after-before)
		}
		e.send(chat, "Still there?")
		awaitReply(t, func() (map[string]any, bool) {
			ev, ok := s.next(t)
			if !ok || ev.event != "next" {
				return nil, false
			}
			return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
		})
		s.cancel()
	})
}

// An import subscription pushes the import at the start and at each
// change of status, and completes when the import is terminal.
func TestSubscriptions_ImportCompletesWhenTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		id := e.fake.AddProgressingImport(restclienttest.DemoKey, 10*time.Second)
		s := e.subscribeSSE(restclienttest.DemoKey, `subscription($id: ID!) { importUpdated(id: $id) { id status statusDetail { terminal } } }`, map[string]any{"id": id})
		var statuses []string
		for {
			ev, ok := s.next(t)
			if !ok {
				t.Fatal("the stream ended without a complete event")
			}
			if ev.event == "complete" {
				break
			}
			imp := ev.data["data"].(map[string]any)["importUpdated"].(map[string]any)
			statuses = append(statuses, imp["status"].(string))
		}
		if strings.Join(statuses, ",") != "pending,importing,complete" {
			t.Errorf("statuses: %v, want pending, importing, complete", statuses)
		}
		// The first read, then 1, 2, 4 and 8 s later (importing by then),
		// then 16 s later (complete): the backoff goes on through a change
		// of status, as the next step is no nearer for it.
		if n := e.readsOf("/api/v1/imports/" + id); n > 6 {
			t.Errorf("%d reads of the import over 20 s, want at most 6", n)
		}
	})
}

// Subscriptions past the key's limit, or the server's, are refused with
// SUBSCRIPTION_LIMIT_EXCEEDED and no upstream call.
func TestSubscriptions_Limits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{MaxSubscriptionsPerKey: 2, MaxSubscriptions: 3})
		chat := e.newChat(restclienttest.DemoKey)
		for range 2 {
			e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		}
		other := e.newChat(restclienttest.OtherFamilyKey)
		e.subscribeSSE(restclienttest.OtherFamilyKey, chatSubscription, map[string]any{"id": other})
		synctest.Wait()
		before := e.total.Load()
		refused := func(key, chat, limit string) {
			t.Helper()
			s := e.subscribeSSE(key, chatSubscription, map[string]any{"id": chat})
			ev, _ := s.next(t)
			errs, _ := ev.data["errors"].([]any)
			if len(errs) != 1 {
				t.Fatalf("event %v, want one error", ev)
			}
			ext := errs[0].(map[string]any)["extensions"].(map[string]any)
			if ext["code"] != "SUBSCRIPTION_LIMIT_EXCEEDED" || ext["limit"] != limit {
				t.Errorf("extensions %v, want SUBSCRIPTION_LIMIT_EXCEEDED %s", ext, limit)
			}
			if ev, ok := s.next(t); ok && ev.event != "complete" {
				t.Errorf("then %v, want complete", ev)
			}
		}
		refused(restclienttest.DemoKey, chat, "perKey")
		refused(restclienttest.ReadOnlyKey, chat, "total")
		if n := e.total.Load() - before; n != 0 {
			t.Errorf("%d upstream calls for refused subscriptions, want 0", n)
		}
	})
}

// A key's poll loop polls with that key only: a second key subscribing
// to the same chat id has a loop of its own, with its own key (here
// NOT_FOUND: the chat is not its user's, one call), and the first key's
// loop never reads for it.
func TestSubscriptions_KeysPollForThemselves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		chat := e.newChat(restclienttest.DemoKey)
		mine := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		s := e.subscribeSSE(restclienttest.OtherFamilyKey, chatSubscription, map[string]any{"id": chat})
		ev, _ := s.next(t)
		errs, _ := ev.data["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "NOT_FOUND" {
			t.Fatalf("event %v, want NOT_FOUND", ev)
		}
		e.send(chat, "mine")
		awaitReply(t, func() (map[string]any, bool) {
			ev, ok := mine.next(t)
			if !ok || ev.event != "next" {
				return nil, false
			}
			return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
		})
		others := 0
		for _, r := range e.fake.Requests() {
			if strings.HasPrefix(r.Path, "/api/v1/chats/"+chat) && r.APIKey != restclienttest.DemoKey {
				others++
				if r.Status != http.StatusNotFound {
					t.Errorf("the other key read the chat: %+v", r)
				}
			}
		}
		if others != 1 {
			t.Errorf("%d reads of the chat with the other key, want 1 (its own subscription's, NOT_FOUND)", others)
		}
	})
}

// A limited key's subscription never spends the calls it keeps for page
// views: with 12 calls an hour (a reserve of 3), the reply still arrives,
// and over the rest of the hour the loop stops polling at the reserve;
// no call is refused by the upstream.
func TestSubscriptions_KeepTheKeysReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		e.fake.SetRateLimit(restclienttest.DemoKey, 12)
		chat := e.newChat(restclienttest.DemoKey)
		s := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		e.send(chat, "Within my quota?")
		awaitReply(t, func() (map[string]any, bool) {
			ev, ok := s.next(t)
			if !ok || ev.event != "next" {
				return nil, false
			}
			return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
		})
		// The bubble's clock: the rest of the upstream's hour passes at
		// once when every goroutine waits.
		time.Sleep(55 * time.Minute)
		calls, refused := 0, 0
		for _, r := range e.fake.Requests() {
			calls++
			if r.Status == http.StatusTooManyRequests {
				refused++
			}
		}
		t.Logf("%d calls in the hour", calls)
		// The reserve shrinks as the reset nears, to a twentieth of the
		// limit, at least one call.
		if calls > 12-1 || refused > 0 {
			t.Errorf("%d calls in the hour (%d refused), want at most 11 (the limit less the reserve's floor) and none refused", calls, refused)
		}
		s.cancel()
	})
}

// A WebSocket from a page of an origin that is neither the server's nor
// one of -cors-origins is refused with 403 FORBIDDEN before any GraphQL.
func TestSubscriptions_WebSocketOtherOriginRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{CORSOrigins: []string{"https://app.example.com"}})
		ctx := context.Background()
		_, resp, err := websocket.Dial(ctx, "ws://suregql.test/graphql", &websocket.DialOptions{
			HTTPClient: e.client, Subprotocols: []string{"graphql-transport-ws"},
			HTTPHeader: http.Header{"Origin": {"https://evil.example.com"}},
		})
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("dial: %v, %v; want 403", err, resp)
		}
		defer resp.Body.Close()
		var body struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "FORBIDDEN" {
			t.Errorf("body: %+v, want FORBIDDEN", body)
		}
		if n := e.total.Load(); n != 0 {
			t.Errorf("%d upstream calls, want 0", n)
		}
	})
}

// When the server starts to drain (SIGTERM), every subscription completes,
// so that the server's shutdown is not held by them.
func TestSubscriptions_CompleteOnDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		draining := make(chan struct{})
		e := newSubsEnv(t, facade.Config{Draining: draining})
		chat := e.newChat(restclienttest.DemoKey)
		s := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		close(draining)
		ev, ok := s.next(t)
		if !ok || ev.event != "complete" {
			t.Fatalf("got %v %v, want the complete event", ev, ok)
		}
		if _, ok := s.next(t); ok {
			t.Error("the stream stays open after complete")
		}
	})
}

// A WebSocket's operations are held to the trusted documents as a POST's
// are: with -allow-arbitrary-documents=false, a document sent as text is
// refused (PERSISTED_DOCUMENT_REQUIRED), at no call.
func TestSubscriptions_WebSocketTrustedDocumentsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		docs, err := gqlhttp.NewDocuments(map[string]string{"q1": "{ __typename }"}, false)
		if err != nil {
			t.Fatal(err)
		}
		e := newSubsEnv(t, facade.Config{Documents: docs})
		ctx := context.Background()
		c := e.dialWS(ctx, http.Header{"X-Api-Key": {restclienttest.DemoKey}}, nil)
		var msg struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := wsjson.Write(ctx, c, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": chatSubscription, "variables": map[string]any{"id": "00000000-0000-4000-8000-000000000000"},
		}}); err != nil {
			t.Fatal(err)
		}
		var payload []byte
		for msg.Type != "next" && msg.Type != "error" {
			if err := wsjson.Read(ctx, c, &msg); err != nil {
				t.Fatal(err)
			}
			payload = msg.Payload
		}
		if !strings.Contains(string(payload), `"PERSISTED_DOCUMENT_REQUIRED"`) {
			t.Errorf("%s %s, want PERSISTED_DOCUMENT_REQUIRED", msg.Type, payload)
		}
		if n := e.total.Load(); n != 0 {
			t.Errorf("%d upstream calls, want 0", n)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
}
