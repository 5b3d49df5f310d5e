package facade_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// refusedWith returns the code and extensions.limit of a subscription's
// first event when it is an error, "" when it has no event yet (it is
// open) or its event is no error. Call it once the bubble is idle
// (synctest.Wait): every event written has been read into the stream.
func refusedWith(s *sseStream) (code, limit string) {
	select {
	case ev, ok := <-s.events:
		if !ok {
			return "closed", ""
		}
		errs, _ := ev.data["errors"].([]any)
		if len(errs) == 0 {
			return "", ""
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		code, _ = ext["code"].(string)
		limit, _ = ext["limit"].(string)
		return code, limit
	default:
		return "", ""
	}
}

// Strangers opening subscriptions with made-up keys while Sure answers
// them slowly (1 s, then 401) hold at most a small share of
// -max-subscriptions while their first poll is out: a key the upstream
// accepted keeps its subscriptions (issue 25, row 6: 19 of 22 refused).
func TestSubscriptions_StrangersCannotTakeTheSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const total, strangers, mine = 40, 60, 22
		e := newSubsEnv(t, facade.Config{MaxSubscriptions: total, MaxSubscriptionsPerKey: 30})
		chats := make([]string, mine)
		for i := range chats {
			chats[i] = e.newChat(restclienttest.DemoKey) // the upstream accepts the key
		}
		e.mu.Lock()
		e.slow = func(key string) time.Duration {
			if key == restclienttest.DemoKey {
				return 0
			}
			return time.Second
		}
		e.mu.Unlock()
		before := e.total.Load()
		for i := range strangers {
			e.subscribeSSE(fmt.Sprintf("stranger-%d", i), chatSubscription, map[string]any{"id": chats[i%mine]})
		}
		synctest.Wait() // every stranger's first poll is out, or refused
		strangerCalls := e.total.Load() - before
		var streams []*sseStream
		for _, chat := range chats {
			streams = append(streams, e.subscribeSSE(restclienttest.DemoKey, chatSubscription, map[string]any{"id": chat}))
		}
		synctest.Wait()
		open := 0
		for i, s := range streams {
			switch code, limit := refusedWith(s); code {
			case "":
				open++
			default:
				t.Logf("subscription %d of the accepted key: %s %s", i, code, limit)
			}
		}
		t.Logf("the accepted key holds %d of its %d subscriptions while %d strangers subscribe (-max-subscriptions %d); the strangers cost %d upstream calls",
			open, mine, strangers, total, strangerCalls)
		if open < mine*9/10 {
			t.Errorf("the accepted key holds %d of its %d subscriptions, want at least 90 %%", open, mine)
		}
		for _, s := range streams {
			s.cancel()
		}
		time.Sleep(time.Minute) // the strangers' calls end before the bubble does
	})
}

// A key the upstream has not accepted polls for one resource at a time:
// its subscriptions to five chats at once cost one call (answered 401),
// not five, and each is refused UNAUTHENTICATED.
func TestSubscriptions_UnknownKeyCostsOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{})
		e.mu.Lock()
		e.slow = func(string) time.Duration { return time.Second }
		e.mu.Unlock()
		var streams []*sseStream
		for i := range 5 {
			streams = append(streams, e.subscribeSSE("made-up-key", chatSubscription,
				map[string]any{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)}))
		}
		for i, s := range streams {
			ev, _ := s.next(t)
			errs, _ := ev.data["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != "UNAUTHENTICATED" {
				t.Errorf("subscription %d: %v, want UNAUTHENTICATED", i, ev)
			}
		}
		rejected := 0
		for _, r := range e.fake.Requests() {
			if r.Status == http.StatusUnauthorized {
				rejected++
			}
		}
		t.Logf("%d upstream calls answered 401 for 5 subscriptions of one unknown key", rejected)
		if rejected != 1 {
			t.Errorf("%d upstream calls answered 401, want 1", rejected)
		}
	})
}

// A key new to the facade is proven by its first poll's answer (the one
// record of accepted keys learns it there): its subscriptions to other
// chats, which waited for that answer, then start their first polls all
// at once, not one after another as a key not proven would.
func TestSubscriptions_AFirstPollProvesTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newSubsEnv(t, facade.Config{MaxSubscriptions: 20}) // one subscription of keys not proven at a time
		const fresh = "a-key-new-to-the-facade"
		e.fake.AddKey(fresh, restclienttest.DemoKey)
		chats := make([]string, 4)
		for i := range chats {
			chats[i] = e.newChat(restclienttest.DemoKey)
		}
		e.mu.Lock()
		e.slow = func(string) time.Duration { return time.Second }
		e.mu.Unlock()
		before := e.total.Load()
		for _, chat := range chats {
			e.subscribeSSE(fresh, chatSubscription, map[string]any{"id": chat})
		}
		synctest.Wait()
		if n := e.total.Load() - before; n != 1 {
			t.Fatalf("%d first polls out at once for a key not proven, want 1", n)
		}
		time.Sleep(1500 * time.Millisecond) // the first answers at 1 s
		synctest.Wait()
		if n := e.total.Load() - before; n != int64(len(chats)) {
			t.Errorf("%d first polls by 1.5 s, want %d: the first proved the key, the others start together", n, len(chats))
		}
		time.Sleep(time.Minute) // the polls end before the bubble does
	})
}
