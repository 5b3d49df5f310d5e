package facade_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// With Redis, two replicas each serving a subscriber of one chat of one
// key poll it as one: each makes its subscriber's first read, then only
// the replica holding the loop's lease polls, and the other pushes what
// it published. Both subscribers get the reply. Real Redis and loopback
// HTTP; the assistant replies on the fake's clock, moved by the test.
func TestReplicas_SubscriptionsPollOnce(t *testing.T) {
	c := newCluster(t, 2, 0)
	var mu sync.Mutex
	base, offset := time.Now(), time.Duration(0)
	c.upstream.SetClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return base.Add(offset)
	})
	c.upstream.SetAssistant(3 * time.Second)
	r0, r1 := c.replicas[0], c.replicas[1]
	var created struct {
		CreateChat struct{ Chat struct{ ID string } }
	}
	r0.ok(restclienttest.DemoKey, `mutation { createChat(input: {title: "Two replicas", message: "Anyone?"}) { chat { id } } }`, nil, &created)
	chat := created.CreateChat.Chat.ID
	chatPath := "/api/v1/chats/" + chat
	reads := func() int {
		n := 0
		for _, r := range c.upstream.Requests() {
			if r.Method == http.MethodGet && r.Path == chatPath {
				n++
			}
		}
		return n
	}
	before := reads()
	var streams []*sseStream
	for _, r := range []*env{r0, r1} {
		streams = append(streams, openSSE(t, http.DefaultClient, r.server.URL+"/graphql", restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat}))
	}
	// Both subscriptions' first reads (polling a real server's state).
	for deadline := time.Now().Add(guard); reads() < before+2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the subscriptions' first reads did not happen: %d reads", reads()-before)
		}
	}
	mu.Lock()
	offset = 10 * time.Second // the reply is due
	mu.Unlock()
	for i, s := range streams {
		awaitReply(t, func() (map[string]any, bool) {
			select {
			case ev, ok := <-s.events:
				if !ok || ev.event != "next" {
					return nil, false
				}
				return ev.data["data"].(map[string]any)["chatMessageAdded"].(map[string]any), true
			case <-time.After(guard):
				t.Fatalf("replica %d's subscriber got no reply", i)
				return nil, false
			}
		})
	}
	sent := []int{polls(t, r0, "sent"), polls(t, r1, "sent")}
	t.Logf("polls sent by the replicas: %v", sent)
	if min(sent[0], sent[1]) != 1 || max(sent[0], sent[1]) < 2 {
		t.Errorf("polls sent by the replicas: %v, want 1 (the first read) by one, the others by the lease holder", sent)
	}
	for _, s := range streams {
		s.cancel()
	}
}

// polls returns a replica's suregql_subscription_polls_total of outcome
// for chats.
func polls(t *testing.T, e *env, outcome string) int {
	t.Helper()
	re := regexp.MustCompile(`suregql_subscription_polls_total\{outcome="` + outcome + `",resource="chat"\} (\d+)`)
	m := re.FindStringSubmatch(scrape(t, e))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(m[1]))
	return n
}
