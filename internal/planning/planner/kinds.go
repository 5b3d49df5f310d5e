package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient/resource"
)

// Kind is the type of object an id names, as node(id) must tell it: a
// resource of resource.All, numbered by its place there (KindOf).
type Kind uint8

// The kinds that are no resource's.
const (
	KindUnknown Kind = 0 // never handed out to this key (or forgotten)
	// KindNone: every lookup this key made of the id was told "not
	// found" (a 404 of each kind's show, or lists that hold every object
	// of the kind), within notFoundTTL and since the key's last write.
	KindNone Kind = math.MaxUint8
)

// The kinds planned by hand (the category tree, chats).
var (
	KindCategory = KindOf(resource.Categories)
	KindChat     = KindOf(resource.Chats)
)

// KindOf returns the kind of spec's objects; KindUnknown for a resource
// not in resource.All.
func KindOf(spec *resource.Spec) Kind {
	for i, s := range resource.All {
		if s == spec {
			return Kind(i + 1)
		}
	}
	return KindUnknown
}

// Spec returns the description of k's resource, or nil for KindUnknown
// and KindNone.
func (k Kind) Spec() *resource.Spec {
	if k == KindUnknown || int(k) > len(resource.All) {
		return nil
	}
	return resource.All[k-1]
}

// notFoundTTL is how long an id told "not found" answers null at no call.
// UUIDs are random, so an id that named nothing does not name anything
// later; the key's own writes forget every such id at once (a created
// object must never hide behind one), and the TTL bounds what a
// misbehaving upstream (a 404 it should not have sent, a list read from a
// cache older than the object) can hide.
const notFoundTTL = 10 * time.Minute

// maxNotFoundPerKey bounds the ids one key is remembered to have been
// told "not found": past it, one of them is forgotten for each new one, so
// that a key asking for junk ids cannot push other keys' kinds out.
const maxNotFoundPerKey = 1000

// maxListSizeKeys bounds the keys whose list sizes are remembered
// (listSizes): a small map each, with the LRU's overhead.
const maxListSizeKeys = 10_000

// DefaultKindMemorySize is how many ids a KindMemory remembers across all
// keys: about 160 bytes each (heap measured after 100,000 adds), 16 MB at
// most.
const DefaultKindMemorySize = 100_000

// KindMemory remembers, per API key, the kind of every id the planner
// handed out to that key, so that node(id) for such an id costs the one
// lookup of its kind instead of one of each kind; the ids the key was
// told name nothing (KindNone), so that asking again costs no call; and
// the sizes of the key's lists (chats, imports…), to plan lookups. It is
// bounded (least recently used ids go first; at most maxNotFoundPerKey
// "not found" ids per key) and safe for concurrent use. Keys are held as
// hashes: the memory never holds an API key. An entry made for one key
// never answers for another: a key that did not see an id probes it.
type KindMemory struct {
	mu     sync.Mutex
	ids    *simplelru.LRU[kindEntry, Kind]
	perKey map[keyHash]int // entries of each key, so that forgetting a key without any is free
	// notFound holds, for each key with KindNone entries, when each was
	// told: the TTL, the per-key bound, and forgetting them at a write
	// without a pass over the whole memory.
	notFound map[keyHash]map[uuid.UUID]time.Time
	lists    *simplelru.LRU[keyHash, listSizes]
}

// listSizes are the sizes of a key's lists, by kind, when last read by a
// node lookup.
type listSizes map[Kind]int

// keyHash names an API key in the memory.
type keyHash [16]byte

type kindEntry struct {
	key keyHash
	id  uuid.UUID // 16 bytes, where the canonical string would take 52
}

// NewKindMemory returns a memory of at most size ids (DefaultKindMemorySize
// when size <= 0).
func NewKindMemory(size int) *KindMemory {
	if size <= 0 {
		size = DefaultKindMemorySize
	}
	m := &KindMemory{perKey: map[keyHash]int{}, notFound: map[keyHash]map[uuid.UUID]time.Time{}}
	// Called by Add (an eviction) and Remove, with m.mu held.
	evicted := func(e kindEntry, k Kind) {
		if m.perKey[e.key]--; m.perKey[e.key] <= 0 {
			delete(m.perKey, e.key)
		}
		if k == KindNone {
			m.dropNotFound(e)
		}
	}
	ids, err := simplelru.NewLRU[kindEntry, Kind](size, evicted)
	if err != nil { // only for a size <= 0, excluded above
		panic(err)
	}
	m.ids = ids
	lists, err := simplelru.NewLRU[keyHash, listSizes](maxListSizeKeys, nil)
	if err != nil {
		panic(err)
	}
	m.lists = lists
	return m
}

// dropNotFound forgets when e was told "not found"; m.mu is held.
func (m *KindMemory) dropNotFound(e kindEntry) {
	if told := m.notFound[e.key]; told != nil {
		delete(told, e.id)
		if len(told) == 0 {
			delete(m.notFound, e.key)
		}
	}
}

// keyHashOf names k in the memory: its id, already a keyed hash of the
// API key computed once per request.
func keyHashOf(k callerkey.Key) keyHash {
	var h keyHash
	b, _ := hex.DecodeString(k.ID())
	copy(h[:], b)
	return h
}

// hashKey names an API key in the memory without a ring (tests).
func hashKey(apiKey string) keyHash {
	sum := sha256.Sum256([]byte(apiKey))
	var h keyHash
	copy(h[:], sum[:])
	return h
}

// remember records that key was handed the ids, of kind k. Ids that are
// not UUIDs (never sent by the upstream) are skipped. The lock is taken
// per id, so that a family of thousands does not hold up other requests.
func (m *KindMemory) remember(key keyHash, k Kind, ids ...string) {
	for _, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			continue
		}
		m.mu.Lock()
		m.add(kindEntry{key: key, id: u}, k)
		m.mu.Unlock()
	}
}

// add records e as of kind k; m.mu is held.
func (m *KindMemory) add(e kindEntry, k Kind) {
	old, ok := m.ids.Peek(e)
	if !ok {
		m.perKey[e.key]++
	}
	if old == KindNone {
		m.dropNotFound(e) // Add replaces a value without telling evicted
	}
	m.ids.Add(e, k)
}

// toldNotFound records that key was told that none of ids names anything,
// at now. A key past maxNotFoundPerKey such ids forgets one of them (any)
// for each new one.
func (m *KindMemory) toldNotFound(key keyHash, now time.Time, ids ...string) {
	for _, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			continue
		}
		e := kindEntry{key: key, id: u}
		m.mu.Lock()
		told := m.notFound[key]
		if _, again := told[u]; !again && len(told) >= maxNotFoundPerKey {
			for victim := range told {
				m.ids.Remove(kindEntry{key: key, id: victim}) // evicted drops it from told
				break
			}
		}
		m.add(e, KindNone)
		if told = m.notFound[key]; told == nil {
			told = map[uuid.UUID]time.Time{}
			m.notFound[key] = told
		}
		told[u] = now
		m.mu.Unlock()
	}
}

// kind returns the kind key was handed id as, or KindUnknown; KindNone
// when it was told the id names nothing, less than notFoundTTL ago.
func (m *KindMemory) kind(key keyHash, id string) Kind {
	return m.kindAt(key, id, time.Now())
}

// kindAt is kind at the time now.
func (m *KindMemory) kindAt(key keyHash, id string, now time.Time) Kind {
	u, err := uuid.Parse(id)
	if err != nil {
		return KindUnknown
	}
	e := kindEntry{key: key, id: u}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := m.ids.Get(e)
	if k == KindNone && now.Sub(m.notFound[key][u]) >= notFoundTTL {
		m.ids.Remove(e)
		return KindUnknown
	}
	return k
}

// forgetNotFound drops every id key was told names nothing: the key wrote,
// and what it created may bear one of them. Other entries stay.
func (m *KindMemory) forgetNotFound(key keyHash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for u := range m.notFound[key] {
		m.ids.Remove(kindEntry{key: key, id: u}) // evicted drops it from notFound
	}
}

// observeList records the size of key's list of kind k, as a page of it
// just told.
func (m *KindMemory) observeList(key keyHash, k Kind, total int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.lists.Peek(key)
	if !ok {
		s = listSizes{}
	}
	s[k] = total
	m.lists.Add(key, s)
}

// listSize returns the size of key's list of kind k when a node lookup
// last read it.
func (m *KindMemory) listSize(key keyHash, k Kind) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, _ := m.lists.Get(key)
	n, ok := s[k]
	return n, ok
}

// forgetKey drops every id of key (the upstream answered 401: the key
// must leave nothing behind). A key with no entry costs nothing; one with
// entries, one pass over the memory.
func (m *KindMemory) forgetKey(key keyHash) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists.Remove(key)
	if m.perKey[key] == 0 {
		return
	}
	for _, e := range m.ids.Keys() {
		if e.key == key {
			m.ids.Remove(e)
		}
	}
}

// Len returns how many ids the memory holds, over all keys.
func (m *KindMemory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids.Len()
}
