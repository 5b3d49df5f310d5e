package gqlhttp

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"

	"github.com/suregql/suregql/internal/observe/metrics"
)

// Defaults of the WebSocket limits (Options).
const (
	// DefaultMaxWebSockets matches the subscriptions the server serves
	// (live.DefaultMaxTotal): a connection holding none is closed soon
	// (DefaultWebSocketIdleTimeout), so the connections open are about
	// the subscribed clients. Each costs about 50 KB held.
	DefaultMaxWebSockets = 1000
	// DefaultMaxWebSocketsPerAddress leaves room for the tabs of a
	// household or an office behind one address, and keeps one address
	// to a few MB of the server's memory.
	DefaultMaxWebSocketsPerAddress = 64
)

// CodeConnectionLimitExceeded refuses a WebSocket past -max-websockets
// or -max-websockets-per-address (extensions.limit: total or perAddress,
// and max), before the upgrade.
const CodeConnectionLimitExceeded = "CONNECTION_LIMIT_EXCEEDED"

// Limits of CodeConnectionLimitExceeded (extensions.limit).
const (
	LimitWebSocketsTotal      = "total"
	LimitWebSocketsPerAddress = "perAddress"
)

// wsLimits counts the WebSockets open, in all and per client address,
// and refuses one past either bound: a stranger's connections, held
// without a key, cost the server memory for as long as they stay open.
type wsLimits struct {
	maxTotal, maxPerAddress int // maxPerAddress 0: none
	meter                   *metrics.Metrics

	mu        sync.Mutex
	total     int
	byAddress map[string]int
}

func newWSLimits(maxTotal, maxPerAddress int, meter *metrics.Metrics) *wsLimits {
	if maxTotal <= 0 {
		maxTotal = DefaultMaxWebSockets
	}
	switch {
	case maxPerAddress == 0:
		maxPerAddress = DefaultMaxWebSocketsPerAddress
	case maxPerAddress < 0:
		maxPerAddress = 0
	}
	return &wsLimits{maxTotal: maxTotal, maxPerAddress: maxPerAddress, meter: meter, byAddress: map[string]int{}}
}

// wsLimitRefusal is why a WebSocket is refused: the limit passed.
type wsLimitRefusal struct {
	limit  string
	max    int
	status int
}

func (r *wsLimitRefusal) answer(refused refusedRequest) {
	msg := fmt.Sprintf("this address has %d WebSockets open, the most one address may have; close one first", r.max)
	if r.limit == LimitWebSocketsTotal {
		msg = fmt.Sprintf("the server has %d WebSockets open, the most it serves; try again later", r.max)
	}
	refused.answerError(r.status, map[string]any{"message": msg, "extensions": map[string]any{
		"code": CodeConnectionLimitExceeded, "limit": r.limit, "max": r.max,
	}})
}

// acquire counts a WebSocket from addr, or says which limit refuses it.
// release uncounts it; call it once the connection is closed.
func (l *wsLimits) acquire(addr string) (release func(), refused *wsLimitRefusal) {
	l.mu.Lock()
	switch {
	case l.maxPerAddress > 0 && l.byAddress[addr] >= l.maxPerAddress:
		refused = &wsLimitRefusal{limit: LimitWebSocketsPerAddress, max: l.maxPerAddress, status: http.StatusTooManyRequests}
	case l.total >= l.maxTotal:
		refused = &wsLimitRefusal{limit: LimitWebSocketsTotal, max: l.maxTotal, status: http.StatusServiceUnavailable}
	}
	if refused != nil {
		l.mu.Unlock()
		l.meter.WebSocketRefused(refused.limit)
		return nil, refused
	}
	l.total++
	l.byAddress[addr]++
	l.mu.Unlock()
	l.meter.WebSocketOpened(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.total--
			if l.byAddress[addr]--; l.byAddress[addr] <= 0 {
				delete(l.byAddress, addr)
			}
			l.mu.Unlock()
			l.meter.WebSocketOpened(-1)
		})
	}, nil
}

// clientAddress names the client of r for the per-address limit: its IP
// address, or for IPv6 its /64 (what one subscriber is routed, so that
// its addresses count as one). Behind a reverse proxy every client has
// the proxy's address: -max-websockets-per-address 0 turns the limit off.
func clientAddress(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr // not ip:port (a test's pipe): as it is
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
