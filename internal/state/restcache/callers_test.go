package restcache_test

import (
	"context"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// testRing keys the tests' callers, as the edge's ring keys a request's.
var testRing = callerkey.NewRing(nil, false)

// keyOf is what the stores know apiKey by.
func keyOf(apiKey string) callerkey.Key { return testRing.Key(apiKey) }

// keyHash is the id the stores know apiKey by.
func keyHash(apiKey string) string { return keyOf(apiKey).ID() }

// reqKey names a GET of one caller, as the tests send them.
type reqKey struct{ APIKey, Path string }

// fetcher is what the tests send GETs of many callers through.
type fetcher interface {
	Fetch(ctx context.Context, key reqKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error)
}

// asFetcher passes each GET through its fetchers in order, for the
// caller the GET names, as the planner's per-caller chain does
// (restcache.For).
type asFetcher []restcache.KeyedFetcher

func (fs asFetcher) Fetch(ctx context.Context, key reqKey, fetch func(context.Context) (*restclient.Response, error)) (*restclient.Response, error) {
	return restcache.For(keyOf(key.APIKey), fs...).Fetch(ctx, restclient.RequestKey{Path: key.Path}, fetch)
}

// through returns the fetcher that passes each GET through fs in order.
func through(fs ...restcache.KeyedFetcher) asFetcher { return fs }
