package facade_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// --- variant 3: the chat list pages by 25 -----------------------------------

// chatPagesOf25 serves GET /api/v1/chats with 25 chats a page instead of 20,
// and says so in pagination.per_page. The fake answers each request first
// (it is counted, authenticates and rate-limits it); its chats and
// pagination are then replaced by page N of 25 of the same list, read from
// a second fake with the same seed (chats created in the test's fake are
// not seen: the test creates none).
type chatPagesOf25 struct {
	t      *testing.T
	shadow *restclienttest.Server
	mu     sync.Mutex
	lists  map[string][]any // key -> every chat, newest first
	served atomic.Int64
}

const variantChatsPerPage = 25

func (v *chatPagesOf25) wrap(next http.Handler) http.Handler {
	return rewriteJSON(v.t, next, func(r *http.Request, status int, body any) any {
		obj, ok := body.(map[string]any)
		if r.Method != http.MethodGet || upstreamPath(r) != "chats" || status != http.StatusOK || !ok {
			return body
		}
		all := v.list(r)
		total := len(all)
		pages := max(1, (total+variantChatsPerPage-1)/variantChatsPerPage)
		page := min(askedPage(r), pages) // overflow: the last page, as pagy
		from := min((page-1)*variantChatsPerPage, total)
		to := min(from+variantChatsPerPage, total)
		obj["chats"] = append([]any{}, all[from:to]...)
		obj["pagination"] = map[string]any{"page": page, "per_page": variantChatsPerPage, "total_count": total, "total_pages": pages}
		v.served.Add(1)
		return obj
	})
}

// list reads every chat of the request's key from the shadow fake, once.
func (v *chatPagesOf25) list(r *http.Request) []any {
	key := r.Header.Get("X-Api-Key")
	v.mu.Lock()
	defer v.mu.Unlock()
	if l, ok := v.lists[key]; ok {
		return l
	}
	var all []any
	for page := 1; ; page++ {
		req := httptest.NewRequestWithContext(r.Context(), http.MethodGet, "/api/v1/chats?page="+strconv.Itoa(page), nil)
		req.Header.Set("X-Api-Key", key)
		a := captureUpstream(v.shadow, req)
		var p struct {
			Chats      []any
			Pagination struct {
				Page       int `json:"page"`
				TotalPages int `json:"total_pages"`
			}
		}
		dec := json.NewDecoder(bytes.NewReader(a.body))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil || a.status != http.StatusOK {
			v.t.Errorf("variant: shadow chats page %d: %d %s", page, a.status, a.body)
			return nil
		}
		all = append(all, p.Chats...)
		if p.Pagination.Page >= p.Pagination.TotalPages {
			break
		}
	}
	v.lists[key] = all
	return all
}

func TestVariant_ChatListPagesBy25(t *testing.T) {
	t.Parallel()
	v := &chatPagesOf25{t: t, shadow: restclienttest.New(), lists: map[string][]any{}}
	e := newVariantEnv(t, v.wrap)
	key := restclienttest.LargeFamilyKey
	var want []string
	for _, c := range e.upstream.Chats(key) {
		want = append(want, c.ID)
	}
	if len(want) != 250 {
		t.Fatalf("the large family has %d chats, want 250", len(want))
	}
	ids := func(nodes []chatNode) []string {
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[i] = n.ID
		}
		return out
	}

	for _, n := range []int{7, 20, 25, 33, 50, 100} {
		t.Run(fmt.Sprintf("forward %d at a time", n), func(t *testing.T) {
			e := variantEnvFor(t, e)
			before := v.served.Load()
			var walked []string
			vars := map[string]any{"first": n}
			calls, ops := 0, 0
			for {
				var out struct{ Chats chatConn }
				r := e.ok(key, chatsPage, vars, &out)
				calls += r.calls
				ops++
				c := out.Chats
				if c.TotalCount != len(want) {
					t.Errorf("totalCount = %d, want %d", c.TotalCount, len(want))
				}
				if c.PageInfo.HasPreviousPage != (len(walked) > 0) {
					t.Errorf("at offset %d: hasPreviousPage = %v", len(walked), c.PageInfo.HasPreviousPage)
				}
				if wantN := min(n, len(want)-len(walked)); len(c.Nodes) != wantN {
					t.Errorf("at offset %d: %d chats, want %d", len(walked), len(c.Nodes), wantN)
				}
				walked = append(walked, ids(c.Nodes)...)
				if c.PageInfo.HasNextPage != (len(walked) < len(want)) {
					t.Errorf("at offset %d: hasNextPage = %v", len(walked), c.PageInfo.HasNextPage)
				}
				if !c.PageInfo.HasNextPage || c.PageInfo.EndCursor == nil || ops > 2*len(want) {
					break
				}
				vars["after"] = *c.PageInfo.EndCursor
			}
			if !slices.Equal(walked, want) {
				t.Errorf("forward walk visited %d chats, want each of the %d once, in order", len(walked), len(want))
			}
			if v.served.Load() == before {
				t.Error("no page of 25 was served: the variant was not exercised")
			}
			t.Logf("forward, %d at a time: %d operations, %d calls (%d pages of 25 hold the list)", n, ops, calls, (len(want)+24)/25)
		})
		t.Run(fmt.Sprintf("backward %d at a time", n), func(t *testing.T) {
			e := variantEnvFor(t, e)
			var walked []string
			vars := map[string]any{"last": n}
			calls, ops := 0, 0
			for {
				var out struct{ Chats chatConn }
				r := e.ok(key, chatsPage, vars, &out)
				calls += r.calls
				ops++
				c := out.Chats
				if c.TotalCount != len(want) {
					t.Errorf("totalCount = %d, want %d", c.TotalCount, len(want))
				}
				if c.PageInfo.HasNextPage != (len(walked) > 0) {
					t.Errorf("%d from the end: hasNextPage = %v", len(walked), c.PageInfo.HasNextPage)
				}
				if wantN := min(n, len(want)-len(walked)); len(c.Nodes) != wantN {
					t.Errorf("%d from the end: %d chats, want %d", len(walked), len(c.Nodes), wantN)
				}
				walked = append(ids(c.Nodes), walked...)
				if c.PageInfo.HasPreviousPage != (len(walked) < len(want)) {
					t.Errorf("%d from the end: hasPreviousPage = %v", len(walked), c.PageInfo.HasPreviousPage)
				}
				if !c.PageInfo.HasPreviousPage || c.PageInfo.StartCursor == nil || ops > 2*len(want) {
					break
				}
				vars["before"] = *c.PageInfo.StartCursor
			}
			if !slices.Equal(walked, want) {
				t.Errorf("backward walk visited %d chats, want each of the %d once, in order", len(walked), len(want))
			}
			t.Logf("backward, %d at a time: %d operations, %d calls", n, ops, calls)
		})
	}
}
