package restcache

import (
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
	"github.com/suregql/suregql/restclient/resource"
)

// byKey is a bounded map from key hash to V: the least recently used key is
// forgotten first. The zero value holds DefaultMaxKeys keys.
type byKey[V any] struct {
	once    sync.Once
	max     int
	onEvict func(keyHash string, v V)
	m       *lru.Cache[string, V]
}

func (b *byKey[V]) lru() *lru.Cache[string, V] {
	b.once.Do(func() {
		size := b.max
		if size <= 0 {
			size = DefaultMaxKeys
		}
		var err error
		if b.onEvict != nil {
			b.m, err = lru.NewWithEvict(size, b.onEvict)
		} else {
			b.m, err = lru.New[string, V](size)
		}
		if err != nil {
			panic(err) // only for a non-positive size, excluded above
		}
	})
	return b.m
}

// Generations numbers, per key and resource, the writes a key made: reads
// of a newer generation never share a cached answer or an in-flight GET
// with reads of an older one. It remembers at most DefaultMaxKeys keys (or
// the number given to NewGenerations).
type Generations struct {
	mu   sync.Mutex // makes Invalidate's read-modify-write atomic
	keys byKey[map[restclient.Resource]uint64]

	once sync.Once
	// forgotten counts, per slot of key hashes (forgottenSlot), the keys
	// whose generations were forgotten (pushed out by other keys', or
	// Forget): they restart at 0 and may come back to a number a GET in
	// flight meanwhile was read under (see Forgotten).
	forgotten [forgottenSlots]atomic.Uint64
}

// forgottenSlots is the number of slots Generations.forgotten counts keys
// in: keys sharing a slot only keep or share fewer answers while one is
// forgotten.
const forgottenSlots = 1024

func forgottenSlot(keyHash string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(keyHash))
	return int(h.Sum32() % forgottenSlots)
}

// lru returns g's keys, counting each key forgotten once it is gone.
func (g *Generations) lru() *lru.Cache[string, map[restclient.Resource]uint64] {
	g.once.Do(func() {
		then := g.keys.onEvict
		g.keys.onEvict = func(kh string, m map[restclient.Resource]uint64) {
			g.forgotten[forgottenSlot(kh)].Add(1)
			if then != nil {
				then(kh, m)
			}
		}
	})
	return g.keys.lru()
}

// Forgotten returns a number that changes whenever key's generations (or
// those of a key sharing its slot) are forgotten. Read before Of, and
// again once a GET's answer arrives: when it changed, the generation the
// GET was read under may be the key's again after writes made since,
// and its answer must be neither kept nor shared.
func (g *Generations) Forgotten(key callerkey.Key) uint64 {
	g.lru() // the count starts with the callback
	return g.forgotten[forgottenSlot(key.ID())].Load()
}

// NewGenerations returns generations for at most maxKeys keys; onForget,
// when set, is told the hash of each key forgotten to make room, whose
// cached answers must then go too (its generations restart at 0).
func NewGenerations(maxKeys int, onForget func(keyHash string)) *Generations {
	g := &Generations{}
	g.keys.max = maxKeys
	if onForget != nil {
		g.keys.onEvict = func(kh string, _ map[restclient.Resource]uint64) { onForget(kh) }
	}
	return g
}

// maxParts bounds the parts (restclient.PartOf) a key's generations
// number one by one; past it they are folded into their resources'.
const maxParts = 256

// Of returns the generation of what a request reads: its resource's, and
// its part's (the list, or one record), summed. Both only grow, and a
// fold (see Invalidate) raises the resource's past every part's, so a
// path never reads a number it had before a write.
func (g *Generations) Of(key callerkey.Key, path string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	m, _ := g.lru().Peek(key.ID())
	return m[restclient.ResourceOf(path)] + m[restclient.PartOf(path)]
}

// Invalidate starts a new generation of key's resource after that key
// wrote to it; res may be a part (restclient.PartOf: "chats/" the list,
// "chats/<id>" one chat), whose reads alone then start a new one.
func (g *Generations) Invalidate(key callerkey.Key, res restclient.Resource) {
	kh := key.ID()
	g.mu.Lock()
	defer g.mu.Unlock()
	m, ok := g.lru().Get(kh)
	if !ok {
		m = map[restclient.Resource]uint64{}
	}
	m[res]++
	if len(m) > maxParts {
		foldParts(m)
	}
	g.lru().Add(kh, m)
}

// foldParts forgets m's parts, raising each resource's generation past
// what any of its parts added to it.
func foldParts(m map[restclient.Resource]uint64) {
	var most uint64
	for r, n := range m {
		if r != restclient.ResourceOf(string(r)) {
			most = max(most, n)
			delete(m, r)
		}
	}
	for _, spec := range resource.All {
		m[spec.Name] += most + 1
	}
}

// Len returns how many keys have generations.
func (g *Generations) Len() int { return g.lru().Len() }

func (g *Generations) forget(keyHash string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lru().Remove(keyHash)
}

// RateLimits remembers the newest rate-limit reading of each key, so that
// every response can report the caller's remaining budget, and so that a
// key known to be out of quota is refused without a call until its reset.
// The zero value is ready to use.
type RateLimits struct {
	mu   sync.Mutex
	keys byKey[restclient.RateLimit]
}

// Observe records rl for key unless an answer read later in the same
// window is already known: of readings of one window, the one with the
// fewest requests remaining is the newest (answers of parallel calls arrive
// in any order).
func (r *RateLimits) Observe(key callerkey.Key, rl restclient.RateLimit) {
	kh := key.ID()
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.keys.lru().Get(kh); ok && !restclient.Newer(rl, old) {
		return
	}
	r.keys.lru().Add(kh, rl)
}

// Get returns the newest rate limit seen for key.
func (r *RateLimits) Get(key callerkey.Key) (restclient.RateLimit, bool) {
	return r.keys.lru().Get(key.ID())
}

// Exhausted reports whether key is known to have no request left at now,
// and how long until its window resets.
func (r *RateLimits) Exhausted(key callerkey.Key, now time.Time) (retryAfter time.Duration, exhausted bool) {
	rl, ok := r.Get(key)
	if !ok {
		return 0, false
	}
	return rl.Exhausted(now)
}

// Len returns how many keys have a reading.
func (r *RateLimits) Len() int { return r.keys.lru().Len() }

// Forget drops what is known of key (the upstream rejected it).
func (r *RateLimits) Forget(key callerkey.Key) { r.keys.lru().Remove(key.ID()) }

// FamilySizes remembers how many categories each key's family (and each
// classification of it) had when last seen. It is a planning hint only
// (never data served): it tells whether one page of 100 is likely to hold
// the whole family. The zero value is ready to use.
type FamilySizes struct {
	mu   sync.Mutex
	keys byKey[map[string]int]
}

// Observe records the size of key's family ("" class) or of one
// classification of it.
func (f *FamilySizes) Observe(key callerkey.Key, class string, n int) {
	kh := key.ID()
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.keys.lru().Get(kh)
	if !ok {
		m = map[string]int{}
	}
	m[class] = n
	f.keys.lru().Add(kh, m)
}

// Get returns the last size seen for key's family or classification.
func (f *FamilySizes) Get(key callerkey.Key, class string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, _ := f.keys.lru().Get(key.ID())
	n, ok := m[class]
	return n, ok
}

// Len returns how many keys have a size.
func (f *FamilySizes) Len() int { return f.keys.lru().Len() }

// Forget drops what is known of key (the upstream rejected it).
func (f *FamilySizes) Forget(key callerkey.Key) { f.keys.lru().Remove(key.ID()) }

var (
	_ RateLimitStore  = (*RateLimits)(nil)
	_ FamilySizeStore = (*FamilySizes)(nil)
	_ AnswerCache     = (*Cache)(nil)
	_ Holder          = (*Cache)(nil)
	_ Invalidator     = (*Generations)(nil)
	_ KeyedFetcher    = (*Coalescer)(nil)
)
