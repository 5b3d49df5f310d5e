package restcache

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/suregql/suregql/internal/planning/flight"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// DefaultRejoins is how many more times a caller that joined another
// caller's failing GET tries again, shared with everyone doing the same.
const DefaultRejoins = 2

// Coalescer lets identical GETs (same key, same URL) that are in flight at
// the same moment share one upstream call. The first caller's fetch runs;
// the others wait for its answer. The shared call stops when no caller
// waits for it any more, and a panic inside it becomes an error for its
// callers. The zero value is ready to use; set Generations (shared with the
// Cache) so that a key's reads after its own write never join a GET sent
// before it.
type Coalescer struct {
	Generations *Generations
	// Rejoins bounds the fresh attempts of a caller whose shared GET
	// failed with a retryable error; 0 means DefaultRejoins.
	Rejoins int

	group  flight.Group[string, *restclient.Response]
	sent   atomic.Int64
	shared atomic.Int64
}

// FetchAs implements KeyedFetcher.
func (c *Coalescer) FetchAs(ctx context.Context, key callerkey.Key, path string, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	id := requestID(key, path)
	if c.Generations != nil {
		// The count of forgotten keys first: a key forgotten and written
		// to since a GET was sent may read its generation again.
		forgotten := c.Generations.Forgotten(key)
		id += " #" + strconv.FormatUint(c.Generations.Of(key, path), 10) + "/" + strconv.FormatUint(forgotten, 10)
	}
	if shared, ok := ctx.Value(sharedGenerationKey{}).(string); ok {
		// A cache shared by replicas read the key's generation there: a
		// read after another replica's write must not join a GET this
		// process sent before it.
		id += " @" + shared
	}
	rejoins := c.Rejoins
	if rejoins <= 0 {
		rejoins = DefaultRejoins
	}
	counted := func(ctx context.Context) (*restclient.Response, error) {
		c.sent.Add(1)
		return fetch(ctx)
	}
	for joins := 0; ; joins++ {
		resp, started, err := c.group.Do(ctx, id, counted)
		var gate *restclient.GateError
		switch {
		case errors.As(err, &gate) && started:
			c.sent.Add(-1) // the gate stopped it before the network
			return nil, err
		case errors.As(err, &gate):
			// The starter's operation refused the call (its budget); that
			// says nothing about this caller, who asks for itself.
			c.sent.Add(1)
			return fetch(ctx)
		case err == nil:
			if !started {
				c.shared.Add(1)
			}
			return resp, nil
		case started || joins >= rejoins || ctx.Err() != nil || !restclient.Retryable(err):
			// A caller that started the GET had the client's whole retry
			// policy; an upstream answer (404, 429…) is the same for all.
			return nil, err
		}
		// This caller joined a GET that failed in a way a new attempt may
		// fix, possibly on that GET's last retry: it gets attempts of its
		// own, still shared with the other callers doing the same, so that
		// joining never makes a caller likelier to fail than asking alone.
	}
}

// Stats returns how many GETs the coalescer sent, how many callers were
// answered by another caller's GET, and how many callers wait for an answer
// now.
func (c *Coalescer) Stats() (sent, shared, waiting int64) {
	return c.sent.Load(), c.shared.Load(), int64(c.group.Waiting())
}

// sharedGenerationKey is the context key under which a cache shared by
// replicas tells the Coalescer behind it the key's generation it read.
type sharedGenerationKey struct{}

// WithSharedGeneration returns ctx telling the Coalescer that the key's
// generation of the resource it reads is gen in a store shared by replicas.
func WithSharedGeneration(ctx context.Context, gen string) context.Context {
	return context.WithValue(ctx, sharedGenerationKey{}, gen)
}
