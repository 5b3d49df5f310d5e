package restclient

import (
	"net/http"
	"testing"
	"time"
)

// An unlimited reading never says the key is out of quota, and a limited
// one replacing it is taken (the cautious reading).
func TestRateLimit_Unlimited(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	unlimited := RateLimit{Unlimited: true, Limit: -1, Remaining: -1}
	if _, out := unlimited.Exhausted(now); out {
		t.Error("an unlimited reading is exhausted")
	}
	limited := RateLimit{Limit: 100, Remaining: 0, ResetAt: now.Add(time.Minute)}
	if !Newer(limited, unlimited) || Newer(unlimited, limited) {
		t.Error("a limited reading does not replace an unlimited one")
	}
}

// Since v0.6.6 the chats and messages report "per_page": null; a page
// shows its size all the same.
func TestPagination_Size(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Pagination
		n    int
		want int
	}{
		{"reported", Pagination{Page: 1, PerPage: 50, TotalCount: 120, TotalPages: 3}, 50, 50},
		{"a page before the last holds a whole page", Pagination{Page: 2, TotalCount: 120, TotalPages: 6}, 20, 20},
		{"the last page holds what is left", Pagination{Page: 6, TotalCount: 115, TotalPages: 6}, 15, 20},
		{"a full last page", Pagination{Page: 3, TotalCount: 60, TotalPages: 3}, 20, 20},
		{"one page tells nothing", Pagination{Page: 1, TotalCount: 7, TotalPages: 1}, 7, 0},
		{"an empty list tells nothing", Pagination{Page: 1, TotalPages: 1}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Size(tc.n); got != tc.want {
				t.Errorf("Size(%d) = %d, want %d", tc.n, got, tc.want)
			}
		})
	}
}

// A chat whose newest message is the user's, without an error, awaits the
// assistant's reply: its answer must not be kept.
func TestAwaitsReply(t *testing.T) {
	const path = "chats/0b7c2a5e-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name, path, body string
		want             bool
	}{
		{"newest is the user's", path, `{"id":"c","messages":[{"id":"m1","role":"assistant"},{"id":"m2","role":"user"}],"pagination":{"page":1,"total_count":2,"total_pages":1}}`, true},
		{"the reply is being written", path, `{"id":"c","messages":[{"id":"m1","role":"user"},{"id":"m2","role":"assistant","updated_at":"` + time.Now().Add(-10*time.Second).UTC().Format(time.RFC3339) + `"}],"pagination":{"page":1,"total_count":2,"total_pages":1}}`, true},
		{"newest is the reply", path, `{"id":"c","messages":[{"id":"m1","role":"user"},{"id":"m2","role":"assistant"}],"pagination":{"page":1,"total_count":2,"total_pages":1}}`, false},
		{"the reply failed", path, `{"id":"c","error":"Failed","messages":[{"id":"m1","role":"user"}]}`, false},
		{"a first page that is not the last", path, `{"id":"c","messages":[{"id":"m1","role":"user"}],"pagination":{"page":1,"total_count":40,"total_pages":2}}`, false},
		{"no message", path, `{"id":"c","messages":[]}`, false},
		{"not a chat", "categories", `{"categories":[]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &Response{Status: http.StatusOK, Body: []byte(tc.body)}
			if got := AwaitsReply(tc.path, resp); got != tc.want {
				t.Errorf("AwaitsReply = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestEndpoint_SubResource(t *testing.T) {
	if got := Endpoint(http.MethodPost, "chats/0b7c2a5e-0000-4000-8000-000000000001/messages"); got != "POST /api/v1/chats/{id}/messages" {
		t.Errorf("Endpoint = %q", got)
	}
}
