package facade_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/state/restcache"
)

// gqlAnswer is a decoded GraphQL answer.
type gqlAnswer struct {
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
	Extensions map[string]any
}

func decodeGQL(t *testing.T, rec *httptest.ResponseRecorder) gqlAnswer {
	t.Helper()
	var a gqlAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %d %q: %v", rec.Code, rec.Body, err)
	}
	return a
}

// codes returns the answer's errors' codes.
func (a gqlAnswer) codes() []string {
	var cs []string
	for _, e := range a.Errors {
		c, _ := e.Extensions["code"].(string)
		cs = append(cs, c)
	}
	return cs
}

// oneCallQuery costs one upstream call.
const oneCallQuery = `{"query":"{ categories(first: 1) { totalCount } }"}`

// postAs posts oneCallQuery to h's /graphql with key.
func postAs(h http.Handler, key string) *httptest.ResponseRecorder {
	return postBodyAs(h, key, oneCallQuery)
}

// postBodyAs posts body to h's /graphql with key.
func postBodyAs(h http.Handler, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A key the upstream answered 401 is refused locally for a minute: 40
// requests with a revoked key cost the upstream one call, not one or more
// each; other keys are served meanwhile; once the minute has passed the
// key is asked about again, and served if the upstream accepts it again.
// In a synctest bubble: the minute passes on the bubble's clock.
func TestRejectedKey_RefusedLocallyForAMinute(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		h := inBubble(t, fake, 10*time.Second)
		const key = "a-key-revoked-upstream"
		fake.AddKey(key, restclienttest.DemoKey)
		fake.RevokeKey(key)

		refused := func(when string) {
			t.Helper()
			rec := postAs(h, key)
			a := decodeGQL(t, rec)
			if len(a.Errors) == 0 || slices.ContainsFunc(a.codes(), func(c string) bool { return c != "UNAUTHENTICATED" }) {
				t.Fatalf("%s: errors %v, want UNAUTHENTICATED only (%s)", when, a.codes(), rec.Body)
			}
		}
		for i := range 40 {
			refused(fmt.Sprintf("request %d", i+1))
			if i == 19 {
				// Another key meanwhile: served, and no reason to forget.
				if a := decodeGQL(t, postAs(h, restclienttest.DemoKey)); len(a.Errors) > 0 {
					t.Fatalf("demo key: errors %v", a.codes())
				}
			}
		}
		if got := fake.CallsFor(key); got != 1 {
			t.Errorf("upstream calls with the revoked key = %d for 40 requests, want 1", got)
		}
		// The answer of a refusal from memory says what happened, and
		// costs nothing.
		rec := postAs(h, key)
		a := decodeGQL(t, rec)
		if msg := a.Errors[0].Message; !strings.Contains(msg, "rejected this API key") {
			t.Errorf("message = %q, want it to say the upstream rejected the key", msg)
		}
		if up, _ := a.Extensions["upstream"].(map[string]any); up["calls"] != float64(0) {
			t.Errorf("extensions.upstream = %v, want 0 calls", a.Extensions["upstream"])
		}

		// The key is restored upstream: still refused until its minute
		// has passed, then asked about and served.
		fake.AddKey(key, restclienttest.DemoKey)
		time.Sleep(restcache.DefaultRejectedKeyTTL - time.Second)
		refused("a second before the minute")
		if got := fake.CallsFor(key); got != 1 {
			t.Errorf("upstream calls with the key = %d within its minute, want 1", got)
		}
		time.Sleep(time.Second)
		if a := decodeGQL(t, postAs(h, key)); len(a.Errors) > 0 {
			t.Errorf("after the minute: errors %v, want the key served", a.codes())
		}
		if got := fake.CallsFor(key); got != 2 {
			t.Errorf("upstream calls with the key = %d, want 2 (the 401, then the field's)", got)
		}
	})
}

// In a batch, the operations after the one whose calls the upstream
// answered 401 are refused whole (one error, not one per field), at no
// call.
func TestRejectedKey_RestOfTheBatchRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		h := inBubble(t, fake, 10*time.Second)
		const key = "a-key-revoked-upstream"
		fake.AddKey(key, restclienttest.DemoKey)
		fake.RevokeKey(key)
		const twoFields = `{"query":"{ categories(first: 1) { totalCount } chats(first: 1) { totalCount } }"}`
		rec := postBodyAs(h, key, "["+twoFields+","+twoFields+","+twoFields+"]")
		var answers []json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil || len(answers) != 3 {
			t.Fatalf("batch answer %s: %v", rec.Body, err)
		}
		for i, raw := range answers {
			var a gqlAnswer
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			want := []string{"UNAUTHENTICATED"} // refused whole
			if i == 0 {
				want = []string{"UNAUTHENTICATED", "UNAUTHENTICATED"} // each field's 401
			}
			if !slices.Equal(a.codes(), want) {
				t.Errorf("operation %d: errors %v, want %v: %s", i, a.codes(), want, raw)
			}
		}
		// The first operation's two fields may both be sent before the
		// first 401 returns, or the second refused by the gate after it.
		if got := fake.CallsFor(key); got < 1 || got > 2 {
			t.Errorf("upstream calls = %d for the batch of 3, want 1 or 2 (the first operation's fields)", got)
		}
	})
}

// Issue 25, row 9: a flood of new keys (each answered 401) cannot make
// the server forget a key it rejected less than a minute ago, nor reach
// the upstream faster than the bound of calls with keys not yet
// accepted: 1,000 at once, then 150 a second. Keys the upstream accepted
// are not bound by it; a new valid key that arrives while the bound is
// spent is refused RATE_LIMITED with a retryAfter, and served after it.
func TestRejectedKey_FloodOfNewKeysForgetsNoRejection(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		h := inBubble(t, fake, 10*time.Second)
		const old = "a-key-revoked-before-the-flood"
		if a := decodeGQL(t, postAs(h, restclienttest.DemoKey)); len(a.Errors) > 0 { // accepted before the flood
			t.Fatalf("demo key: %v", a.codes())
		}
		postAs(h, old)
		n := 0
		flood := func(keys int) (calls int) {
			before := fake.Calls()
			for range keys {
				n++
				postAs(h, fmt.Sprintf("stranger-%06d", n))
			}
			return fake.Calls() - before
		}
		burst := flood(12_000)
		var perSecond []int
		for range 4 {
			time.Sleep(time.Second)
			perSecond = append(perSecond, flood(500))
		}
		t.Logf("a flood of %d new keys: %d upstream calls at once, then %v a second", n, burst, perSecond)
		if burst > 1_000 {
			t.Errorf("12,000 new keys at once: %d upstream calls, want at most 1,000", burst)
		}
		for i, c := range perSecond {
			if c > 150 {
				t.Errorf("second %d of the flood: %d upstream calls, want at most 150", i+1, c)
			}
		}
		a := decodeGQL(t, postAs(h, old))
		if got := fake.CallsFor(old); got != 1 || !slices.Equal(a.codes(), []string{"UNAUTHENTICATED"}) {
			t.Errorf("the key rejected before the flood: %d upstream calls, errors %v; want 1 call in all, UNAUTHENTICATED", got, a.codes())
		}
		if a := decodeGQL(t, postAs(h, restclienttest.DemoKey)); len(a.Errors) > 0 {
			t.Errorf("a key accepted before the flood: errors %v, want it served", a.codes())
		}

		const newcomer = "a-valid-key-new-during-the-flood"
		fake.AddKey(newcomer, restclienttest.DemoKey)
		flood(1_000) // spends what the bound had left
		rec := postAs(h, newcomer)
		a = decodeGQL(t, rec)
		if !slices.Equal(a.codes(), []string{"RATE_LIMITED"}) || a.Errors[0].Extensions["retryAfter"] == nil || rec.Header().Get("Retry-After") == "" {
			t.Errorf("a new valid key while the bound is spent: errors %v (%s), Retry-After %q; want RATE_LIMITED with retryAfter",
				a.codes(), rec.Body, rec.Header().Get("Retry-After"))
		}
		time.Sleep(time.Second)
		if a := decodeGQL(t, postAs(h, newcomer)); len(a.Errors) > 0 {
			t.Errorf("the new valid key a second later: errors %v, want it served", a.codes())
		}
	})
}
