package planner

import (
	"crypto/sha256"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
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
// keys: about 100 bytes each, 10 MB at most.
const DefaultKindMemorySize = 100_000

// KindMemory remembers, per API key, the kind of every id the planner
// handed out to that key, so that node(id) for such an id costs the one
// lookup of its kind instead of one of each kind. It is bounded (least
// recently used ids go first) and safe for concurrent use. Keys are held
// as hashes: the memory never holds an API key. An entry made for one key
// never answers for another: a key that did not see an id probes it.
type KindMemory struct {
	ids *lru.Cache[kindEntry, Kind]
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
	ids, err := lru.New[kindEntry, Kind](size)
	if err != nil { // only for a size <= 0, excluded above
		panic(err)
	}
	return &KindMemory{ids: ids}
}

func hashKey(apiKey string) keyHash {
	sum := sha256.Sum256([]byte(apiKey))
	var h keyHash
	copy(h[:], sum[:])
	return h
}

// remember records that key was handed the ids, of kind k. Ids that are
// not UUIDs (never sent by the upstream) are skipped.
func (m *KindMemory) remember(key keyHash, k Kind, ids ...string) {
	for _, id := range ids {
		if u, err := uuid.Parse(id); err == nil {
			m.ids.Add(kindEntry{key: key, id: u}, k)
		}
	}
}

// kind returns the kind key was handed id as, or KindUnknown.
func (m *KindMemory) kind(key keyHash, id string) Kind {
	u, err := uuid.Parse(id)
	if err != nil {
		return KindUnknown
	}
	k, _ := m.ids.Get(kindEntry{key: key, id: u})
	return k
}

// forget drops what key was told of id: the upstream no longer has it.
func (m *KindMemory) forget(key keyHash, id string) {
	if u, err := uuid.Parse(id); err == nil {
		m.ids.Remove(kindEntry{key: key, id: u})
	}
}

// Len returns how many ids the memory holds, over all keys.
func (m *KindMemory) Len() int { return m.ids.Len() }
