package restcache

import (
	"sync"
	"time"
)

// Traits of the upstream server, learnt from its answers: Sure has no
// version endpoint, and several release lines are in use at once (see
// UPSTREAM.md, "Versions"). A trait is a property of the server, not of a
// caller: one key's answer teaches the facade for every key.
const (
	// TraitClassification: do categories carry a classification
	// (TraitPresent before v0.6.9, TraitAbsent since)?
	TraitClassification = "category.classification"
	// TraitMessagesPerPage: the page size of a chat's messages, in
	// decimal ("20" since v0.6.6, "50" before).
	TraitMessagesPerPage = "messages.per_page"
	// TraitCreateCategory and TraitListImports: TraitAbsent when the
	// server's router does not know the endpoint (POST /categories before
	// v0.7.1, GET /imports before v0.6.7).
	TraitCreateCategory = "route.create_category"
	TraitListImports    = "route.list_imports"
	// TraitRateLimit: TraitAbsent when the server limits no key (a
	// self-hosted Sure answers "Infinity"), TraitPresent when it counts.
	TraitRateLimit = "rate_limit"
)

// Values of the traits that are there or not.
const (
	TraitPresent = "present"
	TraitAbsent  = "absent"
)

// TraitStore keeps the traits learnt of the upstream: Traits in memory, or
// a store the replicas share. Values it held longer than its keep time are
// forgotten (a server gets upgraded), and learnt again from the next
// answers.
type TraitStore interface {
	// Get returns the value of trait, if one is known.
	Get(trait string) (value string, ok bool)
	// Learn records what an answer showed of trait.
	Learn(trait, value string)
}

// TraitKeep is how long a trait is trusted without an answer showing it
// again: long enough to spare the calls that would show it, short enough
// that an upgraded server is soon met as such.
const TraitKeep = 10 * time.Minute

// Traits is the in-memory TraitStore. The zero value is ready to use.
type Traits struct {
	mu     sync.Mutex
	values map[string]trait
	// Clock is the clock of the keep time; nil means time.Now.
	Clock func() time.Time
}

type trait struct {
	value string
	seen  time.Time
}

func (t *Traits) now() time.Time {
	if t.Clock != nil {
		return t.Clock()
	}
	return time.Now()
}

// Get returns the value of trait seen within TraitKeep.
func (t *Traits) Get(name string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.values[name]
	if !ok || t.now().Sub(v.seen) > TraitKeep {
		return "", false
	}
	return v.value, true
}

// Learn records value for trait, seen now.
func (t *Traits) Learn(name, value string) { t.learn(name, value, t.now()) }

// LearnSeen records value for trait as an answer showed it at seen (a
// shared store's copy keeps its age), unless what is known was seen
// later.
func (t *Traits) LearnSeen(name, value string, seen time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.values[name]; ok && old.seen.After(seen) {
		return
	}
	if t.values == nil {
		t.values = map[string]trait{}
	}
	t.values[name] = trait{value: value, seen: seen}
}

func (t *Traits) learn(name, value string, now time.Time) (changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.values == nil {
		t.values = map[string]trait{}
	}
	old, ok := t.values[name]
	// Unchanged and seen lately: nothing to pass on. Refreshed at half its
	// keep time, so that a shared store's copy does not expire while
	// answers keep showing it.
	if ok && old.value == value && now.Sub(old.seen) < TraitKeep/2 {
		return false
	}
	t.values[name] = trait{value: value, seen: now}
	return true
}

// Changed is Learn for stores that pass what changed on (redisstate): it
// records value, seen at now, and reports whether it was news (a new
// value, or one last passed on half its keep time ago).
func (t *Traits) Changed(name, value string, now time.Time) bool { return t.learn(name, value, now) }
