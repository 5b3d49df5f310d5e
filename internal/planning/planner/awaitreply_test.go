package planner_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// invalidateThen is the cache's generations, running then after each
// write is recorded: what another request of the key does at that moment.
type invalidateThen struct {
	cache *restcache.Cache
	then  func(res restclient.Resource)
}

func (i invalidateThen) Invalidate(key callerkey.Key, res restclient.Resource) {
	i.cache.Invalidate(key, res)
	i.then(res)
}

// Another tab of the key reads its list of chats just as a message's
// answer arrives, after the write forgot the list: that answer, without
// the assistant's reply, must not be kept, or the key's next read of the
// list is served it, without the reply, for the list's freshness.
func TestSendMessage_ListReadAsTheMessageIsSentIsNotKept(t *testing.T) {
	u := newUpstream(t)
	chats := u.fake.Chats(restclienttest.DemoKey)
	if len(chats) == 0 {
		t.Fatal("the demo key has no chat")
	}
	who := caller(restclienttest.DemoKey)
	cache := restcache.NewCache(100, time.Hour)
	listCalls := 0
	readList := func() {
		t.Helper()
		if _, err := cache.FetchAs(context.Background(), who.Key, "chats?page=1", func(context.Context) (*restclient.Response, error) {
			listCalls++
			return &restclient.Response{Status: http.StatusOK, Body: []byte(`{"chats":[]}`)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	gens := invalidateThen{cache: cache, then: func(res restclient.Resource) {
		if res == restclient.PartOf("chats") {
			readList()
		}
	}}
	l := planner.New(&planner.Shared{Upstream: u.client(t), Cache: cache, Generations: gens, MaxCalls: 100}, who)
	if _, err := l.SendMessage(t.Context(), chats[0].ID, restclient.SendMessageRequest{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	listCalls = 0
	readList()
	if listCalls != 1 {
		t.Error("the list read as the message was sent was kept: the next read was served it (0 calls), without the reply on its way")
	}
}
