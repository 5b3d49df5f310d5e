package planner

import (
	"context"
	"errors"
	"strings"
	"sync"

	"suregql/restclient"
)

// memo makes one GraphQL operation send each distinct GET at most once:
// aliases, repeated fields and resolvers that need the same page share the
// first answer (or error). It lives and dies with the operation, so it never
// serves anything stale to a later one.
type memo struct {
	next restclient.Fetcher // nil: send directly
	mu   sync.Mutex
	m    map[string]*memoCall
}

type memoCall struct {
	done chan struct{}
	resp *restclient.Response
	err  error
}

var errFetchAborted = errors.New("loader: upstream fetch aborted")

func newMemo(next restclient.Fetcher) *memo {
	return &memo{next: next, m: map[string]*memoCall{}}
}

// Fetch implements restclient.Fetcher.
func (m *memo) Fetch(ctx context.Context, key restclient.RequestKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	m.mu.Lock()
	if c, ok := m.m[key.Path]; ok {
		m.mu.Unlock()
		select {
		case <-c.done:
			return c.resp, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	// The error stands until the fetch returns, so that a panicking fetch
	// leaves waiters an error, never a nil answer.
	c := &memoCall{done: make(chan struct{}), err: errFetchAborted}
	m.m[key.Path] = c
	m.mu.Unlock()

	// Waiters must never hang, even if the fetch panics.
	defer close(c.done)
	if m.next != nil {
		c.resp, c.err = m.next.Fetch(ctx, key, fetch)
	} else {
		c.resp, c.err = fetch(ctx)
	}
	return c.resp, c.err
}

// forget drops remembered answers whose path starts with prefix, after a
// write made them stale.
func (m *memo) forget(prefix string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.m {
		if strings.HasPrefix(k, prefix) {
			delete(m.m, k)
		}
	}
}
