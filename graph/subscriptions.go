package graph

import (
	"context"
	"errors"
	"reflect"
	"sync"
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
// subscription or its client is gone. A subscription that ended on its
// own for a reason (its key revoked, its resource gone) leaves it in the
// operation's StreamEnd, for the transport to tell the subscriber.
func nextState(ctx context.Context, sub *live.Subscription) (st live.State, ok bool) {
	select {
	case st, ok = <-sub.C:
		if !ok {
			if err := sub.Err(); err != nil {
				if end, _ := ctx.Value(streamEndKey{}).(*StreamEnd); end != nil {
					end.set(err)
				}
			}
		}
		return st, ok
	case <-ctx.Done():
		return live.State{}, false
	}
}

// StreamEnd is where a subscription's resolver leaves why its stream
// ended before its client ended it: the key the upstream now rejects
// (UNAUTHENTICATED), the chat or import gone (NOT_FOUND). A stream that
// merely stops would read as a subscription completed; the transport
// (gqlhttp) makes one StreamEnd per subscription operation
// (WithStreamEnd) and, after the last event, tells the subscriber the
// error, presented as every error is.
type StreamEnd struct {
	mu  sync.Mutex
	err error
}

type streamEndKey struct{}

// WithStreamEnd returns ctx with a new StreamEnd for the resolvers of the
// operation run with it.
func WithStreamEnd(ctx context.Context) (context.Context, *StreamEnd) {
	end := &StreamEnd{}
	return context.WithValue(ctx, streamEndKey{}, end), end
}

// StreamEndFrom returns the StreamEnd of ctx's operation, or nil.
func StreamEndFrom(ctx context.Context) *StreamEnd {
	end, _ := ctx.Value(streamEndKey{}).(*StreamEnd)
	return end
}

func (e *StreamEnd) set(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

// Take returns why the stream ended, once: nil after the first call, and
// when it ended for no reason to tell.
func (e *StreamEnd) Take() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.err
	e.err = errTaken
	if errors.Is(err, errTaken) {
		return nil
	}
	return err
}

// errTaken marks a StreamEnd whose reason was taken: none is set after.
var errTaken = errors.New("the stream's end was told")

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
