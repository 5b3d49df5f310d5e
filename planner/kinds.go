package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/simplelru"

	"suregql/callerkey"
)

// Kind is the type of object an id names, as node(id) must tell it.
type Kind uint8

// The kinds of object Query.node answers.
const (
	KindUnknown Kind = iota // never handed out to this key (or forgotten)
	KindCategory
	KindChat
	KindImport
)

// DefaultKindMemorySize is how many ids a KindMemory remembers across all
// keys: about 160 bytes each (heap measured after 100,000 adds), 16 MB at
// most.
const DefaultKindMemorySize = 100_000

// KindMemory remembers, per API key, the kind of every id the planner
// handed out to that key, so that node(id) for such an id costs the one
// lookup of its kind instead of one of each kind. It is bounded (least
// recently used ids go first) and safe for concurrent use. Keys are held
// as hashes: the memory never holds an API key. An entry made for one key
// never answers for another: a key that did not see an id probes it.
type KindMemory struct {
	mu     sync.Mutex
	ids    *simplelru.LRU[kindEntry, Kind]
	perKey map[keyHash]int // entries of each key, so that forgetting a key without any is free
}

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
	m := &KindMemory{perKey: map[keyHash]int{}}
	// Called by Add (an eviction) and Remove, with m.mu held.
	evicted := func(e kindEntry, _ Kind) {
		if m.perKey[e.key]--; m.perKey[e.key] <= 0 {
			delete(m.perKey, e.key)
		}
	}
	ids, err := simplelru.NewLRU[kindEntry, Kind](size, evicted)
	if err != nil { // only for a size <= 0, excluded above
		panic(err)
	}
	m.ids = ids
	return m
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
		e := kindEntry{key: key, id: u}
		m.mu.Lock()
		if !m.ids.Contains(e) {
			m.perKey[key]++
		}
		m.ids.Add(e, k)
		m.mu.Unlock()
	}
}

// kind returns the kind key was handed id as, or KindUnknown.
func (m *KindMemory) kind(key keyHash, id string) Kind {
	u, err := uuid.Parse(id)
	if err != nil {
		return KindUnknown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := m.ids.Get(kindEntry{key: key, id: u})
	return k
}

// forget drops what key was told of id: the upstream no longer has it.
func (m *KindMemory) forget(key keyHash, id string) {
	if u, err := uuid.Parse(id); err == nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.ids.Remove(kindEntry{key: key, id: u})
	}
}

// forgetKey drops every id of key (the upstream answered 401: the key
// must leave nothing behind). A key with no entry costs nothing; one with
// entries, one pass over the memory.
func (m *KindMemory) forgetKey(key keyHash) {
	m.mu.Lock()
	defer m.mu.Unlock()
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
