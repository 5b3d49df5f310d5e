package querylimit

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Cache is a graphql.Cache bounded by the bytes its entries are charged,
// evicting the least recently used. gqlgen's lru counts entries, so a
// thousand 1 MB documents fit in it; this one counts what they weigh.
//
// Keys are stored as their SHA-256: the cache never keeps a query text
// as a key, and a collision (which would answer one query with another's
// validated document) is not something a caller can craft.
type Cache[T any] struct {
	maxBytes int
	charge   func(key string, v T) int

	mu    sync.Mutex
	used  int
	order *list.List // of *cacheEntry[T], most recently used first
	items map[[sha256.Size]byte]*list.Element
}

type cacheEntry[T any] struct {
	key    [sha256.Size]byte
	value  T
	weight int
}

var _ graphql.Cache[*ast.QueryDocument] = (*Cache[*ast.QueryDocument])(nil)

// NewCache returns a cache of at most maxBytes, charging each entry
// charge(key, value). An entry charged a negative weight, or more than
// maxBytes/8, is not kept: one entry must not empty the cache.
func NewCache[T any](maxBytes int, charge func(key string, v T) int) *Cache[T] {
	return &Cache[T]{
		maxBytes: maxBytes,
		charge:   charge,
		order:    list.New(),
		items:    map[[sha256.Size]byte]*list.Element{},
	}
}

// NewDocumentCache returns the cache of parsed and validated documents
// for handler.Server.SetQueryCache, charging each its estimated memory.
func NewDocumentCache(maxBytes int) *Cache[*ast.QueryDocument] {
	return NewCache(maxBytes, DocumentBytes)
}

// NewPersistedQueryCache returns the cache of automatic persisted queries
// (hash to query text) for extension.AutomaticPersistedQuery. A query
// longer than maxQueryBytes is not kept: the limits would refuse it, and
// the persisted-query extension stores a query before they run.
func NewPersistedQueryCache(maxBytes, maxQueryBytes int) *Cache[string] {
	return NewCache(maxBytes, func(hash, query string) int {
		if len(query) > maxQueryBytes {
			return -1
		}
		return entryOverhead + len(hash) + len(query)
	})
}

// entryOverhead is what an entry costs besides its value: the list
// element, the map slot and the entry itself.
const entryOverhead = 160

// Get returns the value of key and marks it recently used.
func (c *Cache[T]) Get(_ context.Context, key string) (T, bool) {
	h := hashKey(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[h]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*cacheEntry[T]).value, true
	}
	var zero T
	return zero, false
}

// Add stores value under key, evicting the least recently used entries
// until the cache is within its bytes.
func (c *Cache[T]) Add(_ context.Context, key string, value T) {
	weight := c.charge(key, value)
	if weight < 0 || weight > c.maxBytes/8 {
		return
	}
	h := hashKey(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[h]; ok {
		e := el.Value.(*cacheEntry[T])
		c.used += weight - e.weight
		e.value, e.weight = value, weight
		c.order.MoveToFront(el)
	} else {
		c.items[h] = c.order.PushFront(&cacheEntry[T]{key: h, value: value, weight: weight})
		c.used += weight
	}
	for c.used > c.maxBytes {
		el := c.order.Back()
		e := el.Value.(*cacheEntry[T])
		c.order.Remove(el)
		delete(c.items, e.key)
		c.used -= e.weight
	}
}

// Stats returns the entries held and the bytes they are charged.
func (c *Cache[T]) Stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.used
}

// hashKey hashes s without copying it whole into a []byte (a query may be
// tens of KiB): the hash reads it through a small buffer.
func hashKey(s string) [sha256.Size]byte {
	h := sha256.New()
	var buf [512]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// Estimated bytes of parsed AST nodes, measured with gqlparser v2.5.64
// (runtime.MemStats around parsing and validating documents of each
// shape): 110 to 230 bytes per node (a field, an argument, a value, a
// directive…) with its Position, so 256 is an upper estimate.
const (
	bytesPerNode     = 256
	bytesPerDocument = 1024
)

// DocumentBytes estimates the memory a parsed document of query holds: the
// query text (every node's Position points into it) and its nodes. The
// AST weighs 20 to 100 times the text (a list of numbers is the worst), so
// charging the text alone would let a cache of "16 MiB" hold gigabytes.
func DocumentBytes(query string, doc *ast.QueryDocument) int {
	n := 0
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		n++
		for _, c := range v.Children {
			n++
			value(c.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			n++
			for _, a := range d.Arguments {
				n++
				value(a.Value)
			}
		}
	}
	var set func(s ast.SelectionSet)
	set = func(s ast.SelectionSet) {
		for _, sel := range s {
			n++
			switch sel := sel.(type) {
			case *ast.Field:
				for _, a := range sel.Arguments {
					n++
					value(a.Value)
				}
				directives(sel.Directives)
				set(sel.SelectionSet)
			case *ast.InlineFragment:
				directives(sel.Directives)
				set(sel.SelectionSet)
			case *ast.FragmentSpread:
				directives(sel.Directives)
			}
		}
	}
	for _, o := range doc.Operations {
		n++
		for _, v := range o.VariableDefinitions {
			n += 2 // the definition and its type
			value(v.DefaultValue)
			directives(v.Directives)
		}
		directives(o.Directives)
		set(o.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n++
		directives(f.Directives)
		set(f.SelectionSet)
	}
	return bytesPerDocument + len(query) + n*bytesPerNode
}
