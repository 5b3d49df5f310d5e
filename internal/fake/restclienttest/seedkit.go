package restclienttest

import (
	"encoding/json"
	"fmt"
	"time"
)

// This file holds the small builders the seeds use. Every id is derived from
// a path-like name ("demo/category/Food & Drink",
// "demo/chat/<title>/message/3/tool_call/1", ...) so that ids never change.

// categorySeeder collects the categories of one family, then adds them at once
// (adding sorts, which would be quadratic one by one).
type categorySeeder struct {
	prefix string // e.g. "demo"
	cats   []*category
}

// root adds a root category.
func (cs *categorySeeder) root(name, classification, color, icon string, at time.Time) *category {
	c := &category{
		id:             seedID(cs.prefix + "/category/" + name),
		name:           name,
		classification: classification,
		color:          color,
		icon:           icon,
		createdAt:      at,
		updatedAt:      at,
	}
	cs.cats = append(cs.cats, c)
	return c
}

// sub adds a subcategory of parent. As in Sure, it takes its parent's
// classification (a validation) and its parent's color (a before_save).
func (cs *categorySeeder) sub(parent *category, name, icon string, at time.Time) {
	c := cs.root(name, parent.classification, parent.color, icon, at)
	c.parent = parent
}

func (cs *categorySeeder) into(f *family) { f.addCategories(cs.cats...) }

// chatBuilder writes one chat, a message at a time, each message step after
// the previous one.
type chatBuilder struct {
	prefix string // the chat's id name; messages derive theirs from it
	ch     *chat
	next   time.Time
	step   time.Duration
}

// tool is a tool call to seed; result "" seeds a null function_result.
type tool struct {
	name, args, result string
}

func newChat(owner, title string, at time.Time, step time.Duration) *chatBuilder {
	prefix := owner + "/chat/" + title
	return &chatBuilder{
		prefix: prefix,
		ch:     &chat{id: seedID(prefix), title: title, createdAt: at, updatedAt: at},
		next:   at,
		step:   step,
	}
}

func (b *chatBuilder) user(content string) *chatBuilder {
	return b.add(&message{content: content, model: defaultModel})
}

func (b *chatBuilder) assistant(content string, calls ...tool) *chatBuilder {
	m := &message{assistant: true, content: content, model: defaultModel}
	n := len(b.ch.messages) + 1
	for i, tc := range calls {
		var result json.RawMessage
		if tc.result != "" {
			result = json.RawMessage(tc.result)
		}
		m.toolCalls = append(m.toolCalls, toolCall{
			id:           seedID(fmt.Sprintf("%s/message/%d/tool_call/%d", b.prefix, n, i+1)),
			functionName: tc.name,
			arguments:    json.RawMessage(tc.args),
			result:       result,
			// The functions run before the answer is written.
			createdAt: b.next.Add(-time.Duration(len(calls)-i) * time.Second),
		})
	}
	return b.add(m)
}

func (b *chatBuilder) add(m *message) *chatBuilder {
	m.id = seedID(fmt.Sprintf("%s/message/%d", b.prefix, len(b.ch.messages)+1))
	m.createdAt, m.updatedAt = b.next, b.next
	b.ch.messages = append(b.ch.messages, m)
	b.ch.updatedAt = b.next
	b.next = b.next.Add(b.step)
	return b
}

// failed records the error the chat ended with.
func (b *chatBuilder) failed(err string) *chatBuilder {
	b.ch.errMsg = err
	return b
}

func (b *chatBuilder) into(u *user) { u.addChat(b.ch) }

// at parses a seed timestamp; seeds are constants, so a typo panics early.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic("restclienttest: bad seed time " + s)
	}
	return t
}

// str is a non-null configuration value.
func str(s string) *string { return &s }
