package facade_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// freshAnswer is an answer as the freshness tests read it.
type freshAnswer struct {
	Data       map[string]json.RawMessage `json:"data"`
	Errors     []gotError                 `json:"errors"`
	Extensions struct {
		Upstream struct {
			Calls int `json:"calls"`
			Stale *struct {
				AgeSeconds int    `json:"ageSeconds"`
				Reason     string `json:"reason"`
			} `json:"stale"`
		} `json:"upstream"`
	} `json:"extensions"`
}

// freshFacade returns the facade with its defaults (the freshness rule,
// stale answers for an hour) over up, in the caller's bubble, its
// upstream calls never retried; a breaker opens at the first outage when
// breaker is set.
func freshFacade(t *testing.T, up *restclienttest.Server, breaker bool) http.Handler {
	t.Helper()
	return cachedFacade(t, up, func(cfg *facade.Config) {
		if breaker {
			cfg.Breaker = restclient.NewBreaker(restclient.BreakerOptions{MinCalls: 1, Cooldown: time.Hour, Log: slog.New(slog.DiscardHandler)})
		}
	})
}

// askFresh posts query to h as the demo key and reads the answer.
func askFresh(t *testing.T, h http.Handler, query string) freshAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	rec := postIn(h, string(body))
	var a freshAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %s: %v", rec.Body, err)
	}
	return a
}

const (
	categoriesQuery = `{ categories(first: 10) { nodes { id name } } }`
	chatsQuery      = `{ chats(first: 5) { nodes { id title } } }`
)

// By default a category list read twice within its window costs one call,
// and again past it; a chats list has a window of its own.
func TestFreshness_DefaultsPerResource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := freshFacade(t, up, false)
		for i, step := range []struct {
			after time.Duration
			query string
			calls int
		}{
			{0, categoriesQuery, 1},
			{20 * time.Second, categoriesQuery, 0}, // within the short end (30 s)
			{0, chatsQuery, 1},
			{2 * time.Second, chatsQuery, 0},  // within 3 s
			{10 * time.Second, chatsQuery, 1}, // a chat list is fresh for seconds
			{6 * time.Minute, categoriesQuery, 1},
		} {
			time.Sleep(step.after)
			a := askFresh(t, h, step.query)
			if a.Extensions.Upstream.Calls != step.calls || len(a.Errors) > 0 || a.Extensions.Upstream.Stale != nil {
				t.Errorf("step %d (%s after %v): calls %d, errors %v, stale %v; want %d calls, fresh",
					i, step.query, step.after, a.Extensions.Upstream.Calls, a.Errors, a.Extensions.Upstream.Stale, step.calls)
			}
		}
	})
}

// A cached answer ages by the handler's clock (Config.Now), not by the
// time the machine takes: on a clock that stands still it stays fresh
// however slow the machine, and past its window on that clock it is read
// again. Outside a bubble (the upstream on loopback, as newEnv's), so
// nothing but Config.Now can make the answer old.
func TestFreshness_JudgedOnTheHandlersClock(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Millisecond)}
	e := newEnv(t, withConfig(func(c *facade.Config) {
		c.CacheTTL = time.Hour // the rule's windows, capped at an hour
		c.Now = clock.now
	}))
	for i, step := range []struct {
		after time.Duration
		calls int
	}{
		{0, 1},
		{20 * time.Second, 0}, // within the categories' short end (30 s)
		{0, 0},
		{6 * time.Minute, 1}, // past their long end (5 min), whatever the key spent
		{0, 0},
	} {
		clock.advance(step.after)
		r := e.ok(restclienttest.DemoKey, categoriesQuery, nil, nil)
		if r.calls != step.calls {
			t.Errorf("step %d (clock moved %v): %d calls, want %d", i, step.after, r.calls, step.calls)
		}
	}
}

// A key's own write is visible at once, whatever the freshness of what it
// read before.
func TestFreshness_OwnWriteVisibleAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := freshFacade(t, up, false)
		before := askFresh(t, h, chatsQuery)
		a := askFresh(t, h, `mutation { createChat(input: {title: "fresh one"}) { chat { id } } }`)
		if len(a.Errors) > 0 {
			t.Fatalf("createChat: %v", a.Errors)
		}
		after := askFresh(t, h, chatsQuery)
		if after.Extensions.Upstream.Calls != 1 || !strings.Contains(string(after.Data["chats"]), "fresh one") {
			t.Errorf("chats after the key's createChat: %d calls, %s; want 1 call showing it (before: %s)",
				after.Extensions.Upstream.Calls, after.Data["chats"], before.Data["chats"])
		}
	})
}

// A key's write to one chat makes its list of chats and that chat read
// again, not its other chats: renaming one conversation does not cost the
// next view of another a call.
func TestFreshness_ChatWriteForgetsThatChatOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := freshFacade(t, up, false)
		// Chats made in the bubble: the demo's are dated after its clock,
		// and would look just written (never kept).
		create := func(title string) string {
			a := askFresh(t, h, `mutation { createChat(input: {title: "`+title+`"}) { chat { id } } }`)
			var got struct{ Chat struct{ ID string } }
			if err := json.Unmarshal(a.Data["createChat"], &got); err != nil || got.Chat.ID == "" {
				t.Fatalf("createChat: %v %v", err, a.Errors)
			}
			return got.Chat.ID
		}
		renamed, other := create("One"), create("Other")
		show := func(id string) freshAnswer {
			return askFresh(t, h, `{ chat(id: "`+id+`") { title messages(last: 5) { nodes { id } } } }`)
		}
		askFresh(t, h, chatsQuery)
		show(renamed)
		show(other)
		if a := askFresh(t, h, `mutation { updateChat(input: {id: "`+renamed+`", title: "Renamed"}) { chat { id } } }`); len(a.Errors) > 0 {
			t.Fatalf("updateChat: %v", a.Errors)
		}
		for _, tc := range []struct {
			what  string
			a     freshAnswer
			calls int
		}{
			{"the list", askFresh(t, h, chatsQuery), 1},
			{"the renamed chat", show(renamed), 1},
			{"another chat", show(other), 0},
		} {
			if tc.a.Extensions.Upstream.Calls != tc.calls {
				t.Errorf("%s after the rename: %d calls, want %d", tc.what, tc.a.Extensions.Upstream.Calls, tc.calls)
			}
		}
	})
}

// A key out of quota reads what it read before from what the facade
// holds, marked stale with its age and reason, after one call that asks
// Sure whether the key still stands (answered 429, at no cost to the key:
// see TestFreshness_RevokedKeyOutOfQuotaIsNotServedStale); a field with
// nothing held still gets RATE_LIMITED, at no call.
func TestFreshness_StaleWhenRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		up.SetRateLimit(restclienttest.DemoKey, 2)
		h := freshFacade(t, up, false)
		askFresh(t, h, categoriesQuery) // 1 call
		askFresh(t, h, chatsQuery)      // the last call of the hour
		time.Sleep(10 * time.Minute)
		a := askFresh(t, h, `{ categories(first: 10) { nodes { id name } } import(id: "00000000-0000-4000-8000-000000000001") { id } }`)
		if a.Extensions.Upstream.Calls != 1 || up.CallsFor(restclienttest.DemoKey) != 3 {
			t.Errorf("calls %d, want 1 (out of quota: only the check of the key whose answer is held)", a.Extensions.Upstream.Calls)
		}
		if !strings.Contains(string(a.Data["categories"]), `"name"`) {
			t.Errorf("categories %s, want the list read 10 minutes ago", a.Data["categories"])
		}
		if s := a.Extensions.Upstream.Stale; s == nil || s.AgeSeconds != 600 || s.Reason != "rate_limited" {
			t.Errorf("extensions.upstream.stale = %+v, want {ageSeconds: 600, reason: rate_limited}", s)
		}
		if len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != "RATE_LIMITED" {
			t.Errorf("errors %+v, want RATE_LIMITED for the import, which nothing held answers", a.Errors)
		}
	})
}

// When the upstream fails, a read answered before answers stale with
// reason upstream_unavailable (its failed call counted); once the circuit
// is open, with reason circuit_open and no call.
func TestFreshness_StaleWhenUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := freshFacade(t, up, true)
		askFresh(t, h, categoriesQuery)
		time.Sleep(10 * time.Minute)
		up.FailNext("/api/v1/categories", 1, http.StatusServiceUnavailable, "text/html", "<html>down</html>")
		for _, want := range []struct {
			reason string
			calls  int
		}{{"upstream_unavailable", 1}, {"circuit_open", 0}} {
			a := askFresh(t, h, categoriesQuery)
			s := a.Extensions.Upstream.Stale
			if len(a.Errors) > 0 || s == nil || s.Reason != want.reason || s.AgeSeconds != 600 || a.Extensions.Upstream.Calls != want.calls {
				t.Errorf("errors %v, stale %+v, calls %d; want no error, stale 600 s %s, %d calls",
					a.Errors, s, a.Extensions.Upstream.Calls, want.reason, want.calls)
			}
		}
		a := askFresh(t, h, chatsQuery) // nothing held
		if len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != "UPSTREAM_UNAVAILABLE" || a.Extensions.Upstream.Stale != nil {
			t.Errorf("chats with nothing held: errors %+v, stale %+v; want UPSTREAM_UNAVAILABLE, not stale", a.Errors, a.Extensions.Upstream.Stale)
		}
	})
}

// The rateLimit field asks the upstream once the reading's window has
// ended, even when the answer that would ask is fresh: a kept answer
// carries no new figures.
func TestFreshness_RateLimitFieldAfterTheReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		up.SetRateLimit(restclienttest.DemoKey, 100)
		h := freshFacade(t, up, false)
		// The fake's windows are the clock's hours; the bubble starts on one.
		time.Sleep(time.Hour - 10*time.Second)
		const q = `{ rateLimit { remaining resetAt } }`
		first := askFresh(t, h, q)
		time.Sleep(20 * time.Second) // a new window; the probe's answer 20 s old
		second := askFresh(t, h, q)
		if second.Extensions.Upstream.Calls != 1 || string(second.Data["rateLimit"]) == string(first.Data["rateLimit"]) {
			t.Errorf("after the reset: %d calls, %s (before: %s); want 1 call and the new window's figures",
				second.Extensions.Upstream.Calls, second.Data["rateLimit"], first.Data["rateLimit"])
		}
	})
}

// In a batch, each operation reports the stale answers it read, also one
// the batch's earlier operation read first.
func TestFreshness_StaleInABatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		up.SetRateLimit(restclienttest.DemoKey, 1)
		h := freshFacade(t, up, false)
		askFresh(t, h, categoriesQuery) // the hour's one call
		time.Sleep(10 * time.Minute)
		askFresh(t, h, categoriesQuery) // Sure says the key stands (429): no check for a minute
		op, _ := json.Marshal(map[string]string{"query": categoriesQuery})
		other, _ := json.Marshal(map[string]string{"query": chatsQuery})
		rec := postIn(h, "["+string(op)+","+string(other)+","+string(op)+"]")
		var answers []freshAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil || len(answers) != 3 {
			t.Fatalf("batch answer %s: %v", rec.Body, err)
		}
		for i, wantStale := range []bool{true, false, true} {
			a := answers[i]
			if got := a.Extensions.Upstream.Stale != nil; got != wantStale || a.Extensions.Upstream.Calls != 0 {
				t.Errorf("operation %d: stale %+v, calls %d; want stale %t, 0 calls", i, a.Extensions.Upstream.Stale, a.Extensions.Upstream.Calls, wantStale)
			}
		}
		if len(answers[1].Errors) != 1 || answers[1].Errors[0].Extensions["code"] != "RATE_LIMITED" {
			t.Errorf("chats, nothing held: errors %+v, want RATE_LIMITED", answers[1].Errors)
		}
	})
}

// Identical requests in flight together do not share an answer read
// stale: the waiter reads for itself and reports its own staleness and
// calls, never stale data shown as the upstream's.
func TestFreshness_StaleAnswerNotShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		h := freshFacade(t, up, false)
		askFresh(t, h, categoriesQuery)
		time.Sleep(10 * time.Minute)
		up.FailNext("/api/v1/categories", 2, http.StatusInternalServerError, "application/json", `{"error":"boom"}`)
		release := up.Hold()
		answers := make(chan freshAnswer, 2)
		for range 2 {
			go func() { answers <- askFresh(t, h, categoriesQuery) }()
		}
		synctest.Wait() // the leader's GET held upstream, the other request waiting for it
		release()
		for range 2 {
			a := <-answers
			s := a.Extensions.Upstream.Stale
			if s == nil || s.Reason != "upstream_unavailable" || a.Extensions.Upstream.Calls != 1 {
				t.Errorf("stale %+v, calls %d, errors %v; want each request stale (upstream_unavailable) after its own failed call",
					s, a.Extensions.Upstream.Calls, a.Errors)
			}
		}
	})
}

// Issue 25, row 8: a key revoked while out of quota is not answered from
// what the facade holds for the rest of its window. Sure authenticates a
// key before it counts its calls: before a stale answer serves a key
// refused locally for its quota, one call (at most one a minute per key)
// asks Sure again. A 429 says the key still stands, and the answer is
// served stale; a 401 drops everything kept for it.
func TestFreshness_RevokedKeyOutOfQuotaIsNotServedStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := restclienttest.New()
		const key = "revoked-while-out-of-quota"
		up.AddKey(key, restclienttest.DemoKey)
		up.SetRateLimit(key, 2)
		h := freshFacade(t, up, false)
		askAs(t, h, key, categoriesQuery, nil) // 1 call
		askAs(t, h, key, chatsQuery, nil)      // the last call of the hour
		time.Sleep(10 * time.Minute)

		// Still valid: one call asks, Sure answers 429, the answer is stale;
		// within the minute after, no call.
		for i, calls := range []int{1, 0} {
			a := askAs(t, h, key, categoriesQuery, nil)
			if s := a.Extensions.Upstream.Stale; a.Extensions.Upstream.Calls != calls || len(a.Errors) > 0 || s == nil || s.Reason != "rate_limited" {
				t.Errorf("read %d of a valid key out of quota: calls %d, errors %v, stale %+v; want %d calls, stale rate_limited",
					i, a.Extensions.Upstream.Calls, a.Errors, s, calls)
			}
		}

		up.RevokeKey(key)
		time.Sleep(time.Minute)
		for i, calls := range []int{1, 0} {
			a := askAs(t, h, key, categoriesQuery, nil)
			if a.Extensions.Upstream.Calls != calls || a.Extensions.Upstream.Stale != nil || len(a.Errors) != 1 ||
				a.Errors[0].Extensions["code"] != "UNAUTHENTICATED" || strings.Contains(string(a.Data["categories"]), "name") {
				t.Errorf("read %d after the key was revoked: calls %d, data %s, errors %+v, stale %+v; want %d calls, UNAUTHENTICATED, no data",
					i, a.Extensions.Upstream.Calls, a.Data["categories"], a.Errors, a.Extensions.Upstream.Stale, calls)
			}
		}
	})
}
