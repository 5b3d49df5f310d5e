package planner

import (
	"fmt"
	"testing"
	"time"

	"github.com/suregql/suregql/restclient/resource"
)

func TestKindMemory(t *testing.T) {
	const (
		a = "0b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
		b = "1b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
		c = "2b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
	)
	alice, bob := hashKey("alice"), hashKey("bob")
	m := NewKindMemory(2)
	m.remember(alice, KindCategory, a)
	if got := m.kind(alice, a); got != KindCategory {
		t.Errorf("kind(alice, a) = %v, want KindCategory", got)
	}
	if got := m.kind(bob, a); got != KindUnknown {
		t.Errorf("kind(bob, a) = %v, want KindUnknown: alice's ids are not bob's", got)
	}
	// Any spelling of the UUID names the same id.
	if got := m.kind(alice, "{0B7C2A5E-1D3F-4A6B-8C9D-0E1F2A3B4C5D}"); got != KindCategory {
		t.Errorf("kind of a braced id = %v, want KindCategory", got)
	}
	m.remember(alice, KindChat, b, "not-a-uuid")
	m.remember(bob, kindImport, c) // past the bound: a, the least recently used, goes
	if m.Len() != 2 {
		t.Errorf("Len = %d, want the bound 2", m.Len())
	}
	if got := m.kind(alice, a); got != KindUnknown {
		t.Errorf("kind(alice, a) after eviction = %v, want KindUnknown", got)
	}
	if m.kind(alice, b) != KindChat || m.kind(bob, c) != kindImport {
		t.Errorf("kinds = %v, %v; want KindChat, kindImport", m.kind(alice, b), m.kind(bob, c))
	}
	m.toldNotFound(bob, time.Now(), c) // gone upstream
	if got := m.kind(bob, c); got != KindNone {
		t.Errorf("kind after a 404 = %v, want KindNone", got)
	}

	// A key the upstream no longer knows leaves nothing behind, and
	// forgetting it takes nothing from other keys.
	m.remember(bob, kindImport, c)
	m.forgetKey(alice)
	if m.Len() != 1 || m.kind(alice, b) != KindUnknown || m.kind(bob, c) != kindImport {
		t.Errorf("after forgetKey(alice): Len %d, alice's b %v, bob's c %v; want 1, KindUnknown, kindImport",
			m.Len(), m.kind(alice, b), m.kind(bob, c))
	}
	if len(m.perKey) != 1 || m.perKey[bob] != 1 {
		t.Errorf("entries per key = %v, want only bob's 1", m.perKey)
	}
}

// Ids a key was told name nothing (KindNone) answer for that key only,
// for notFoundTTL, at most maxNotFoundPerKey of them; its writes forget
// them all (and nothing else); a kind learnt later replaces one; the
// memory's bound and forgetting a key leave no bookkeeping behind.
func TestKindMemory_NotFound(t *testing.T) {
	const (
		a = "0b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
		b = "1b7c2a5e-1d3f-4a6b-8c9d-0e1f2a3b4c5d"
	)
	alice, bob := hashKey("alice"), hashKey("bob")
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	m := NewKindMemory(0)
	m.toldNotFound(alice, now, a, "not-a-uuid")
	m.remember(alice, KindChat, b)
	if got := m.kindAt(alice, a, now.Add(notFoundTTL-time.Second)); got != KindNone {
		t.Errorf("kind within the TTL = %v, want KindNone", got)
	}
	if got := m.kindAt(bob, a, now); got != KindUnknown {
		t.Errorf("bob's kind of alice's id = %v, want KindUnknown", got)
	}
	if got := m.kindAt(alice, a, now.Add(notFoundTTL)); got != KindUnknown {
		t.Errorf("kind past the TTL = %v, want KindUnknown", got)
	}
	if m.Len() != 1 || len(m.notFound) != 0 {
		t.Errorf("after the TTL: Len %d, notFound %v; want only alice's chat", m.Len(), m.notFound)
	}

	// Writes forget what the key was told, not its kinds nor others'.
	m.toldNotFound(alice, now, a)
	m.toldNotFound(bob, now, a)
	m.forgetNotFound(alice)
	if m.kindAt(alice, a, now) != KindUnknown || m.kindAt(alice, b, now) != KindChat || m.kindAt(bob, a, now) != KindNone {
		t.Errorf("after alice's write: alice a %v, alice b %v, bob a %v; want KindUnknown, KindChat, KindNone",
			m.kindAt(alice, a, now), m.kindAt(alice, b, now), m.kindAt(bob, a, now))
	}
	// A kind learnt later replaces "not found".
	m.remember(bob, kindImport, a)
	if m.kindAt(bob, a, now) != kindImport || len(m.notFound[bob]) != 0 {
		t.Errorf("bob's a = %v (notFound %v), want kindImport", m.kindAt(bob, a, now), m.notFound[bob])
	}

	// At most maxNotFoundPerKey per key: a key asking junk ids cannot push
	// other keys' kinds out.
	for i := range maxNotFoundPerKey + 50 {
		m.toldNotFound(alice, now, fmt.Sprintf("6f1c1c1e-0000-4000-8000-%012d", i))
	}
	if n := len(m.notFound[alice]); n != maxNotFoundPerKey {
		t.Errorf("alice's not-found ids = %d, want %d", n, maxNotFoundPerKey)
	}
	if m.Len() != maxNotFoundPerKey+2 || m.kindAt(bob, a, now) != kindImport {
		t.Errorf("Len = %d, bob's a %v; want %d and kindImport", m.Len(), m.kindAt(bob, a, now), maxNotFoundPerKey+2)
	}

	// Evicted by the memory's bound: its bookkeeping goes too.
	small := NewKindMemory(1)
	small.toldNotFound(alice, now, a)
	small.remember(bob, KindChat, b)
	if small.kindAt(alice, a, now) != KindUnknown || len(small.notFound) != 0 {
		t.Errorf("evicted: kind %v, notFound %v; want KindUnknown and none", small.kindAt(alice, a, now), small.notFound)
	}

	// The sizes of a key's lists; a forgotten key leaves none of it.
	m.observeList(alice, KindChat, 250)
	if n, ok := m.listSize(alice, KindChat); n != 250 || !ok {
		t.Errorf("alice's chat list = %d, %v; want 250", n, ok)
	}
	if _, ok := m.listSize(alice, kindImport); ok {
		t.Errorf("alice's import list known, never read")
	}
	m.forgetKey(alice)
	if _, ok := m.listSize(alice, KindChat); ok || len(m.notFound[alice]) != 0 || m.perKey[alice] != 0 {
		t.Errorf("after forgetKey: list size known %v, not-found %d, entries %d; want nothing", ok, len(m.notFound[alice]), m.perKey[alice])
	}
}

// kindImport is the kind of an import, numbered by resource.All.
var kindImport = KindOf(resource.Imports)
