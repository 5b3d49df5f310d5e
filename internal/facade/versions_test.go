package facade_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// upstreamRateLimit is extensions.upstream.rateLimit as the answer spells
// it: a number the upstream did not send must be null, not 0.
type upstreamRateLimit struct {
	Limit     *int    `json:"limit"`
	Remaining *int    `json:"remaining"`
	ResetAt   *string `json:"resetAt"`
	Unlimited *bool   `json:"unlimited"`
}

// rateLimitExt decodes extensions.upstream.rateLimit of r (nil when absent).
func rateLimitExt(t *testing.T, r result) *upstreamRateLimit {
	t.Helper()
	var ext struct {
		Upstream struct {
			RateLimit *upstreamRateLimit `json:"rateLimit"`
		} `json:"upstream"`
	}
	if err := json.Unmarshal(r.rawExt, &ext); err != nil {
		t.Fatalf("decode extensions %s: %v", r.rawExt, err)
	}
	return ext.Upstream.RateLimit
}

// wantUnlimitedExt fails unless r's extensions report an unlimited server
// with no number at all.
func wantUnlimitedExt(t *testing.T, r result) {
	t.Helper()
	rl := rateLimitExt(t, r)
	if rl == nil || rl.Unlimited == nil || !*rl.Unlimited || rl.Limit != nil || rl.Remaining != nil || rl.ResetAt != nil {
		t.Errorf("extensions = %s, want upstream.rateLimit unlimited with null limit, remaining and resetAt", r.rawExt)
	}
	if !strings.Contains(string(r.rawExt), `"rateLimit":{"limit":null,"remaining":null,"resetAt":null,"unlimited":true}`) {
		t.Errorf("extensions = %s, want the numbers spelt null", r.rawExt)
	}
}

// rateLimitField is the rateLimit field as the schema answers it.
type rateLimitField struct {
	Unlimited bool    `json:"unlimited"`
	Limit     *int    `json:"limit"`
	Remaining *int    `json:"remaining"`
	Used      *int    `json:"used"`
	ResetAt   *string `json:"resetAt"`
}

const rateLimitQuery = `{ rateLimit { unlimited limit remaining used resetAt } }`

// largeTreeQuery reads the first 100 roots of the large family with all
// their subcategories: about 50 calls, twice a standard key's budget.
const largeTreeQuery = `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 100) { nodes { name } } } } }`

// wantLargeTree checks the answer of largeTreeQuery against the seed: the
// first 100 roots in order, each with every subcategory in order.
func wantLargeTree(t *testing.T, e *env, key string, roots []categoryNode) {
	t.Helper()
	all := e.upstream.Categories(key)
	byID := map[string]string{}
	var rootNames []string
	for _, c := range all {
		byID[c.ID] = c.Name
		if c.ParentID == "" {
			rootNames = append(rootNames, c.Name)
		}
	}
	children := map[string][]string{}
	for _, c := range all {
		if c.ParentID != "" {
			children[byID[c.ParentID]] = append(children[byID[c.ParentID]], c.Name)
		}
	}
	if got, want := names(roots), rootNames[:100]; !slices.Equal(got, want) {
		t.Fatalf("roots = %v, want %v", got, want)
	}
	subs := 0
	for _, r := range roots {
		if r.Subcategories == nil {
			t.Errorf("%s: subcategories null", r.Name)
			continue
		}
		subs += len(r.Subcategories.Nodes)
		if got, want := names(r.Subcategories.Nodes), children[r.Name]; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: subcategories = %v, want %v", r.Name, got, want)
		}
	}
	if subs == 0 {
		t.Error("no subcategory in the tree")
	}
}

// A self-hosted Sure limits nothing ("Infinity" headers): the large
// family's tree, twice what a standard key's budget allows, is answered
// whole, again and again past what a standard key could spend in an hour,
// and never refused RATE_LIMITED; rateLimit and extensions.upstream say
// "unlimited" and show no number the server did not send. The facade's own
// cap (-max-upstream-calls, its default here) still holds, and a key of
// the same server that does have a limit still gets a quarter of it.
func TestUnlimitedUpstream_LargeTreeAnsweredWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		withUpstream(restclienttest.WithUnlimited()),
		withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls }))
	key := restclienttest.LargeFamilyKey
	const standardKey = "large-family-standard-key"
	e.upstream.AddKey(standardKey, key)
	e.upstream.SetRateLimit(standardKey, 100)

	// Nothing is known of the key yet: rateLimit costs the one call that
	// tells it.
	var rl struct{ RateLimit rateLimitField }
	r := e.ok(key, rateLimitQuery, nil, &rl)
	wantCalls(t, r, 1)
	if got := rl.RateLimit; !got.Unlimited || got.Limit != nil || got.Remaining != nil || got.Used != nil || got.ResetAt != nil {
		t.Errorf("rateLimit = %s, want unlimited true and every number null", r.data)
	}
	wantUnlimitedExt(t, r)

	spent := 0
	for run := range 3 {
		var out struct{ Categories categoryConn }
		r := e.do(key, largeTreeQuery, nil)
		for _, err := range r.errs {
			t.Errorf("run %d: unexpected error %v (%v)", run, err.Message, err.Extensions)
		}
		if err := json.Unmarshal(r.data, &out); err != nil {
			t.Fatalf("decode %s: %v", r.data, err)
		}
		wantLargeTree(t, e, key, out.Categories.Nodes)
		// The family read: its 5,000 categories, 100 a page.
		wantCalls(t, r, 50)
		wantUnlimitedExt(t, r)
		spent += r.calls
	}
	if spent <= 100 {
		t.Fatalf("the runs spent %d calls, want more than a standard key's hour (100)", spent)
	}
	r = e.ok(key, rateLimitQuery, nil, &rl)
	wantCalls(t, r, 0)
	if !rl.RateLimit.Unlimited || rl.RateLimit.Limit != nil || rl.RateLimit.Remaining != nil || rl.RateLimit.Used != nil || rl.RateLimit.ResetAt != nil {
		t.Errorf("rateLimit after %d calls = %s, want unlimited and null numbers", spent, r.data)
	}

	// The facade's own cap still holds: the messages of 100 chats (their
	// list's 5 pages, and one show each) are refused past it.
	r = e.do(key, `{ chats(first: 100) { nodes { messages(first: 1) { nodes { content } } } } }`, nil)
	wantCalls(t, r, facade.DefaultMaxUpstreamCalls)
	refused := 0
	for _, err := range r.errs {
		if err.Extensions["code"] != "QUERY_TOO_EXPENSIVE" || err.Extensions["budget"] != float64(facade.DefaultMaxUpstreamCalls) {
			t.Errorf("error %s %v, want QUERY_TOO_EXPENSIVE with budget %d", err.Message, err.Extensions, facade.DefaultMaxUpstreamCalls)
		}
		refused++
	}
	if refused != 5 {
		t.Errorf("%d fields refused, want the 5 past the cap of %d calls", refused, facade.DefaultMaxUpstreamCalls)
	}
	wantUnlimitedExt(t, r)

	// A standard key of the same server: a budget of 25. Its roots and the
	// family's first page (which shows the family too large to read) cost
	// 2 calls; the subcategories of every root that has some, refused
	// together, none.
	r = e.do(standardKey, largeTreeQuery, nil)
	wantCalls(t, r, 2)
	withChildren := map[string]bool{}
	for _, c := range e.upstream.Categories(key) {
		if c.ParentID != "" {
			withChildren[c.ParentID] = true
		}
	}
	var partial struct{ Categories categoryConn }
	if err := json.Unmarshal(r.data, &partial); err != nil || len(partial.Categories.Nodes) != 100 {
		t.Fatalf("data = %.300s (%v), want the 100 roots", r.data, err)
	}
	refused = 0
	for _, root := range partial.Categories.Nodes {
		c, _ := e.upstream.CategoryByName(key, root.Name)
		if withChildren[c.ID] {
			refused++
			if root.Subcategories != nil {
				t.Errorf("%s: subcategories answered past the standard key's budget", root.Name)
			}
		}
	}
	if len(r.errs) != refused {
		t.Errorf("%d errors, want one per root with subcategories (%d)", len(r.errs), refused)
	}
	for _, err := range r.errs {
		if err.Extensions["code"] != "QUERY_TOO_EXPENSIVE" || err.Extensions["budget"] != float64(25) {
			t.Errorf("error %s %v, want QUERY_TOO_EXPENSIVE with budget 25", err.Message, err.Extensions)
		}
	}
	if ext := rateLimitExt(t, r); ext == nil || ext.Unlimited == nil || *ext.Unlimited || ext.Limit == nil || *ext.Limit != 100 || ext.Remaining == nil || ext.ResetAt == nil {
		t.Errorf("extensions = %s, want the standard key's limit 100, its remaining and reset", r.rawExt)
	}
	r = e.ok(standardKey, rateLimitQuery, nil, &rl)
	wantCalls(t, r, 0)
	if got := rl.RateLimit; got.Unlimited || got.Limit == nil || *got.Limit != 100 || got.Used == nil || got.Remaining == nil || *got.Used+*got.Remaining != 100 || got.ResetAt == nil {
		t.Errorf("rateLimit of the standard key = %s, want limit 100 with used + remaining = 100", r.data)
	}

	// A fresh facade whose first operation is the tree: its first call
	// shows the server unlimited, before the 49 others are planned.
	fresh := newEnv(t,
		withUpstream(restclienttest.WithUnlimited()),
		withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls }))
	var first struct{ Categories categoryConn }
	r = fresh.ok(key, largeTreeQuery, nil, &first)
	wantCalls(t, r, 50)
	wantLargeTree(t, fresh, key, first.Categories.Nodes)
	wantUnlimitedExt(t, r)

	// Nothing was refused for the unlimited key (no error above), and the
	// server refused nothing either.
	for _, req := range e.upstream.Requests() {
		if req.Status == 429 {
			t.Errorf("the upstream answered 429 to %s %s", req.Method, req.Path)
		}
	}
}

// pagesCovering is how many upstream pages of size per hold the offsets
// [s, e): the fewest calls a window there can cost (at least 1, the call
// that tells the list).
func pagesCovering(s, e, per int) int {
	if e <= s {
		return 1
	}
	return (e-1)/per - s/per + 1
}

// longDemoChat is the demo's chat of 120 messages (three pages of 50
// before Sure v0.6.6, six of 20 since).
func longDemoChat(t *testing.T, e *env) restclienttest.Chat {
	t.Helper()
	for _, c := range e.upstream.Chats(restclienttest.DemoKey) {
		if c.MessageCount == 120 {
			return c
		}
	}
	t.Fatal("the demo seed has no chat of 120 messages")
	return restclienttest.Chat{}
}

const messagesWindow = `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  chat(id: $id) { messages(first: $first, after: $after, last: $last, before: $before) {
    totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`

// The 120 messages of the demo's long chat, walked forward and backward in
// windows that fit the upstream's pages and windows that straddle them,
// against both page sizes (20 today, 50 before v0.6.6): every message once,
// in order, each window at the fewest calls its pages allow.
func TestMessages_WalkedInBothPageSizes(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testMessagesWalkedInBothPageSizes)
}

func testMessagesWalkedInBothPageSizes(t *testing.T, e *env, v restclienttest.Version) {
	key := restclienttest.DemoKey
	long := longDemoChat(t, e)
	per := messagesPerPage(v)
	// The messages' ids in order, as the fake holds them.
	var want []string
	for page := 1; ; page++ {
		var p struct {
			Messages   []seedMessage
			Pagination struct {
				Page       int `json:"page"`
				TotalPages int `json:"total_pages"`
			}
		}
		seedFakeGET(t, e.upstream, key, fmt.Sprintf("/api/v1/chats/%s?page=%d", long.ID, page), &p)
		for _, m := range p.Messages {
			want = append(want, m.ID)
		}
		if p.Pagination.Page >= p.Pagination.TotalPages {
			break
		}
	}
	if len(want) != 120 {
		t.Fatalf("the fake holds %d messages, want 120", len(want))
	}

	type msgConn struct {
		TotalCount int
		Nodes      []struct{ ID string }
		PageInfo   pageInfo
	}
	window := func(vars map[string]any) (msgConn, result) {
		t.Helper()
		vars["id"] = long.ID
		var out struct{ Chat struct{ Messages msgConn } }
		r := e.ok(key, messagesWindow, vars, &out)
		if out.Chat.Messages.TotalCount != 120 {
			t.Errorf("totalCount = %d, want 120", out.Chat.Messages.TotalCount)
		}
		return out.Chat.Messages, r
	}
	ids := func(c msgConn) []string {
		out := make([]string, len(c.Nodes))
		for i, n := range c.Nodes {
			out[i] = n.ID
		}
		return out
	}

	for _, n := range []int{per, 45} {
		t.Run(fmt.Sprintf("windows of %d", n), func(t *testing.T) {
			// Forward.
			var got []string
			var forward, backward int
			vars := map[string]any{"first": n}
			for s := 0; ; s += n {
				c, r := window(vars)
				forward += r.calls
				end := min(s+n, 120)
				if !slices.Equal(ids(c), want[s:end]) {
					t.Fatalf("forward window at %d = %d messages, want [%d, %d)", s, len(c.Nodes), s, end)
				}
				if w := pagesCovering(s, end, per); r.calls != w {
					t.Errorf("forward window [%d, %d) of pages of %d: %d calls, want %d", s, end, per, r.calls, w)
				}
				got = append(got, ids(c)...)
				if c.PageInfo.HasNextPage != (end < 120) || c.PageInfo.HasPreviousPage != (s > 0) {
					t.Errorf("forward window [%d, %d): pageInfo %+v", s, end, c.PageInfo)
				}
				if !c.PageInfo.HasNextPage {
					break
				}
				vars = map[string]any{"first": n, "after": *c.PageInfo.EndCursor}
			}
			if !slices.Equal(got, want) {
				t.Errorf("forward walk saw %d messages, want each of the 120 once, in order", len(got))
			}

			// Backward, from the newest.
			got = nil
			vars = map[string]any{"last": n}
			for end := 120; ; end -= n {
				c, r := window(vars)
				backward += r.calls
				s := max(end-n, 0)
				if !slices.Equal(ids(c), want[s:end]) {
					t.Fatalf("backward window before %d = %d messages, want [%d, %d)", end, len(c.Nodes), s, end)
				}
				if w := pagesCovering(s, end, per); r.calls != w {
					t.Errorf("backward window [%d, %d) of pages of %d: %d calls, want %d", s, end, per, r.calls, w)
				}
				got = append(ids(c), got...)
				if c.PageInfo.HasPreviousPage != (s > 0) || c.PageInfo.HasNextPage != (end < 120) {
					t.Errorf("backward window [%d, %d): pageInfo %+v", s, end, c.PageInfo)
				}
				if !c.PageInfo.HasPreviousPage {
					break
				}
				vars = map[string]any{"last": n, "before": *c.PageInfo.StartCursor}
			}
			if !slices.Equal(got, want) {
				t.Errorf("backward walk saw %d messages, want each of the 120 once, in order", len(got))
			}
			t.Logf("120 messages in pages of %d, windows of %d: %d calls forward, %d backward", per, n, forward, backward)
		})
	}

	// The same windows with their arguments written in the query rather
	// than passed as variables: the last page's worth before the cursor
	// of the message at offset 100, then a page's worth after it.
	var tail struct {
		Chat struct {
			Messages struct {
				Edges []struct{ Cursor string }
			}
		}
	}
	e.ok(key, `query($id: ID!) { chat(id: $id) { messages(last: 20) { edges { cursor } } } }`, map[string]any{"id": long.ID}, &tail)
	at100 := tail.Chat.Messages.Edges[0].Cursor
	for _, tc := range []struct {
		args     string
		from, to int
	}{
		{fmt.Sprintf(`last: %d, before: %q`, per, at100), 100 - per, 100},
		{fmt.Sprintf(`first: %d, after: %q`, per, at100), 101, min(101+per, 120)},
	} {
		var out struct{ Chat struct{ Messages msgConn } }
		r := e.ok(key, fmt.Sprintf(`query($id: ID!) { chat(id: $id) { messages(%s) { totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage } } } }`, tc.args),
			map[string]any{"id": long.ID}, &out)
		if !slices.Equal(ids(out.Chat.Messages), want[tc.from:tc.to]) {
			t.Errorf("messages(%s) = %d messages, want [%d, %d)", tc.args, len(out.Chat.Messages.Nodes), tc.from, tc.to)
		}
		if w := pagesCovering(tc.from, tc.to, per); r.calls != w {
			t.Errorf("messages(%s) = [%d, %d) of pages of %d: %d calls, want %d", tc.args, tc.from, tc.to, per, r.calls, w)
		}
	}
}

// The large user's 250 chats, walked forward and backward against both
// versions (20 a page in both; today's pages say per_page null): every chat
// once, newest first, each window at the fewest calls its pages allow.
func TestChats_WalkedInBothVersions(t *testing.T) {
	t.Parallel()
	forEachVersion(t, testChatsWalkedInBothVersions)
}

func testChatsWalkedInBothVersions(t *testing.T, e *env, v restclienttest.Version) {
	key := restclienttest.LargeFamilyKey
	want := seedChatTitles(e.upstream.Chats(key))
	total := len(want)
	if total != 250 {
		t.Fatalf("the large user has %d chats, want 250", total)
	}
	const per = 20
	for _, n := range []int{per, 30} {
		t.Run(fmt.Sprintf("windows of %d", n), func(t *testing.T) {
			var got []string
			var forward, backward int
			vars := map[string]any{"first": n}
			for s := 0; ; s += n {
				var out struct{ Chats chatConn }
				r := e.ok(key, chatsPage, vars, &out)
				forward += r.calls
				end := min(s+n, total)
				c := out.Chats
				if titles := chatTitles(c.Nodes); !slices.Equal(titles, want[s:end]) || c.TotalCount != total {
					t.Fatalf("forward window at %d = %v (totalCount %d), want [%d, %d) of %d", s, titles, c.TotalCount, s, end, total)
				}
				if w := pagesCovering(s, end, per); r.calls != w {
					t.Errorf("forward window [%d, %d): %d calls, want %d", s, end, r.calls, w)
				}
				got = append(got, chatTitles(c.Nodes)...)
				if !c.PageInfo.HasNextPage {
					break
				}
				vars = map[string]any{"first": n, "after": *c.PageInfo.EndCursor}
			}
			if !slices.Equal(got, want) {
				t.Errorf("forward walk saw %d chats, want each of the %d once, in order", len(got), total)
			}

			got = nil
			vars = map[string]any{"last": n}
			for end := total; ; end -= n {
				var out struct{ Chats chatConn }
				r := e.ok(key, chatsPage, vars, &out)
				backward += r.calls
				s := max(end-n, 0)
				c := out.Chats
				if titles := chatTitles(c.Nodes); !slices.Equal(titles, want[s:end]) || c.TotalCount != total {
					t.Fatalf("backward window before %d = %v (totalCount %d), want [%d, %d) of %d", end, titles, c.TotalCount, s, end, total)
				}
				if w := pagesCovering(s, end, per); r.calls != w {
					t.Errorf("backward window [%d, %d): %d calls, want %d", s, end, r.calls, w)
				}
				got = append(chatTitles(c.Nodes), got...)
				if !c.PageInfo.HasPreviousPage {
					break
				}
				vars = map[string]any{"last": n, "before": *c.PageInfo.StartCursor}
			}
			if !slices.Equal(got, want) {
				t.Errorf("backward walk saw %d chats, want each of the %d once, in order", len(got), total)
			}
			t.Logf("%d chats, windows of %d: %d calls forward, %d backward", total, n, forward, backward)
		})
	}
}
