package planner_test

import (
	"errors"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// The bound of new keys' calls reads the one record of accepted keys: a
// key's first call takes a token and its first answer that accepts it
// gives the token back; an accepted key passes freely, even with the
// bucket empty; a 401 makes it new again. Strangers' calls past the
// bucket are refused before any call.
func TestNewKeys_AcceptedKeysPassFreely(t *testing.T) {
	u := newUpstream(t)
	const valid, revoked, notFound = "a-valid-key", "a-key-revoked-later", "a-key-first-answered-404"
	for _, key := range []string{valid, revoked, notFound} {
		u.fake.AddKey(key, restclienttest.DemoKey)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	accepted := &restcache.AcceptedKeys{}
	shared := &planner.Shared{
		Upstream: u.client(t),
		Accepted: accepted,
		NewKeys:  &restcache.NewKeyCalls{Rate: 1e-9, Burst: 2}, // no refill within the test
		Now:      func() time.Time { return now },
	}
	read := func(key string) error {
		_, err := planner.New(shared, caller(key)).Client().ListCategories(t.Context(), restclient.ListCategoriesOptions{Page: 1, PerPage: 1})
		return err
	}
	refused := func(err error) bool {
		var nk *planner.NewKeyLimitError
		return errors.As(err, &nk)
	}
	// Each first call takes the bucket's one token and gives it back.
	for _, key := range []string{valid, revoked} {
		if err := read(key); err != nil {
			t.Fatalf("%s's first read: %v", key, err)
		}
	}
	if !accepted.Accepted(caller(valid).Key) || !accepted.Accepted(caller(revoked).Key) {
		t.Fatal("a key answered 200 is not accepted")
	}
	// Sure's 404 for a chat the key does not have is an authenticated
	// answer: it accepts the key as well.
	_, err := planner.New(shared, caller(notFound)).Client().GetChat(t.Context(), "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11", 1)
	if !restclient.IsNotFound(err) || !accepted.Accepted(caller(notFound).Key) {
		t.Fatalf("a key answered an authenticated 404 (%v): accepted %t, want true", err, accepted.Accepted(caller(notFound).Key))
	}
	for _, key := range []string{"stranger-1", "stranger-2"} { // the two tokens: 401s
		if err := read(key); !restclient.IsUnauthorized(err) {
			t.Fatalf("%s: %v, want a 401", key, err)
		}
	}
	sent := len(u.fake.Requests())
	if err := read("stranger-3"); !refused(err) {
		t.Errorf("a stranger past the bound: %v, want NewKeyLimitError", err)
	}
	for range 5 {
		if err := read(valid); err != nil {
			t.Fatalf("an accepted key with the bucket empty: %v", err)
		}
	}
	u.fake.RevokeKey(revoked)
	if err := read(revoked); !restclient.IsUnauthorized(err) {
		t.Fatalf("the revoked key: %v, want a 401", err)
	}
	if err := read(revoked); !refused(err) {
		t.Errorf("a key rejected since: %v, want NewKeyLimitError (a new key again)", err)
	}
	if got, want := len(u.fake.Requests())-sent, 5+1; got != want {
		t.Errorf("%d calls reached the upstream after the bucket emptied, want %d (the accepted key's and the revoked key's 401)", got, want)
	}
}
