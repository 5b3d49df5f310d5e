package gqlhttp

import (
	"net/http/httptest"
	"testing"
)

// The per-address limit counts an IPv4 address, and an IPv6 /64 (what one
// subscriber is routed) as one address.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:4711", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:4711", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:4711", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:80", "2001:db8:1:2::/64"},
		{"pipe", "pipe"},
	} {
		r := httptest.NewRequest("GET", "/graphql", nil)
		r.RemoteAddr = tc.remote
		if got := clientAddress(r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.remote, got, tc.want)
		}
	}
}

// A refused WebSocket takes no place; a released one frees its place,
// once however often it is released.
func TestWSLimits(t *testing.T) {
	l := newWSLimits(3, 2, nil)
	a1, _ := l.acquire("a")
	a2, _ := l.acquire("a")
	if _, refused := l.acquire("a"); refused == nil || refused.limit != LimitWebSocketsPerAddress {
		t.Fatalf("a 3rd of one address: %+v, want refused perAddress", refused)
	}
	b1, _ := l.acquire("b")
	if _, refused := l.acquire("c"); refused == nil || refused.limit != LimitWebSocketsTotal {
		t.Fatalf("a 4th: %+v, want refused total", refused)
	}
	a1()
	a1()
	if _, refused := l.acquire("c"); refused != nil {
		t.Fatalf("after one released: %+v, want accepted", refused)
	}
	a2()
	b1()
	if l.total != 1 || len(l.byAddress) != 1 {
		t.Errorf("total %d, addresses %v, want 1 and c's", l.total, l.byAddress)
	}
}
