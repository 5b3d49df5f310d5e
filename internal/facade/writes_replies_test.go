package facade_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// After sendChatMessage a chat frontend reads the chat until the
// assistant's reply appears: no cached or shared read may hide it.

const newestMessages = `query($id: ID!) { chat(id: $id) { messageCount messages(last: 5) { nodes { role content } } } }`

type newestAnswer struct {
	Chat struct {
		MessageCount int
		Messages     struct {
			Nodes []struct{ Role, Content string }
		}
	}
}

// newest returns the role and content of the newest message of a.
func (a newestAnswer) newest() (role, content string) {
	n := a.Chat.Messages.Nodes
	if len(n) == 0 {
		return "", ""
	}
	return n[len(n)-1].Role, n[len(n)-1].Content
}

// A chat frontend sends a message, then reads the chat until the
// assistant's reply appears (the fake's clock, moved by hand, makes it due:
// nothing sleeps). With the answer cache on: the reads before the send
// (cached) are not reused after it; while the reply is pending every read
// asks the server; the first read once it is due sees it.
func TestSendChatMessage_ReadUntilTheReplyAppears(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testSendThenRead, withAnswerCache)
}

func testSendThenRead(t *testing.T, e *env, v restclienttest.Version) {
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e.upstream.SetClock(clock.now)
	const delay = 30 * time.Second
	e.upstream.SetAssistant(delay)
	key := restclienttest.DemoKey
	chat := chatByTitle(t, e, key, "Budget check for January")
	vars := map[string]any{"id": chat.ID}
	read := func(calls int) newestAnswer {
		t.Helper()
		var out newestAnswer
		r := e.ok(key, newestMessages, vars, &out)
		wantCalls(t, r, calls)
		return out
	}

	// Before the send: read, then answered from the cache.
	read(1)
	if got := read(0); got.Chat.MessageCount != chat.MessageCount {
		t.Fatalf("messageCount = %d, want %d", got.Chat.MessageCount, chat.MessageCount)
	}

	const question = "Did I stay under budget on dining out?"
	var sent sendPayload
	r := e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": question}}, &sent)
	wantCalls(t, r, 1)
	if sent.SendChatMessage == nil || sent.SendChatMessage.Message == nil {
		t.Fatalf("sendChatMessage = %s", r.data)
	}

	// Pending: each read asks the server (1 call), none is kept.
	var elapsed time.Duration
	for _, step := range []time.Duration{0, 0, delay / 2, delay/2 - time.Second} {
		clock.advance(step)
		elapsed += step
		got := read(1)
		if role, content := got.newest(); role != "user" || content != question || got.Chat.MessageCount != chat.MessageCount+1 {
			t.Fatalf("%v after the send: newest %s %q of %d messages, want the question, newest of %d", elapsed, role, content, got.Chat.MessageCount, chat.MessageCount+1)
		}
	}

	// Due: the very next read sees the reply.
	clock.advance(time.Second)
	got := read(1)
	role, content := got.newest()
	if role != "assistant" || !strings.Contains(content, question) || got.Chat.MessageCount != chat.MessageCount+2 {
		t.Fatalf("once the reply is due: newest %s %q of %d messages, want the assistant's reply to %q, newest of %d",
			role, content, got.Chat.MessageCount, question, chat.MessageCount+2)
	}
	if n := got.Chat.Messages.Nodes; len(n) < 2 || n[len(n)-2].Role != "user" || n[len(n)-2].Content != question {
		t.Errorf("messages = %+v, want the question just before the reply", n)
	}
	// The reply ended the hold the send put on the key's chats: the chat
	// is kept again (here at once: its reply, by the fake's clock, is
	// older than restclient.ReplyWindow, the time Sure may still be
	// writing into it), and the next read is answered without a call.
	if again := read(0); !slices.Equal(again.Chat.Messages.Nodes, got.Chat.Messages.Nodes) {
		t.Errorf("read again = %+v, want %+v", again.Chat.Messages.Nodes, got.Chat.Messages.Nodes)
	}
}

// The reply must not be hidden either by what other reads of the chat
// cached while it was pending: the chat list (its message count and last
// message time) and a page of a long chat that does not hold the newest
// message (its message count). A chat frontend shows both.
func TestSendChatMessage_ReplyNotHiddenByOtherCachedReads(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testReplyNotHiddenByOtherCachedReads, withAnswerCache)
}

func testReplyNotHiddenByOtherCachedReads(t *testing.T, e *env, v restclienttest.Version) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	e.upstream.SetClock(clock.now)
	const delay = 30 * time.Second
	e.upstream.SetAssistant(delay)
	key := restclienttest.DemoKey
	long := longDemoChat(t, e)
	const list = `{ chats(first: 10) { nodes { id messageCount lastMessageAt } } }`
	const head = `query($id: ID!) { chat(id: $id) { messageCount messages(first: 3) { nodes { role } } } }`
	readBoth := func() (listed chatNode, count int) {
		t.Helper()
		var l struct{ Chats chatConn }
		e.ok(key, list, nil, &l)
		for _, c := range l.Chats.Nodes {
			if c.ID == long.ID {
				listed = c
			}
		}
		var h struct{ Chat chatNode }
		e.ok(key, head, map[string]any{"id": long.ID}, &h)
		return listed, h.Chat.MessageCount
	}

	e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": long.ID, "content": "And in January 2026?"}}, nil)
	// Read while the reply is pending (the list and the chat's first page).
	listed, count := readBoth()
	if listed.MessageCount != 121 || count != 121 {
		t.Fatalf("while pending: listed %d, counted %d messages, want 121", listed.MessageCount, count)
	}

	clock.advance(delay)
	replied := start.Add(delay).Format(time.RFC3339)
	listed, count = readBoth()
	if listed.MessageCount != 122 || listed.LastMessageAt == nil || *listed.LastMessageAt != replied {
		t.Errorf("DEFECT: once the reply is due, chats lists the chat with %d messages, the last at %v; want 122, the last at %s: "+
			"the list page read while the reply was pending was cached, and hides the reply for the cache's TTL",
			listed.MessageCount, showPtr(listed.LastMessageAt), replied)
	}
	if count != 122 {
		t.Errorf("DEFECT: once the reply is due, chat(id) { messageCount messages(first: 3) } counts %d messages, want 122: "+
			"the chat's first page (which does not hold the newest message) was cached while the reply was pending, and hides it", count)
	}
}

// holdOneShow holds the answer to the next GET of a chat (once armed): the
// fake computes it when the request arrives, and it is written only when
// the test releases it. The other requests pass.
type holdOneShow struct {
	armed   atomic.Bool
	arrived chan struct{}
	release chan struct{}
}

func newHoldOneShow() *holdOneShow {
	return &holdOneShow{arrived: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdOneShow) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/v1/chats/") || !h.armed.CompareAndSwap(true, false) {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r) // read now, before what the test does next
		close(h.arrived)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// A read of the chat in flight when a message is sent was read before the
// send: the same read sent after the send must not share its execution
// (nor its GET), and sees the message. The read in flight answers what it
// read.
func TestSendChatMessage_ReadInFlightIsNotShared(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		t.Run(v.String(), func(t *testing.T) {
			hold := newHoldOneShow()
			// The held read must not time out and be retried meanwhile.
			e := newEnv(t, withAnswerCache, withTimeout(time.Minute), withUpstream(restclienttest.WithVersion(v)), withUpstreamWrapper(hold.wrap))
			key := restclienttest.DemoKey
			chat := chatByTitle(t, e, key, "Budget check for January")
			vars := map[string]any{"id": chat.ID}

			hold.armed.Store(true)
			type answer struct {
				data json.RawMessage
				err  error
			}
			first := make(chan answer, 1)
			go func() {
				data, _, err := e.client(key).ExecRawWithExtensions(t.Context(), newestMessages, vars)
				first <- answer{data, err}
			}()
			safety := time.NewTimer(10 * time.Second) // only a failing facade waits this long
			defer safety.Stop()
			select {
			case <-hold.arrived:
			case <-safety.C:
				t.Fatal("the first read never reached the upstream")
			}

			const question = "Is this read after the send?"
			var sent sendPayload
			r := e.ok(key, sendMessage, map[string]any{"in": map[string]any{"chatId": chat.ID, "content": question}}, &sent)
			wantCalls(t, r, 1)

			// The same request, after the send, while the first is in flight.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			before := e.upstream.Calls()
			data, _, err := e.client(key).ExecRawWithExtensions(ctx, newestMessages, vars)
			calls := e.upstream.Calls() - before
			close(hold.release)
			if err != nil {
				t.Fatalf("the read after the send: %v (it waited for the read in flight before the send?)", err)
			}
			var after newestAnswer
			if err := json.Unmarshal(data, &after); err != nil {
				t.Fatal(err)
			}
			if role, content := after.newest(); role != "user" || content != question || calls != 1 {
				t.Errorf("the read after the send: newest %s %q, %d calls; want the question, read with 1 call of its own", role, content, calls)
			}

			a := <-first
			var old newestAnswer
			if a.err != nil || json.Unmarshal(a.data, &old) != nil {
				t.Fatalf("the read in flight: %v %s", a.err, a.data)
			}
			if _, content := old.newest(); content == question || old.Chat.MessageCount != chat.MessageCount {
				t.Errorf("the read in flight = %s, want what it read before the send", a.data)
			}
		})
	}
}
