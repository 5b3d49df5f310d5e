package restcache_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/internal/state/restcache"
)

// A rejection is remembered for its TTL, by the key's id, then forgotten;
// the memory holds at most Max keys, forgetting the least recently
// rejected first; a request without a key is never "rejected".
func TestRejectedKeys(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	r := &restcache.RejectedKeys{Max: 3}
	r.Reject(keyOf("revoked"), now)
	if !r.Rejected(keyOf("revoked"), now.Add(restcache.DefaultRejectedKeyTTL-time.Nanosecond)) {
		t.Error("not rejected within the TTL")
	}
	if r.Rejected(keyOf("another"), now) {
		t.Error("another key rejected")
	}
	if r.Rejected(keyOf("revoked"), now.Add(restcache.DefaultRejectedKeyTTL)) || r.Len() != 0 {
		t.Errorf("rejected after the TTL, or kept (%d keys)", r.Len())
	}
	for i := range 5 {
		r.Reject(keyOf(fmt.Sprint("random-", i)), now)
	}
	if r.Len() != 3 || r.Rejected(keyOf("random-1"), now) || !r.Rejected(keyOf("random-4"), now) {
		t.Errorf("after 5 rejections: %d keys kept, want the last 3", r.Len())
	}
	r.Reject(callerkey.Key{}, now)
	if r.Rejected(callerkey.Key{}, now) {
		t.Error("the zero key rejected")
	}
}
