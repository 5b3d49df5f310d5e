// Package restcache holds what the facade shares between requests to save
// upstream calls: a coalescer that lets identical GETs in flight at the same
// moment share one call, an optional TTL cache of GET answers, and what is
// known of each key (its rate limit, its family's size, its writes, whether
// the upstream accepted or rejected it: AcceptedKeys, RejectedKeys). All of
// it is keyed by a hash of the API key, so nothing is ever shared between
// two keys, and every map keyed by a caller is bounded.
package restcache

import (
	"context"
	"strings"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// DefaultMaxKeys bounds every map keyed by API key: past it the least
// recently seen key is forgotten, so strangers sending random keys cannot
// grow memory.
const DefaultMaxKeys = 100_000

// KeyedFetcher is a restclient.Fetcher told the caller's Key, computed once
// per request, rather than its API key.
type KeyedFetcher interface {
	FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error)
}

// For returns a Fetcher for one request made with key: it passes each GET
// through fs in order, as Chain does, telling them key instead of hashing
// the request's API key. Nil entries are skipped.
func For(key callerkey.Key, fs ...KeyedFetcher) restclient.Fetcher {
	var live []KeyedFetcher
	for _, f := range fs {
		if f != nil {
			live = append(live, f)
		}
	}
	return keyedChain{key: key, fs: live}
}

type keyedChain struct {
	key callerkey.Key
	fs  []KeyedFetcher
}

func (c keyedChain) Fetch(ctx context.Context, rk restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	if len(c.fs) == 0 {
		return fetch(ctx)
	}
	return c.fs[0].FetchAs(ctx, c.key, rk.Path, func(ctx context.Context) (*restclient.Response, error) {
		return keyedChain{key: c.key, fs: c.fs[1:]}.Fetch(ctx, rk, fetch)
	})
}

// RateLimitStore remembers the newest rate-limit reading of each key:
// RateLimits in memory, or one shared by replicas (package sharedstate).
type RateLimitStore interface {
	// Observe records rl unless a newer reading of key is known.
	Observe(key callerkey.Key, rl restclient.RateLimit)
	// Get returns the newest reading of key.
	Get(key callerkey.Key) (restclient.RateLimit, bool)
	// Exhausted reports whether key is known to have no request left at
	// now, and how long until its window resets.
	Exhausted(key callerkey.Key, now time.Time) (retryAfter time.Duration, exhausted bool)
	// Forget drops what is known of key (the upstream rejected it).
	Forget(key callerkey.Key)
}

// FamilySizeStore remembers the size of each key's family, a planning
// hint: FamilySizes in memory, or one shared by replicas.
type FamilySizeStore interface {
	Observe(key callerkey.Key, class string, n int)
	Get(key callerkey.Key, class string) (int, bool)
	Forget(key callerkey.Key)
}

// AnswerCache keeps GET answers per key: Cache in memory, or one shared by
// replicas. A key's write invalidates its answers of that resource
// (Invalidator); Forget drops all of a key's answers.
type AnswerCache interface {
	KeyedFetcher
	Invalidator
	Forget(key callerkey.Key)
	// Counts returns what the cache answered: fresh, stale, passed on.
	Counts() CacheCounts
}

// Holder is an AnswerCache that can be told not to keep a key's answers
// of a resource for a while: the upstream is about to change them by
// itself (the assistant's reply to a message, written asynchronously), so
// an answer read meanwhile would hide the change for its freshness. A hold
// lasts ReplyWait, or until a chat read after it began shows the
// assistant's reply (restclient.ReplyCame), whichever comes first.
type Holder interface {
	Hold(key callerkey.Key, res restclient.Resource, d time.Duration)
}

// ReplyWait is how long a key's chat answers are not kept after it sent a
// message: Sure's assistant replies within seconds, a long tool-using
// answer within a minute or two. A chat shown awaiting its reply past it
// is still never kept (restclient.AwaitsReply).
const ReplyWait = restclient.ReplyWindow

// Invalidator is told of a key's write to a resource ("chats"), after
// which no read of that key may be answered from before it.
type Invalidator interface {
	Invalidate(key callerkey.Key, res restclient.Resource)
}

func requestID(key callerkey.Key, path string) string {
	return key.ID() + " " + path
}

// keyOfID returns the key hash an id made by requestID starts with.
func keyOfID(id string) string {
	h, _, _ := strings.Cut(id, " ")
	return h
}
