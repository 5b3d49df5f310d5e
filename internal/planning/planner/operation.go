package planner

import (
	"context"
	"sync"
)

// Operation is what the planner reads of a whole operation before any of
// its fields asks: package graph fills it once, from the operation's
// document and variables, when the operation starts (graph.Planning), and
// hands it to Begin. With it, every key the root fields will ask is known
// in advance, and nothing waits on a timer for company.
type Operation struct {
	// CategoryIDs are the ids the category(id:) root fields look up,
	// canonical: planned as one group, when the first of them asks.
	CategoryIDs []string
	// Nodes is what the node and nodes root fields ask: planned as one
	// group, reserved whole, when the first of them asks.
	Nodes []NodeAsk
	// CategoryLists are the response keys of the root fields that list
	// categories (categories), and CategoryFields those of the root
	// fields that look one up (category), when not deferred. Their
	// answers may hold ids asked by id, so lookups by id wait for the
	// lists, and node lookups for both (see Nodes); each signals its
	// answer through RootFieldAnswered.
	CategoryLists, CategoryFields []string
}

// Begin tells the planner of the operation that starts. The operations of
// a batch run one after another on one planner: each Begin replaces the
// last one's root fields.
func (l *Planner) Begin(op Operation) {
	l.answered.reset()
	l.mu.Lock()
	l.op = op
	l.mu.Unlock()
	l.byID.Expect(op.CategoryIDs...)
	l.expectNodes(op.Nodes...)
}

// operation returns the operation Begin was told of.
func (l *Planner) operation() Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.op
}

// rootFields are the operation's root fields, by response key, that
// signal when they have answered (RootFieldAnswered), so that lookups can
// use what they handed out.
type rootFields struct {
	mu   sync.Mutex
	done map[string]chan struct{}
}

func (r *rootFields) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = nil
}

func (r *rootFields) ch(field string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = map[string]chan struct{}{}
	}
	c := r.done[field]
	if c == nil {
		c = make(chan struct{})
		r.done[field] = c
	}
	return c
}

// wait returns once every field has answered, or with ctx's error. Every
// field named by Begin answers: graph.Planning signals each root field
// when it ends, however it ends.
func (r *rootFields) wait(ctx context.Context, fields []string) error {
	for _, f := range fields {
		select {
		case <-r.ch(f):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// RootFieldAnswered tells lookups waiting for the root field with this
// response key that its answer is in (the categories it handed out are
// known). graph.Planning calls it when each root field ends; a resolver
// may call it earlier, as soon as its answer is in; later calls do
// nothing.
func (l *Planner) RootFieldAnswered(field string) {
	c := l.answered.ch(field)
	l.answered.mu.Lock()
	defer l.answered.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}
