package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket/wsjson"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
)

// activeSubscriptions reads suregql_subscriptions_active, all resources.
func activeSubscriptions(t *testing.T, m *metrics.Metrics) float64 {
	return gaugeSum(t, m, "suregql_subscriptions_active")
}

// gaugeSum reads the gauge named name, summed over its labels (0 when it
// has no series yet).
func gaugeSum(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, x := range mf.GetMetric() {
				n += x.GetGauge().GetValue()
			}
		}
	}
	return n
}

// A key revoked while it has a subscription open (the upstream now
// answers it 401) ends the subscription at the first poll that is
// refused, and says why: over SSE, a last event with an UNAUTHENTICATED
// error, then complete (not a complete alone, which reads as a
// subscription done). The loop does not go on polling with a key Sure
// rejects (every minute, once RejectedKeys forgets it), and the
// subscription is no longer counted.
func TestSubscriptions_RevokedKeyEndsTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New()
		e := newSubsEnv(t, facade.Config{Metrics: m})
		const key = "revoked-soon"
		e.fake.AddKey(key, restclienttest.DemoKey)
		chat := e.newChat(key)
		s := e.subscribeSSE(key, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		e.fake.RevokeKey(key)
		var codes []any
		for {
			ev, ok := s.next(t)
			if !ok || ev.event == "complete" {
				break
			}
			for _, err := range ev.data["errors"].([]any) {
				codes = append(codes, err.(map[string]any)["extensions"].(map[string]any)["code"])
			}
		}
		if len(codes) != 1 || codes[0] != "UNAUTHENTICATED" {
			t.Errorf("the stream ended with errors %v, want one UNAUTHENTICATED, then complete", codes)
		}
		time.Sleep(3 * time.Hour) // the rest of the test's fake time: no more polls
		synctest.Wait()
		rejected := 0
		for _, r := range e.fake.Requests() {
			if r.Status == http.StatusUnauthorized {
				rejected++
			}
		}
		if rejected != 1 {
			t.Errorf("%d calls answered 401 in 3 hours, want 1 (the poll that found the key revoked)", rejected)
		}
		if n := activeSubscriptions(t, m); n != 0 {
			t.Errorf("suregql_subscriptions_active = %v, want 0", n)
		}
	})
}

// Over a WebSocket, a subscription ended by its key's revocation ends
// with graphql-transport-ws's error message for its id, UNAUTHENTICATED,
// and no complete (an error ends the operation); the connection stays
// open for the client to say what it does next.
func TestSubscriptions_WebSocketRevokedKeyEndsWithAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{StreamKeepAlive: 24 * time.Hour})
		const key = "revoked-soon"
		e.fake.AddKey(key, restclienttest.DemoKey)
		chat := e.newChat(key)
		ctx := context.Background()
		c := e.dialWS(ctx, nil, map[string]any{"X-Api-Key": key})
		if err := wsjson.Write(ctx, c, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": chatSubscription, "variables": map[string]any{"id": chat},
		}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		e.fake.RevokeKey(key)
		var msg wsMsg
		if err := wsjson.Read(ctx, c, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type != "error" || msg.ID != "1" || !strings.Contains(string(msg.Payload), `"code":"UNAUTHENTICATED"`) {
			t.Fatalf("got %s %s %s, want an error message for 1 with UNAUTHENTICATED", msg.Type, msg.ID, msg.Payload)
		}
		// Nothing follows for 1: a ping of the client is answered next.
		if err := wsjson.Write(ctx, c, map[string]any{"type": "ping"}); err != nil {
			t.Fatal(err)
		}
		if err := wsjson.Read(ctx, c, &msg); err != nil || msg.Type != "pong" {
			t.Errorf("then %s %s %s (%v), want pong: nothing more of the operation", msg.Type, msg.ID, msg.Payload, err)
		}
	})
}

// wsMsg is a graphql-transport-ws message as a test reads it.
type wsMsg struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// An SSE subscriber that stops reading (its connection open, its window
// full) is let go once a write has waited twice the keep-alive interval:
// its subscription is released (no longer counted, its loop stops
// polling) instead of being held for as long as the peer keeps the
// connection.
func TestSubscriptions_SSEStalledReaderReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New()
		// No keep-alive within the test: a stalled write is what ends it.
		e := newSubsEnv(t, facade.Config{Metrics: m, StreamKeepAlive: 24 * time.Hour})
		chat := e.newChat(restclienttest.DemoKey)
		body, _ := json.Marshal(map[string]any{"query": chatSubscription, "variables": map[string]any{"id": chat}})
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://suregql.test/graphql", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Api-Key", restclienttest.DemoKey)
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close() // never read: the subscriber has stalled
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 1 {
			t.Fatalf("suregql_subscriptions_active = %v once subscribed, want 1", n)
		}
		// Messages and their replies (each echoing its message) fill the
		// connection's buffers.
		for i := range 6 {
			e.send(chat, fmt.Sprintf("%d %s", i, strings.Repeat("x", 3000)))
			time.Sleep(10 * time.Second)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 0 {
			t.Errorf("suregql_subscriptions_active = %v an hour after the subscriber stalled, want 0", n)
		}
	})
}

// A WebSocket subscriber that stops reading is let go as an SSE one is,
// once a write has waited 30 s: its subscriptions are released.
func TestSubscriptions_WebSocketStalledReaderReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New()
		e := newSubsEnv(t, facade.Config{Metrics: m, StreamKeepAlive: 24 * time.Hour})
		chat := e.newChat(restclienttest.DemoKey)
		ctx := context.Background()
		c := e.dialWS(ctx, nil, map[string]any{"apiKey": restclienttest.DemoKey})
		if err := wsjson.Write(ctx, c, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": chatSubscription, "variables": map[string]any{"id": chat},
		}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 1 {
			t.Fatalf("suregql_subscriptions_active = %v once subscribed, want 1", n)
		}
		// From here on the client reads nothing.
		for i := range 6 {
			e.send(chat, fmt.Sprintf("%d %s", i, strings.Repeat("x", 3000)))
			time.Sleep(10 * time.Second)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 0 {
			t.Errorf("suregql_subscriptions_active = %v an hour after the subscriber stalled, want 0", n)
		}
	})
}

// The per-key limit counts each operation of one WebSocket, and a
// WebSocket closed abruptly releases every slot it held: the key may
// subscribe again at once.
func TestSubscriptions_WebSocketOperationsCountedAndReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New()
		e := newSubsEnv(t, facade.Config{Metrics: m, MaxSubscriptionsPerKey: 2})
		chat := e.newChat(restclienttest.DemoKey)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := e.dialWS(ctx, nil, map[string]any{"X-Api-Key": restclienttest.DemoKey})
		var msg struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		for i := range 3 {
			if err := wsjson.Write(ctx, c, map[string]any{"id": fmt.Sprint(i + 1), "type": "subscribe", "payload": map[string]any{
				"query": chatSubscription, "variables": map[string]any{"id": chat},
			}}); err != nil {
				t.Fatal(err)
			}
		}
		// The three run at once: one of them, whichever comes last, is
		// refused. The server's pings are answered, as the protocol asks.
		for !strings.Contains(string(msg.Payload), "SUBSCRIPTION_LIMIT_EXCEEDED") {
			msg.Payload = nil
			if err := wsjson.Read(ctx, c, &msg); err != nil {
				t.Fatalf("reading the operations' answers: %v", err)
			}
			if msg.Type == "ping" {
				if err := wsjson.Write(ctx, c, map[string]any{"type": "pong"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !strings.Contains(string(msg.Payload), `"limit":"perKey"`) {
			t.Errorf("the refused operation: %s %s, want SUBSCRIPTION_LIMIT_EXCEEDED perKey", msg.Type, msg.Payload)
		}
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 2 {
			t.Errorf("%v subscriptions active, want the WebSocket's 2", n)
		}
		_ = c.CloseNow()
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 0 {
			t.Errorf("%v subscriptions active after the WebSocket closed abruptly, want 0", n)
		}
		s := e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat})
		synctest.Wait()
		if n := activeSubscriptions(t, m); n != 1 {
			t.Errorf("%v subscriptions active after subscribing again, want 1: the slots were not released", n)
		}
		s.cancel()
	})
}
