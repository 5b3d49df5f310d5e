package facade_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// --- variant 4: other timestamp and null spellings --------------------------

// otherSpellings renders category timestamps with fractional seconds and an
// offset instead of Z (created_at: the same instant with ".000"; updated_at:
// 123.456 ms later, microseconds shown, as Rails with precision 6), leaves
// out chats' "error" when it is null and leaves out every
// "last_message_at" of the chat list.
type otherSpellings struct {
	t      *testing.T
	offset *time.Location // the offset the timestamps are written in
	mu     sync.Mutex
	rewrit int // objects rewritten
}

const updatedShift = 123456 * time.Microsecond

func (v *otherSpellings) wrap(next http.Handler) http.Handler {
	return rewriteJSON(v.t, next, func(r *http.Request, status int, body any) any {
		obj, ok := body.(map[string]any)
		if status >= 300 || !ok {
			return body
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		switch p := upstreamPath(r); {
		case p == "categories":
			for _, c := range jsonObjects(obj["categories"]) {
				v.retime(c)
			}
		case strings.HasPrefix(p, "categories/"):
			v.retime(obj)
		case p == "chats" && r.Method == http.MethodGet:
			for _, c := range jsonObjects(obj["chats"]) {
				delete(c, "last_message_at")
				deleteNullMember(c, "error")
				v.rewrit++
			}
		case p == "chats" || strings.HasPrefix(p, "chats/"):
			deleteNullMember(obj, "error")
			v.rewrit++
		}
		return obj
	})
}

func jsonObjects(x any) []map[string]any {
	list, _ := x.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, el := range list {
		if m, ok := el.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func deleteNullMember(obj map[string]any, key string) {
	if v, ok := obj[key]; ok && v == nil {
		delete(obj, key)
	}
}

func (v *otherSpellings) retime(c map[string]any) {
	for field, shift := range map[string]time.Duration{"created_at": 0, "updated_at": updatedShift} {
		s, _ := c[field].(string)
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			v.t.Errorf("variant: %s %q is not RFC 3339", field, s)
			continue
		}
		layout := "2006-01-02T15:04:05.000-07:00"
		if shift != 0 {
			layout = "2006-01-02T15:04:05.000000-07:00"
		}
		c[field] = ts.Add(shift).In(v.offset).Format(layout)
	}
	v.rewrit++
}

func TestVariant_OtherTimestampAndNullSpellings(t *testing.T) {
	t.Parallel()
	// run checks everything under the variant. With utcKnownBug, whether
	// timestamps are rendered in UTC is left to a separate, skipped subtest.
	run := func(t *testing.T, offset *time.Location, utcKnownBug bool) {
		v := &otherSpellings{t: t, offset: offset}
		e := newVariantEnv(t, v.wrap)
		seed := restclienttest.New()
		key := restclienttest.DemoKey
		seedCats := e.upstream.Categories(key)
		byName := map[string]restclienttest.Category{}
		for _, c := range seedCats {
			byName[c.Name] = c
		}
		type timed struct {
			Name, CreatedAt, UpdatedAt string
			Parent                     *struct{ Name, CreatedAt, UpdatedAt string }
		}
		checkTimes := func(t *testing.T, c timed) {
			t.Helper()
			s, ok := byName[c.Name]
			if !ok {
				t.Errorf("unknown category %q", c.Name)
				return
			}
			for _, f := range []struct {
				field, got string
				want       time.Time
			}{{"createdAt", c.CreatedAt, s.CreatedAt}, {"updatedAt", c.UpdatedAt, s.UpdatedAt.Add(updatedShift)}} {
				got, err := time.Parse(time.RFC3339Nano, f.got)
				if err != nil || !got.Equal(f.want) {
					t.Errorf("%s.%s = %q, want the instant %s", c.Name, f.field, f.got, f.want.Format(time.RFC3339Nano))
				}
				// The schema promises RFC 3339 in UTC.
				if !utcKnownBug && !strings.HasSuffix(f.got, "Z") {
					t.Errorf("%s.%s = %q, not in UTC as the schema says", c.Name, f.field, f.got)
				}
			}
		}

		t.Run("category list", func(t *testing.T) {
			e := variantEnvFor(t, e)
			var out struct {
				Categories struct{ Nodes []timed }
			}
			e.ok(key, `{ categories(first: 100) { nodes { name createdAt updatedAt } } }`, nil, &out)
			if len(out.Categories.Nodes) != len(seedCats) {
				t.Fatalf("%d categories, want %d", len(out.Categories.Nodes), len(seedCats))
			}
			v.mu.Lock()
			if v.rewrit == 0 {
				t.Error("nothing was rewritten: the variant was not exercised")
			}
			v.mu.Unlock()
			for _, c := range out.Categories.Nodes {
				checkTimes(t, c)
			}
		})
		t.Run("category by id with parent", func(t *testing.T) {
			e := variantEnvFor(t, e)
			var out struct{ Category timed }
			r := e.ok(key, `query($id: ID!) { category(id: $id) { name createdAt updatedAt parent { name createdAt updatedAt } } }`,
				map[string]any{"id": byName["Restaurants"].ID}, &out)
			wantCalls(t, r, 2)
			checkTimes(t, out.Category)
			if p := out.Category.Parent; p == nil || p.Name != "Food & Drink" {
				t.Fatalf("parent = %+v", p)
			} else {
				checkTimes(t, timed{Name: p.Name, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt})
			}
		})
		t.Run("chat list", func(t *testing.T) {
			e := variantEnvFor(t, e)
			nulls, values := 0, 0
			for _, k := range []string{key, restclienttest.OtherFamilyKey, restclienttest.LargeFamilyKey} {
				want := seedChatList(t, seed, k)
				var out struct{ Chats chatConn }
				e.ok(k, `{ chats(first: 100) { totalCount nodes { id title error messageCount firstMessageAt } } }`, nil, &out)
				if len(out.Chats.Nodes) != min(100, len(want)) {
					t.Fatalf("%s: %d chats, want %d", k, len(out.Chats.Nodes), min(100, len(want)))
				}
				for i, n := range out.Chats.Nodes {
					w := want[i]
					if n.ID != w.ID || n.MessageCount != w.MessageCount || nullableString(n.Error) != nullableString(w.Error) {
						t.Errorf("chat %d = {%s %s error %s count %d}, want {%s %s error %s count %d}", i,
							n.ID, n.Title, nullableString(n.Error), n.MessageCount, w.ID, w.Title, nullableString(w.Error), w.MessageCount)
					}
					if wantMessageTime(t, n.Title, "firstMessageAt", n.FirstMessageAt, w.FirstMessageAt, true) {
						nulls++
					} else if n.FirstMessageAt != nil {
						values++
					}
				}
			}
			// Absent is read as null: no wrong value, but a chat with
			// messages then shows none. Worth knowing, not a failure.
			t.Logf("firstMessageAt with last_message_at absent: %d null where the chat has messages, %d right values", nulls, values)
		})
		t.Run("chat list message times, strictly", func(t *testing.T) {
			e := variantEnvFor(t, e)
			for _, k := range []string{key, restclienttest.LargeFamilyKey} {
				want := seedChatList(t, seed, k)
				var out struct{ Chats chatConn }
				e.ok(k, `{ chats(first: 20) { nodes { id title messageCount firstMessageAt lastMessageAt } } }`, nil, &out)
				for i, n := range out.Chats.Nodes {
					wantMessageTime(t, n.Title, "firstMessageAt", n.FirstMessageAt, want[i].FirstMessageAt, false)
					wantMessageTime(t, n.Title, "lastMessageAt", n.LastMessageAt, seedNewestAt(t, seed, k, n.ID), false)
				}
			}
		})
		t.Run("chat show, create and rename", func(t *testing.T) {
			e := variantEnvFor(t, e)
			for _, w := range seedChatList(t, seed, key) {
				var out struct{ Chat chatNode }
				e.ok(key, `query($id: ID!) { chat(id: $id) { title error lastMessageAt createdAt } }`, map[string]any{"id": w.ID}, &out)
				if nullableString(out.Chat.Error) != nullableString(w.Error) {
					t.Errorf("%s: error = %s, want %s", w.Title, nullableString(out.Chat.Error), nullableString(w.Error))
				}
				wantMessageTime(t, w.Title, "lastMessageAt", out.Chat.LastMessageAt, seedNewestAt(t, seed, key, w.ID), false)
			}
			var created struct {
				CreateChat struct{ Chat *chatNode }
			}
			e.ok(key, `mutation { createChat(input: {title: "Spellings", message: "Hi"}) { chat { id title error messageCount lastMessageAt } } }`, nil, &created)
			c := created.CreateChat.Chat
			if c == nil || c.Error != nil || c.Title != "Spellings" || c.MessageCount != 1 || c.LastMessageAt == nil {
				t.Fatalf("createChat = %+v, want the chat, error null, one message", c)
			}
			var renamed struct {
				UpdateChat struct{ Chat *chatNode }
			}
			e.ok(key, `mutation($id: ID!) { updateChat(input: {id: $id, title: "Renamed"}) { chat { title error } } }`, map[string]any{"id": c.ID}, &renamed)
			if rc := renamed.UpdateChat.Chat; rc == nil || rc.Error != nil || rc.Title != "Renamed" {
				t.Errorf("updateChat = %+v, want Renamed with error null", rc)
			}
		})
		if utcKnownBug {
			t.Run("rendered in UTC", func(t *testing.T) {
				e := variantEnvFor(t, e)
				var out struct {
					Categories struct{ Nodes []timed }
				}
				e.ok(key, `{ categories(first: 100) { nodes { name createdAt updatedAt } } }`, nil, &out)
				for _, c := range out.Categories.Nodes {
					for _, ts := range []string{c.CreatedAt, c.UpdatedAt} {
						if !strings.HasSuffix(ts, "Z") {
							t.Errorf("%s: %q is not in UTC", c.Name, ts)
						}
					}
				}
			})
		}
	}
	t.Run("fractional seconds, +00:00", func(t *testing.T) { run(t, time.FixedZone("", 0), false) })
	// Not in the brief's variant, but what Rails renders when the app's
	// time zone is not UTC: the same instants, another offset.
	t.Run("fractional seconds, +05:30", func(t *testing.T) { run(t, time.FixedZone("IST", 5*3600+1800), true) })
}
