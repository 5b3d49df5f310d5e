// Package loader holds the per-operation data layer of the facade: the
// caller's keyed upstream client, a memo that sends each GET once per
// operation, the by-id category loader primed by every list answer, and the
// call meter behind extensions.upstream.
//
// A *Loaders is made for each GraphQL request by Middleware and read with
// For; nothing in it outlives the request or is shared between API keys.
package loader

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vikstrous/dataloadgen"

	"suregql/restclient"
)

// ErrNoAPIKey is returned by For when the request carried no X-Api-Key.
var ErrNoAPIKey = errors.New("no API key: send your Sure API key in the X-Api-Key header")

// ErrBadAPIKey is returned by For when X-Api-Key is not a plausible key
// (too long, or characters no header may carry).
var ErrBadAPIKey = errors.New("the X-Api-Key header is not a valid API key")

// maxKeyLen bounds accepted API keys; Sure's keys are 64 hex characters.
const maxKeyLen = 512

type ctxKey struct{}

// Loaders is the data layer of one GraphQL request.
type Loaders struct {
	apiKey string
	keyErr error
	client *restclient.Client
	memo   *memo
	calls  atomic.Int64

	mu        sync.Mutex
	rateLimit *restclient.RateLimit

	categoryByID *dataloadgen.Loader[string, *restclient.Category]
}

// New returns the data layer for one request made with apiKey. base is the
// shared upstream client.
func New(base *restclient.Client, apiKey string) *Loaders {
	l := &Loaders{apiKey: apiKey, keyErr: checkKey(apiKey)}
	l.memo = newMemo(nil)
	l.client = base.WithAPIKey(apiKey).WithObserver(l.observe).WithFetcher(l.memo)
	// The upstream has no batch-by-ids endpoint: the batch fetches each id
	// once, in parallel, and lists prime it so most ids cost nothing.
	l.categoryByID = dataloadgen.NewLoader(l.fetchCategories, dataloadgen.WithWait(time.Millisecond))
	return l
}

func checkKey(key string) error {
	if key == "" {
		return ErrNoAPIKey
	}
	if len(key) > maxKeyLen {
		return ErrBadAPIKey
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return ErrBadAPIKey
		}
	}
	return nil
}

// Middleware makes a *Loaders for every request from its X-Api-Key header.
// Only that header is read: an Authorization header is never forwarded.
func Middleware(base *restclient.Client, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := New(base, r.Header.Get("X-Api-Key"))
		next.ServeHTTP(w, r.WithContext(WithLoaders(r.Context(), l)))
	})
}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the request's Loaders, or nil outside a request.
func From(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	return l
}

// For returns the request's Loaders, or ErrNoAPIKey / ErrBadAPIKey when
// the caller cannot be passed upstream. Resolvers call it before any
// upstream call, so a request without a key costs none.
func For(ctx context.Context) (*Loaders, error) {
	l := From(ctx)
	if l == nil {
		return nil, ErrNoAPIKey
	}
	if l.keyErr != nil {
		return nil, l.keyErr
	}
	return l, nil
}

// KeyError returns why the request's key cannot be used, or nil.
func (l *Loaders) KeyError() error { return l.keyErr }

// Client returns the caller's upstream client: keyed, counted and memoized.
func (l *Loaders) Client() *restclient.Client { return l.client }

// Calls returns how many requests this operation sent upstream so far.
func (l *Loaders) Calls() int { return int(l.calls.Load()) }

// RateLimit returns the last rate-limit headers seen in this operation, or
// nil.
func (l *Loaders) RateLimit() *restclient.RateLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rateLimit
}

func (l *Loaders) observe(c restclient.Call) {
	l.calls.Add(1)
	if c.RateLimit != nil {
		l.mu.Lock()
		l.rateLimit = c.RateLimit
		l.mu.Unlock()
	}
}

// ChatsChanged drops remembered chat answers after a write in this
// operation.
func (l *Loaders) ChatsChanged() { l.memo.forget("chats") }

// Category returns one category by id, from this operation's answers when
// any of them held it, or with one GET.
func (l *Loaders) Category(ctx context.Context, id string) (*restclient.Category, error) {
	return l.categoryByID.Load(ctx, id)
}

// PrimeCategories remembers categories from a list or show answer, so that
// later lookups by id cost nothing.
func (l *Loaders) PrimeCategories(cats []restclient.Category) {
	for i := range cats {
		l.categoryByID.Prime(cats[i].ID, &cats[i])
	}
}

func (l *Loaders) fetchCategories(ctx context.Context, ids []string) ([]*restclient.Category, []error) {
	out := make([]*restclient.Category, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			out[i], errs[i] = l.client.GetCategory(ctx, id)
		})
	}
	wg.Wait()
	return out, errs
}
