package redisstate

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/state/restcache"
)

// Traits is a restcache.TraitStore shared by the replicas: what one learnt
// of the upstream server (from any caller's answer) plans the calls of all.
// Traits describe the server, not a caller, so they are neither hashed by
// key nor sealed; every replica keeps its own copy in memory too, and asks
// Redis only for a trait it does not know, so a trait costs a round trip
// when it changes, not per request.
//
// Each value is stored with when an answer showed it, and is forgotten
// restcache.TraitKeep after that, field by field: a trait that no answer
// shows again (an endpoint known to be missing is not called) ages out
// whatever the others do, and the next call checks it again.
type Traits struct {
	s     *Store
	name  string
	local restcache.Traits

	// missed holds when Redis last had nothing of a trait: a trait no
	// answer has shown yet (the page size of a server whose chats fit one
	// page) is asked again only traitRecheck later, not by every request
	// that plans with it. Bounded: the trait names are constants.
	mu     sync.Mutex
	missed map[string]time.Time
}

// traitRecheck is how long a trait Redis did not have is taken as unknown
// before Redis is asked again: what another replica learnt meanwhile
// reaches this one within it.
const traitRecheck = 10 * time.Second

// Traits returns the shared store of the traits of the upstream at
// baseURL (replicas in front of different servers do not mix them).
func (s *Store) Traits(baseURL string) *Traits {
	t := &Traits{s: s, name: prefix + "upstream:" + s.ring.Key(baseURL).ID()}
	t.local.Clock = s.now
	return t
}

// Get returns this replica's value of trait, or else the shared one,
// while it is younger than restcache.TraitKeep.
func (t *Traits) Get(trait string) (string, bool) {
	if v, ok := t.local.Get(trait); ok {
		return v, true
	}
	now := t.s.now()
	t.mu.Lock()
	missedAt, missed := t.missed[trait]
	t.mu.Unlock()
	if missed && now.Sub(missedAt) < traitRecheck {
		return "", false
	}
	var raw string
	err := t.s.do(func(ctx context.Context) error {
		var err error
		raw, err = t.s.rdb.HGet(ctx, t.name, trait).Result()
		return err
	})
	v, seen, ok := parseTrait(raw)
	if err != nil || !ok || now.Sub(seen) > restcache.TraitKeep {
		t.mu.Lock()
		if t.missed == nil {
			t.missed = map[string]time.Time{}
		}
		t.missed[trait] = now
		t.mu.Unlock()
		return "", false
	}
	t.local.LearnSeen(trait, v, seen)
	return v, true
}

// Learn records what an answer showed, in Redis when it is news.
func (t *Traits) Learn(trait, value string) {
	now := t.s.now()
	if !t.local.Changed(trait, value, now) {
		return
	}
	_ = t.s.do(func(ctx context.Context) error {
		p := t.s.rdb.TxPipeline()
		p.HSet(ctx, t.name, trait, value+"@"+strconv.FormatInt(now.UnixMilli(), 10))
		// The hash outlives its youngest field; each field ages on its own.
		p.Expire(ctx, t.name, restcache.TraitKeep)
		_, err := p.Exec(ctx)
		return err
	})
}

// parseTrait reads a stored "value@unix-milliseconds".
func parseTrait(raw string) (value string, seen time.Time, ok bool) {
	i := strings.LastIndexByte(raw, '@')
	if i < 0 {
		return "", time.Time{}, false
	}
	ms, err := strconv.ParseInt(raw[i+1:], 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return raw[:i], time.UnixMilli(ms), true
}

var _ restcache.TraitStore = (*Traits)(nil)
