package restclient

import "net/http"

// KeyVerdict is what one answer of the upstream says of the API key the
// request carried. It is the one rule by which the facade learns which
// keys the upstream accepts (restcache.AcceptedKeys holds what it
// learnt), for every use of that fact: the breaker's, the bound on calls
// of new keys, metrics labels, persisted queries, subscription slots.
type KeyVerdict int8

// What an answer says of its key.
const (
	// KeyUnjudged: the answer says nothing of the key. No answer came; or
	// it came from before Sure's authentication (a routing error, the
	// 404 Rails answers a path it has no route for, with no rate-limit
	// reading), from a proxy or gateway in front of the app (a 502, an
	// HTML page), or it is no answer of the Sure API (a 2xx that is not
	// its JSON).
	KeyUnjudged KeyVerdict = iota
	// KeyAccepted: an answer Sure gives only to a key it authenticated.
	// Sure authenticates a request before anything else, and sends its
	// X-RateLimit-* headers with every authenticated answer, 4xx and 429
	// included ("Infinity" when self-hosted), and with no other: so a
	// Sure 2xx, or any answer but a 401 that carries the key's
	// rate-limit reading.
	KeyAccepted
	// KeyRejected: a 401, Sure's answer to a key it does not know, or no
	// longer (expired, revoked).
	KeyRejected
)

// KeyVerdict returns what c's answer says of the key it was sent with.
func (c Call) KeyVerdict() KeyVerdict {
	switch {
	case c.Status == http.StatusUnauthorized:
		return KeyRejected
	case c.Status >= 200 && c.Status < 300 && c.Err == nil, c.Status != 0 && c.RateLimit != nil:
		return KeyAccepted
	}
	return KeyUnjudged
}
