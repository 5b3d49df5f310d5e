package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/suregql/suregql/internal/edge/detach"
)

// streamingKey marks the context of an operation streamAnswer delivers in
// parts: its deferred fragments are left to it.
type streamingKey struct{}

// inlineDeferred answers a query holding @defer that is not answered in
// parts (a client that does not accept multipart/mixed, a batch, a GET)
// in one piece with its deferred fragments in place, as @defer lets a
// server do; sharedQueries.middleware, the innermost response middleware,
// calls it for what it does not share. gqlgen's executor would answer the
// initial payload alone (the deferred fields null, "hasNext": true) while
// still making the deferred fragments' upstream calls, whose answers
// nobody would read: calls spent, and missing from the operation's report.
//
// The operation runs on a detached context (see package detach) so that
// every fragment is delivered and drained whatever becomes of the
// request; its upstream calls still end with the request.
func inlineDeferred(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if ctx.Value(streamingKey{}) != nil || !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || !strings.Contains(oc.RawQuery, "defer") {
		return next(ctx)
	}
	ctx = detach.Operation(ctx)
	resp := next(ctx)
	if resp == nil || resp.HasNext == nil {
		return resp
	}
	var frags []*graphql.Response
	for more := *resp.HasNext; more; {
		f := next(ctx)
		if f == nil {
			break
		}
		// The executor appends the operation's own errors (those of the
		// initial payload, already in resp) to every later answer.
		if own := len(graphql.GetErrors(ctx)); own <= len(f.Errors) {
			f.Errors = f.Errors[:len(f.Errors)-own]
		}
		frags = append(frags, f)
		more = f.HasNext != nil && *f.HasNext
	}
	resp.HasNext = nil
	resp.Data = mergeFragments(resp.Data, frags)
	for _, f := range frags {
		resp.Errors = append(resp.Errors, f.Errors...)
	}
	return resp
}

// mergeFragments returns data with each fragment's fields set in the
// object at its path. A fragment nested in another may come before it: the
// fragments whose path is not there yet (or null) are tried again after
// the others; those still without their object (an error nulled it) are
// dropped.
func mergeFragments(data json.RawMessage, frags []*graphql.Response) json.RawMessage {
	for len(frags) > 0 {
		var left []*graphql.Response
		for _, f := range frags {
			merged, st := mergeAt(data, f.Path, f.Data)
			switch st {
			case merge:
				data = merged
			case later:
				left = append(left, f)
			}
		}
		if len(left) == len(frags) {
			break // none applies: their objects never came
		}
		frags = left
	}
	return data
}

type mergeState int

const (
	merge mergeState = iota
	later            // the path is not there, or null (yet)
	drop             // the data are not what the path says
)

// mergeAt sets frag's members in the object of data at path, keeping the
// order of data's members (the fields a deferred fragment answers are
// there already, null).
func mergeAt(data json.RawMessage, path ast.Path, frag json.RawMessage) (json.RawMessage, mergeState) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		// Not delivered yet (a deferred field is null until its
		// fragment is in), or nulled by an error: tried again after
		// the others, then dropped.
		return data, later
	}
	if len(path) == 0 {
		obj, ok := decodeObject(data)
		add, ok2 := decodeObject(frag)
		if !ok || !ok2 {
			return data, drop
		}
		for _, m := range add {
			obj = obj.set(m.key, m.value)
		}
		return obj.encode(), merge
	}
	switch p := path[0].(type) {
	case ast.PathName:
		obj, ok := decodeObject(data)
		if !ok {
			return data, drop
		}
		i := obj.index(string(p))
		if i < 0 {
			return data, later
		}
		v, st := mergeAt(obj[i].value, path[1:], frag)
		if st != merge {
			return data, st
		}
		obj[i].value = v
		return obj.encode(), merge
	case ast.PathIndex:
		var list []json.RawMessage
		if json.Unmarshal(data, &list) != nil {
			return data, drop
		}
		if int(p) < 0 || int(p) >= len(list) {
			return data, later
		}
		v, st := mergeAt(list[p], path[1:], frag)
		if st != merge {
			return data, st
		}
		list[p] = v
		b, err := json.Marshal(list)
		if err != nil {
			return data, drop
		}
		return b, merge
	}
	return data, drop
}

// object is a JSON object's members in order.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

func decodeObject(data json.RawMessage) (object, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var obj object
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		obj = append(obj, member{key, v})
	}
	return obj, true
}

func (o object) index(key string) int {
	for i, m := range o {
		if m.key == key {
			return i
		}
	}
	return -1
}

func (o object) set(key string, v json.RawMessage) object {
	if i := o.index(key); i >= 0 {
		o[i].value = v
		return o
	}
	return append(o, member{key, v})
}

func (o object) encode() json.RawMessage {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(m.key)
		b = append(append(append(b, k...), ':'), m.value...)
	}
	return append(b, '}')
}
