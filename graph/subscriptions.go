package graph

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/internal/planning/live"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// errNoHub: the server was assembled without a Hub (a wiring bug).
var errNoHub = errors.New("subscriptions are not wired on this server")

// subscribe opens the caller's subscription to res: refused before any
// call past the limits; the first poll's error (NOT_FOUND) is the
// field's.
func (r *Resolver) subscribe(ctx context.Context, res live.Resource) (*live.Subscription, error) {
	if r.Live == nil {
		return nil, errNoHub
	}
	p, err := planner.For(ctx)
	if err != nil {
		return nil, err
	}
	return r.Live.Subscribe(ctx, p, res)
}

// nextState waits for sub's next state; ok is false once the
// subscription or its client is gone.
func nextState(ctx context.Context, sub *live.Subscription) (st live.State, ok bool) {
	select {
	case st, ok = <-sub.C:
		return st, ok
	case <-ctx.Done():
		return live.State{}, false
	}
}

// expectReply tells the hub that p's key awaits the assistant's reply in
// chat id: its loop of the chat, if any, polls fast.
func (r *Resolver) expectReply(p *planner.Planner, id string) {
	if r.Live != nil {
		r.Live.Expect(p.Key().ID(), live.Resource{Kind: live.KindChat, ID: id})
	}
}

// chatMessageAdded pushes each message appended to the chat after the
// subscription started, and each message again whose content or update
// time changed (Sure saves a reply at its first chunk and writes the rest
// into it: the client, Apollo's cache by id, sees it grow). Only the page
// holding the newest messages is read: a burst of more than a page
// between two polls pushes that page's messages.
func (r *Resolver) chatMessageAdded(ctx context.Context, chatID string) (<-chan *model.Message, error) {
	id, err := canonicalID("chatId", chatID)
	if err != nil {
		return nil, err
	}
	sub, err := r.subscribe(ctx, live.Resource{Kind: live.KindChat, ID: id})
	if err != nil {
		return nil, err
	}
	seen := map[string]messageVersion{}
	for _, m := range sub.First.Chat.Messages {
		seen[m.ID] = versionOf(&m)
	}
	out := make(chan *model.Message)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			st, ok := nextState(ctx, sub)
			if !ok {
				return
			}
			// What was seen is the page read last: a long subscription
			// holds one page's versions, not every message it pushed.
			page := make(map[string]messageVersion, len(st.Chat.Messages))
			for i := range st.Chat.Messages {
				page[st.Chat.Messages[i].ID] = versionOf(&st.Chat.Messages[i])
			}
			prev := seen
			seen = page
			for i := range st.Chat.Messages {
				m := &st.Chat.Messages[i]
				if old, had := prev[m.ID]; had && old == page[m.ID] {
					continue
				}
				select {
				case out <- messageFromREST(m):
					r.Live.Pushed(live.KindChat)
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// messageVersion is what tells a message's versions apart.
type messageVersion struct {
	content string
	updated time.Time
}

func versionOf(m *restclient.Message) messageVersion {
	return messageVersion{content: m.Content, updated: m.UpdatedAt}
}

// importUpdated pushes the import at the start, then whenever its status
// or statusDetail changes, and completes once it is terminal.
func (r *Resolver) importUpdated(ctx context.Context, importID string) (<-chan *model.Import, error) {
	id, err := canonicalID("id", importID)
	if err != nil {
		return nil, err
	}
	sub, err := r.subscribe(ctx, live.Resource{Kind: live.KindImport, ID: id})
	if err != nil {
		return nil, err
	}
	out := make(chan *model.Import, 1)
	last := sub.First.Import
	out <- importFromREST(last)
	r.Live.Pushed(live.KindImport)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			st, ok := nextState(ctx, sub)
			if !ok {
				return
			}
			imp := st.Import
			if imp.Status == last.Status && reflect.DeepEqual(imp.StatusDetail, last.StatusDetail) {
				continue
			}
			last = imp
			select {
			case out <- importFromREST(imp):
				r.Live.Pushed(live.KindImport)
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
