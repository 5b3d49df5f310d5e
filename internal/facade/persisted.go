package facade

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
)

// Persisted queries are registered for callers the upstream knows only:
// a stranger's request that sends a query with its hash (Automatic
// Persisted Queries) has the query answered, but not stored, until an
// answer of the upstream has accepted the request's key. Stored before
// that, any client without a key could fill the store (Redis, shared by
// the replicas) with documents and push out what the facade keeps there
// for its callers.

// keyedQueryStore is a persisted-query store that bounds what each key
// may register (redisstate.PersistedQueries).
type keyedQueryStore interface {
	AddFor(ctx context.Context, key callerkey.Key, hash, query string)
}

// acceptedKeysOnly is the persisted-query store as the APQ extension sees
// it: Get as the store has it; Add held back in the request's
// pendingQueries, registered by registerPersisted once the key is known
// to be accepted.
type acceptedKeysOnly struct{ store graphql.Cache[string] }

func (c acceptedKeysOnly) Get(ctx context.Context, hash string) (string, bool) {
	return c.store.Get(ctx, hash)
}

func (c acceptedKeysOnly) Add(ctx context.Context, hash, query string) {
	if p := pendingFrom(ctx); p != nil {
		p.add(hash, query)
		registerIfAccepted(ctx, c.store, p) // a key accepted by earlier answers
	}
}

// pendingQueries are the registrations a request asked for, not made yet.
type pendingQueries struct {
	mu      sync.Mutex
	queries [][2]string // hash, query
}

func (p *pendingQueries) add(hash, query string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries = append(p.queries, [2]string{hash, query})
}

func (p *pendingQueries) take() [][2]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queries
	p.queries = nil
	return q
}

type pendingKey struct{}

func pendingFrom(ctx context.Context) *pendingQueries {
	p, _ := ctx.Value(pendingKey{}).(*pendingQueries)
	return p
}

// withPendingQueries gives a request a place for the registrations it
// asks for (the operations of a batch share it): gqlhttp's
// Options.RequestContext.
func withPendingQueries(ctx context.Context) context.Context {
	return context.WithValue(ctx, pendingKey{}, &pendingQueries{})
}

// registerPersisted registers, once an operation has answered, the
// queries its request asked to register, when the upstream has accepted
// the key (in this operation or an earlier one).
func registerPersisted(store graphql.Cache[string]) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if p := pendingFrom(ctx); p != nil {
			registerIfAccepted(ctx, store, p)
		}
		return resp
	}
}

// registerIfAccepted stores p's queries when the upstream has accepted
// the request's key (planner.Planner.Accepted: the one record of accepted
// keys, which this process's answers feed). Not on a rate-limit reading
// of the key, which a proxy's 429 makes up for any key.
func registerIfAccepted(ctx context.Context, store graphql.Cache[string], p *pendingQueries) {
	l := planner.From(ctx)
	if l == nil || !l.Accepted() {
		return
	}
	keyed, bounded := store.(keyedQueryStore)
	for _, q := range p.take() {
		if bounded {
			keyed.AddFor(ctx, l.Key(), q[0], q[1])
		} else {
			store.Add(ctx, q[0], q[1])
		}
	}
}
