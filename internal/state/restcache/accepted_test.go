package restcache_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// The one record of accepted keys: an answer only an authenticated key
// gets accepts it (once: the first such answer says so), a 401 forgets it,
// any other answer changes nothing; past Max the key least recently
// accepted is forgotten.
func TestAcceptedKeys(t *testing.T) {
	reading := &restclient.RateLimit{Limit: 100, Remaining: 99}
	a := &restcache.AcceptedKeys{Max: 3}
	k := keyOf("k")
	for _, c := range []restclient.Call{
		{Status: http.StatusNotFound},                        // a routing error: before authentication
		{Status: http.StatusTooManyRequests},                 // a proxy's
		{Status: http.StatusServiceUnavailable},              // a gateway's
		{Status: http.StatusOK, Err: fmt.Errorf("not JSON")}, // no answer of the Sure API
		{},
	} {
		if a.Learn(k, c) || a.Accepted(k) {
			t.Fatalf("%+v accepted the key", c)
		}
	}
	if !a.Learn(k, restclient.Call{Status: http.StatusNotFound, RateLimit: reading}) || !a.Accepted(k) {
		t.Fatal("an authenticated 404 did not accept the key")
	}
	if a.Learn(k, restclient.Call{Status: http.StatusOK}) {
		t.Error("a key accepted again was reported accepted anew")
	}
	if !a.AcceptedID(k.ID()) || a.AcceptedID("") || a.Accepted(keyOf("other")) {
		t.Error("AcceptedID disagrees with Accepted")
	}
	a.Learn(k, restclient.Call{}) // an outage
	a.Learn(k, restclient.Call{Status: http.StatusBadGateway})
	if !a.Accepted(k) {
		t.Error("no answer, or a gateway's, forgot the key")
	}
	a.Learn(k, restclient.Call{Status: http.StatusUnauthorized})
	if a.Accepted(k) {
		t.Error("a key answered 401 is still accepted")
	}
	if !a.Learn(k, restclient.Call{Status: http.StatusOK}) {
		t.Error("a key accepted after its 401 was not reported accepted anew")
	}

	for _, key := range []string{"b", "c"} {
		a.Learn(keyOf(key), restclient.Call{Status: http.StatusOK})
	}
	a.Learn(k, restclient.Call{Status: http.StatusOK}) // k is the most recent again
	a.Learn(keyOf("d"), restclient.Call{Status: http.StatusOK})
	if a.Len() != 3 || a.Accepted(keyOf("b")) || !a.Accepted(k) || !a.Accepted(keyOf("c")) {
		t.Errorf("%d keys, b %t, k %t; want 3, b (the least recently accepted) forgotten", a.Len(), a.Accepted(keyOf("b")), a.Accepted(k))
	}

	var none *restcache.AcceptedKeys
	if none.Learn(k, restclient.Call{Status: http.StatusOK}) || none.Accepted(k) || none.Len() != 0 {
		t.Error("a nil AcceptedKeys accepted a key")
	}
}
