package planner

import "testing"

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
	m.remember(bob, KindImport, c) // past the bound: a, the least recently used, goes
	if m.Len() != 2 {
		t.Errorf("Len = %d, want the bound 2", m.Len())
	}
	if got := m.kind(alice, a); got != KindUnknown {
		t.Errorf("kind(alice, a) after eviction = %v, want KindUnknown", got)
	}
	if m.kind(alice, b) != KindChat || m.kind(bob, c) != KindImport {
		t.Errorf("kinds = %v, %v; want KindChat, KindImport", m.kind(alice, b), m.kind(bob, c))
	}
	m.forget(bob, c)
	if got := m.kind(bob, c); got != KindUnknown {
		t.Errorf("kind after forget = %v, want KindUnknown", got)
	}

	// A key the upstream no longer knows leaves nothing behind, and
	// forgetting it takes nothing from other keys.
	m.remember(bob, KindImport, c)
	m.forgetKey(alice)
	if m.Len() != 1 || m.kind(alice, b) != KindUnknown || m.kind(bob, c) != KindImport {
		t.Errorf("after forgetKey(alice): Len %d, alice's b %v, bob's c %v; want 1, KindUnknown, KindImport",
			m.Len(), m.kind(alice, b), m.kind(bob, c))
	}
	if len(m.perKey) != 1 || m.perKey[bob] != 1 {
		t.Errorf("entries per key = %v, want only bob's 1", m.perKey)
	}
}
