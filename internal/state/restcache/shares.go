package restcache

import (
	"container/heap"
	"container/list"
	"sync"
)

// keyedAnswers is what a Cache holds: its answers grouped by the key they
// were read for, each key's from most to least recently used, within a
// bound of bytes (answerCost) and one of answers.
//
// Past a bound the key that holds the most bytes gives up its least
// recently used answer first (max-min fairness, as a shared cache of a
// multi-tenant gateway shares memory): one key reading many pages pushes
// out its own older answers, never the few another key holds, while a
// key alone may fill the whole cache. A global least-recently-used order
// would let any key's walk empty every other key's answers, their stale
// fallback included.
type keyedAnswers struct {
	maxBytes int64 // 0: no bound but the count
	maxCount int

	mu     sync.Mutex
	bytes  int64
	byID   map[string]*keptAnswer
	shares map[string]*keyShare // by key hash
	order  sharesBySize         // every key holding an answer, the largest first
}

// keyShare is what one key holds.
type keyShare struct {
	keyHash string
	bytes   int64
	recent  list.List // of *keptAnswer, the most recently used first
	index   int       // in keyedAnswers.order
}

// keptAnswer is one answer held, and its place.
type keptAnswer struct {
	id    string
	h     held
	cost  int64
	share *keyShare
	elem  *list.Element
}

func newKeyedAnswers(maxCount int) *keyedAnswers {
	return &keyedAnswers{maxCount: max(maxCount, 1), byID: map[string]*keptAnswer{}, shares: map[string]*keyShare{}}
}

// get returns the answer held as id, now its key's most recently used.
func (a *keyedAnswers) get(id string) (held, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byID[id]
	if !ok {
		return held{}, false
	}
	e.share.recent.MoveToFront(e.elem)
	return e.h, true
}

// add holds h as id (made by requestID: it names its key), replacing
// what id held, then gives up answers past the bounds (see keyedAnswers),
// never the one just added. An answer costing more than maxBytes alone is
// not held (it would push every other out and still pass the bound): add
// reports false, and id then holds nothing.
func (a *keyedAnswers) add(id string, h held) bool {
	cost := answerCost(id, h.resp)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeLocked(id)
	if a.maxBytes > 0 && cost > a.maxBytes {
		return false
	}
	kh := keyOfID(id)
	s := a.shares[kh]
	if s == nil {
		s = &keyShare{keyHash: kh}
		a.shares[kh] = s
		heap.Push(&a.order, s)
	}
	e := &keptAnswer{id: id, h: h, cost: cost, share: s}
	e.elem = s.recent.PushFront(e)
	a.byID[id] = e
	s.bytes += cost
	a.bytes += cost
	heap.Fix(&a.order, s.index)
	for a.over() {
		victim := a.victim(e)
		if victim == nil {
			break
		}
		a.removeLocked(victim.id)
	}
	return true
}

func (a *keyedAnswers) over() bool {
	return len(a.byID) > a.maxCount || (a.maxBytes > 0 && a.bytes > a.maxBytes)
}

// victim returns the answer to give up next: the least recently used of
// the key holding the most bytes, passing over keep (the answer being
// added), whose key may hold nothing else; nil when keep is all there is.
func (a *keyedAnswers) victim(keep *keptAnswer) *keptAnswer {
	pick := func(i int) *keptAnswer {
		if i >= len(a.order) {
			return nil
		}
		for el := a.order[i].recent.Back(); el != nil; el = el.Prev() {
			if e := el.Value.(*keptAnswer); e != keep {
				return e
			}
		}
		return nil
	}
	if v := pick(0); v != nil {
		return v
	}
	// The largest holder holds keep alone: the next largest is one of
	// the heap's two children of the root.
	l, r := pick(1), pick(2)
	switch {
	case l == nil:
		return r
	case r == nil || l.share.bytes >= r.share.bytes:
		return l
	}
	return r
}

// remove drops the answer held as id, if any.
func (a *keyedAnswers) remove(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeLocked(id)
}

func (a *keyedAnswers) removeLocked(id string) {
	e, ok := a.byID[id]
	if !ok {
		return
	}
	delete(a.byID, id)
	s := e.share
	s.recent.Remove(e.elem)
	s.bytes -= e.cost
	a.bytes -= e.cost
	if s.recent.Len() == 0 {
		heap.Remove(&a.order, s.index)
		delete(a.shares, s.keyHash)
		return
	}
	heap.Fix(&a.order, s.index)
}

// removeKey drops every answer held for the key of hash kh.
func (a *keyedAnswers) removeKey(kh string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.shares[kh]
	if s == nil {
		return
	}
	for el := s.recent.Front(); el != nil; el = el.Next() {
		e := el.Value.(*keptAnswer)
		delete(a.byID, e.id)
		a.bytes -= e.cost
	}
	heap.Remove(&a.order, s.index)
	delete(a.shares, kh)
}

// len returns how many answers are held.
func (a *keyedAnswers) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byID)
}

// size returns the bytes the answers take (answerCost).
func (a *keyedAnswers) size() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}

// sharesBySize is a heap of key shares, the one holding the most bytes
// at the root (container/heap).
type sharesBySize []*keyShare

func (h sharesBySize) Len() int           { return len(h) }
func (h sharesBySize) Less(i, j int) bool { return h[i].bytes > h[j].bytes }
func (h sharesBySize) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *sharesBySize) Push(x any) {
	s := x.(*keyShare)
	s.index = len(*h)
	*h = append(*h, s)
}
func (h *sharesBySize) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}
