// Package restcache holds what the facade shares between requests to save
// upstream calls: a coalescer that lets identical GETs in flight at the same
// moment share one call, an optional TTL cache of GET answers, and what is
// known of each key (its rate limit, its family's size, its writes). All of
// it is keyed by a hash of the API key, so nothing is ever shared between
// two keys, and every map keyed by a caller is bounded.
package restcache

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"suregql/restclient"
)

// DefaultMaxKeys bounds every map keyed by API key: past it the least
// recently seen key is forgotten, so strangers sending random keys cannot
// grow memory.
const DefaultMaxKeys = 100_000

// KeyHash returns a stable digest of an API key, so that maps keyed by the
// caller never hold the key itself.
func KeyHash(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:16])
}

func requestID(k restclient.RequestKey) string {
	return KeyHash(k.APIKey) + " " + k.Path
}

// keyOfID returns the key hash an id made by requestID starts with.
func keyOfID(id string) string {
	h, _, _ := strings.Cut(id, " ")
	return h
}
