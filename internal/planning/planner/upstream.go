package planner

import (
	"errors"
	"strconv"
	"sync"

	"github.com/suregql/suregql/internal/state/restcache"
	"github.com/suregql/suregql/restclient"
)

// What the planner learns of the upstream server from its answers (Sure
// has no version endpoint, and its 0.6 and 0.7 lines answer differently;
// UPSTREAM.md, "Versions"). Every answer teaches for free; no call is ever
// sent to find out. See restcache's Trait constants.

// UnsupportedError is a question the upstream server cannot answer at its
// version: asked of it, it would answer something else (a filter it
// ignores), or its router does not know the endpoint.
type UnsupportedError struct {
	// What is missing, in words: "category classification".
	What string
	// Since names the Sure version that added it, e.g. "v0.7.1"; "" when
	// the server's version removed it.
	Since string
	// Removed names the Sure version that removed it, e.g. "v0.6.9".
	Removed string
}

func (e *UnsupportedError) Error() string {
	switch {
	case e.Removed != "":
		return "the Sure server's version has no " + e.What + " (Sure removed it in " + e.Removed + ")"
	case e.Since != "":
		return "the Sure server's version has no " + e.What + " (Sure " + e.Since + " added it)"
	}
	return "the Sure server's version has no " + e.What
}

// Errors of the features a server may lack.
var (
	errNoClassification = &UnsupportedError{What: "category classification", Removed: "v0.6.9"}
	errNoCreateCategory = &UnsupportedError{What: "category creation", Since: "v0.7.1"}
)

// traits returns the store of what is known of the upstream: the shared
// one, or else one of this process.
func (s *Shared) traits() restcache.TraitStore {
	if s.Traits != nil {
		return s.Traits
	}
	s.ownTraitsOnce.Do(func() { s.ownTraits = &restcache.Traits{} })
	return s.ownTraits
}

// fallbackTraits is the trait store of a Shared built without one (tests,
// tools): its own.
type fallbackTraits struct {
	ownTraitsOnce sync.Once
	ownTraits     *restcache.Traits
}

// trait returns what is known of one trait of the upstream.
func (l *Planner) trait(name string) (string, bool) { return l.shared.traits().Get(name) }

// learnCategories records what categories an answer held show of the
// server: whether they carry a classification.
func (l *Planner) learnCategories(cats []restclient.Category) {
	if len(cats) == 0 {
		return
	}
	v := restcache.TraitPresent
	if cats[0].Classification == "" {
		v = restcache.TraitAbsent
	}
	l.shared.traits().Learn(restcache.TraitClassification, v)
}

// lacksClassification reports whether the server is known to send no
// category classification (and to ignore the filter).
func (l *Planner) lacksClassification() bool {
	v, ok := l.trait(restcache.TraitClassification)
	return ok && v == restcache.TraitAbsent
}

// learnMessagesPerPage records the page size a chat answer showed.
func (l *Planner) learnMessagesPerPage(p restclient.MessagePage) {
	if p.SizeShown && p.PerPage > 0 {
		l.shared.traits().Learn(restcache.TraitMessagesPerPage, strconv.Itoa(p.PerPage))
	}
}

// messagesPerPage returns the page size of the server's chat messages:
// as learnt from its answers, or else today's (20 since v0.6.6).
func (l *Planner) messagesPerPage() int {
	if v, ok := l.trait(restcache.TraitMessagesPerPage); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return restclient.MessagesPerPage
}

// learnRateLimit records whether the server limits its keys, from a
// reading of one key's answer.
func (l *Planner) learnRateLimit(rl *restclient.RateLimit) {
	v := restcache.TraitPresent
	if rl.Unlimited {
		v = restcache.TraitAbsent
	}
	l.shared.traits().Learn(restcache.TraitRateLimit, v)
}

// serverUnlimited reports whether the server is known to limit no key.
func (l *Planner) serverUnlimited() bool {
	v, ok := l.trait(restcache.TraitRateLimit)
	return ok && v == restcache.TraitAbsent
}

// routeMissing reports whether the server's router is known not to have
// the endpoint of trait.
func (l *Planner) routeMissing(trait string) bool {
	v, ok := l.trait(trait)
	return ok && v == restcache.TraitAbsent
}

// learnRoute records, after a call to the endpoint of trait ended with
// err, whether the server has it: a 404 no controller answered says it
// has not; any answer of the API says it has.
func (l *Planner) learnRoute(trait string, err error) {
	switch {
	case restclient.IsNoRoute(err):
		l.shared.traits().Learn(trait, restcache.TraitAbsent)
	case err == nil:
		l.shared.traits().Learn(trait, restcache.TraitPresent)
	default:
		var api *restclient.APIError
		if errors.As(err, &api) {
			l.shared.traits().Learn(trait, restcache.TraitPresent)
		}
	}
}
