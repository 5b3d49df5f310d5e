package restcache

import (
	"context"
	"sync"

	"github.com/suregql/suregql/restclient"
)

// RateLimitNote carries one request's read of its key's shared rate-limit
// reading. A store that keeps readings where a read costs a round trip
// (Redis) and is asked for something else first (a cached answer) reads
// the reading in the same round trip and notes it here, so that the
// request does not ask again. Each request has its own note.
type RateLimitNote struct {
	mu   sync.Mutex
	read bool
	rl   restclient.RateLimit
	ok   bool
}

type noteKey struct{}

// WithRateLimitNote returns ctx carrying n.
func WithRateLimitNote(ctx context.Context, n *RateLimitNote) context.Context {
	return context.WithValue(ctx, noteKey{}, n)
}

// RateLimitNoteFrom returns the request's note, or nil.
func RateLimitNoteFrom(ctx context.Context) *RateLimitNote {
	n, _ := ctx.Value(noteKey{}).(*RateLimitNote)
	return n
}

// Wanted reports whether the reading has not been read yet.
func (n *RateLimitNote) Wanted() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.read
}

// Set notes a read: the reading, or ok false when there is none.
func (n *RateLimitNote) Set(rl restclient.RateLimit, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.read, n.rl, n.ok = true, rl, ok
}

// Get returns the noted reading; read is false when nothing was noted.
func (n *RateLimitNote) Get() (rl restclient.RateLimit, ok, read bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rl, n.ok, n.read
}
