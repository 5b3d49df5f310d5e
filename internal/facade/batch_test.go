package facade_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/observe/metrics"
)

// batchOp is one operation of a batch, as Apollo's BatchHttpLink sends it.
type batchOp struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// batchAnswer is one element of a batch's answer.
type batchAnswer struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gotError      `json:"errors"`
	Extensions extensions      `json:"extensions"`
	hasData    bool            // the element has a "data" entry (null or not)
}

// code returns the extensions.code of the answer's first error, or "".
func (a batchAnswer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	return fmt.Sprint(a.Errors[0].Extensions["code"])
}

// batchResult is the answer to one batched POST.
type batchResult struct {
	status      int
	contentType string
	answers     []batchAnswer
	calls       int // upstream calls the fake counted for the whole batch
}

// postBatch sends ops as one JSON array, as key, with accept as the Accept
// header ("" sends none), and decodes the array answered. The
// extensions.upstream.calls of the answers must add up to the calls the
// fake upstream counted.
func postBatch(t *testing.T, e *env, key string, ops []batchOp, accept string) batchResult {
	t.Helper()
	body, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"X-Api-Key": key}
	if accept != "" {
		headers["Accept"] = accept
	}
	before := e.upstream.Calls()
	r := postJSON(t, e, string(body), headers)
	res := batchResult{status: r.status, contentType: r.contentType, calls: e.upstream.Calls() - before}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(r.raw), &elems); err != nil {
		t.Fatalf("status %d: the answer is not a JSON array (%v): %.500s", r.status, err, r.raw)
	}
	if len(elems) != len(ops) {
		t.Fatalf("%d answers to %d operations: %.500s", len(elems), len(ops), r.raw)
	}
	reported := 0
	for _, elem := range elems {
		var a batchAnswer
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(elem, &a); err != nil || json.Unmarshal(elem, &entries) != nil {
			t.Fatalf("decode %s: %v", elem, err)
		}
		_, a.hasData = entries["data"]
		reported += a.Extensions.Upstream.Calls
		res.answers = append(res.answers, a)
	}
	if reported != res.calls {
		t.Errorf("the answers report %d upstream calls in all, the upstream counted %d", reported, res.calls)
	}
	return res
}

// callsOf returns each answer's extensions.upstream.calls.
func (r batchResult) callsOf() []int {
	var calls []int
	for _, a := range r.answers {
		calls = append(calls, a.Extensions.Upstream.Calls)
	}
	return calls
}

// Three operations that each need the demo category family, sent as a
// batch: the first reads the family's list (one call) and the two others
// answer from it, each answer in the order sent and reporting its own
// calls. Sent one by one, the same operations cost 4 calls.
func TestBatch_OperationsShareOneDataLayer(t *testing.T) {
	t.Parallel()
	key := restclienttest.DemoKey
	e := newEnv(t)
	food, _ := e.upstream.CategoryByName(key, "Food & Drink")
	ops := []batchOp{
		{Query: treeQuery},
		{Query: `query One($id: ID!) { category(id: $id) { name subcategories(first: 50) { nodes { name parent { name color } } } } }`, OperationName: "One",
			Variables: map[string]any{"id": food.ID}},
		{Query: `{ categories(first: 100) { totalCount nodes { name parent { name } } } }`},
	}
	alone := 0
	for _, op := range ops {
		alone += newEnv(t).do(key, op.Query, op.Variables).calls
	}

	for _, accept := range []string{"", "application/graphql-response+json"} {
		t.Run("Accept "+accept, func(t *testing.T) {
			e := newEnv(t)
			r := postBatch(t, e, key, ops, accept)
			if r.status != http.StatusOK {
				t.Errorf("status %d, want 200", r.status)
			}
			if want := cmpOr(accept, "application/json"); r.contentType != want {
				t.Errorf("Content-Type %q, want %q", r.contentType, want)
			}
			if r.calls != 1 {
				t.Errorf("the batch cost %d upstream calls, want 1 (its operations sent one by one cost %d)", r.calls, alone)
			}
			if got := r.callsOf(); !slices.Equal(got, []int{1, 0, 0}) {
				t.Errorf("extensions.upstream.calls = %v, want [1 0 0]: the first operation read the family", got)
			}
			for i, a := range r.answers {
				if len(a.Errors) > 0 {
					t.Fatalf("answer %d: errors %v", i, a.Errors)
				}
			}
			var tree struct{ Categories categoryConn }
			var one struct{ Category categoryNode }
			var flat struct{ Categories categoryConn }
			for i, out := range []any{&tree, &one, &flat} {
				if err := json.Unmarshal(r.answers[i].Data, out); err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
			}
			wantTree(t, e, key, tree.Categories.Nodes)
			wantSubtrees(t, e, key, []categoryNode{one.Category})
			if one.Category.Name != food.Name {
				t.Errorf("answer 1 names %q, want %q", one.Category.Name, food.Name)
			}
			if n := len(e.upstream.Categories(key)); flat.Categories.TotalCount != n || len(flat.Categories.Nodes) != n {
				t.Errorf("answer 2 has %d of %d categories, want all %d", len(flat.Categories.Nodes), flat.Categories.TotalCount, n)
			}
		})
	}
	if alone != 3 { // README.md's figure
		t.Errorf("sent one by one the operations cost %d calls, want 3 (1 each: the lookup wanting subcategories reads the family's first page)", alone)
	}
}

// The errors of one operation (parse, validation, a document limit, a
// field's bad input) stay in its own answer: the others answer, and only
// the operations that ran cost calls. Under
// application/graphql-response+json an operation refused before it ran has
// no "data" entry, as it would alone; the batch answers 200 either way.
func TestBatch_ErrorsStayInTheirOperation(t *testing.T) {
	t.Parallel()
	deep := "{ categories(first: 1) { nodes { " + strings.Repeat("parent { ", 15) + "name" + strings.Repeat(" }", 15) + " } } }"
	ops := []batchOp{
		{Query: `{ chats(first: 2) { totalCount } }`},
		{Query: `{ categories(first: `},
		{Query: `{ categories(first: 1) { nodes { noSuchField } } }`},
		{Query: deep},
		{Query: `{ category(id: "not-a-uuid") { name } }`},
		{Query: `{ categories(first: 1) { totalCount } }`},
	}
	wantCodes := []string{"", "GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "QUERY_LIMIT_EXCEEDED", "BAD_USER_INPUT", ""}
	for _, accept := range []string{"application/json", "application/graphql-response+json"} {
		t.Run(accept, func(t *testing.T) {
			e := newEnv(t)
			r := postBatch(t, e, restclienttest.DemoKey, ops, accept)
			if r.status != http.StatusOK {
				t.Errorf("status %d, want 200", r.status)
			}
			for i, a := range r.answers {
				if got := a.code(); got != wantCodes[i] {
					t.Errorf("answer %d: code %q, want %q (errors %v)", i, got, wantCodes[i], a.Errors)
				}
				refusedBeforeRunning := i >= 1 && i <= 3
				if wantData := !refusedBeforeRunning || accept == "application/json"; a.hasData != wantData {
					t.Errorf("answer %d has a data entry: %t, want %t", i, a.hasData, wantData)
				}
			}
			if got := r.callsOf(); !slices.Equal(got, []int{1, 0, 0, 0, 0, 1}) {
				t.Errorf("extensions.upstream.calls = %v, want [1 0 0 0 0 1]", got)
			}
			if !strings.Contains(string(r.answers[5].Data), `"totalCount":`) {
				t.Errorf("the last operation did not answer: %s", r.answers[5].Data)
			}
		})
	}
}

// Operations run in the order sent: a query after a mutation reads what
// the mutation wrote (the data layer forgets the chats it read before),
// a query before it does not.
func TestBatch_MutationsApplyInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	const newest = `{ chats(first: 1) { totalCount nodes { title } } }`
	r := postBatch(t, e, key, []batchOp{
		{Query: newest},
		{Query: `mutation { createChat(input: {title: "Batched"}) { chat { id title } } }`},
		{Query: newest},
	}, "")
	var before, after struct{ Chats chatConn }
	if err := json.Unmarshal(r.answers[0].Data, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.answers[2].Data, &after); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.answers[1].Data), `"title":"Batched"`) {
		t.Fatalf("the mutation answered %s %v", r.answers[1].Data, r.answers[1].Errors)
	}
	if len(before.Chats.Nodes) > 0 && before.Chats.Nodes[0].Title == "Batched" {
		t.Errorf("the query before the mutation saw its chat")
	}
	if after.Chats.TotalCount != before.Chats.TotalCount+1 || len(after.Chats.Nodes) != 1 || after.Chats.Nodes[0].Title != "Batched" {
		t.Errorf("after the mutation: %+v; before: %d chats; want the new chat first and one more", after.Chats, before.Chats.TotalCount)
	}
	if got := r.callsOf(); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("extensions.upstream.calls = %v, want [1 1 1]: the read after the write is sent again", got)
	}
}

// A batch spends one upstream-call budget: once the earlier operations
// spent it, an operation whose root fields need more is refused before
// any call, saying what was spent, and the others still answer.
func TestBatch_SharesOneBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = 2 }))
	r := postBatch(t, e, restclienttest.DemoKey, []batchOp{
		{Query: `{ chats(first: 2) { totalCount } }`},
		{Query: `{ categories(first: 2) { totalCount } }`},
		{Query: `{ categories(first: 2, classification: INCOME) { totalCount } }`},
		{Query: `{ rateLimit { limit } }`},
	}, "")
	if got := r.callsOf(); !slices.Equal(got, []int{1, 1, 0, 0}) {
		t.Errorf("extensions.upstream.calls = %v, want [1 1 0 0]", got)
	}
	for i, want := range []string{"", "", "QUERY_TOO_EXPENSIVE", ""} {
		if got := r.answers[i].code(); got != want {
			t.Errorf("answer %d: code %q, want %q (%v)", i, got, want, r.answers[i].Errors)
		}
	}
	if ext := r.answers[2].Errors[0].Extensions; fmt.Sprintf("%v %v %v", ext["budget"], ext["spent"], ext["planned"]) != "2 2 1" {
		t.Errorf("extensions = %v, want budget 2, spent 2, planned 1", ext)
	}
}

// The operation timeout is the request's: an operation still waiting for
// the upstream at the deadline answers UPSTREAM_UNAVAILABLE for its
// fields, and the operations not started by then answer it without
// running (no call).
func TestBatch_DeadlineCoversTheBatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fake := restclienttest.New()
		release := fake.Hold()
		defer release()
		h := inBubble(t, fake, 300*time.Millisecond)
		rec := postIn(h, `[{"query":"{ chats(first: 1) { totalCount } }"},{"query":"{ categories(first: 1) { totalCount } }"}]`)
		var answers []batchAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil || len(answers) != 2 {
			t.Fatalf("answer %s: %v, want an array of 2", rec.Body, err)
		}
		var calls []int
		for i, a := range answers {
			if a.code() != "UPSTREAM_UNAVAILABLE" || a.Errors[0].Extensions["reason"] != "timeout" {
				t.Errorf("answer %d: errors %v, want UPSTREAM_UNAVAILABLE with reason timeout", i, a.Errors)
			}
			calls = append(calls, a.Extensions.Upstream.Calls)
		}
		if !slices.Equal(calls, []int{1, 0}) || fake.Calls() != 1 {
			t.Errorf("extensions.upstream.calls = %v (the upstream counted %d), want [1 0]: the second operation never ran", calls, fake.Calls())
		}
	})
}

// Each operation of a batch is logged, counted and timed on its own, with
// its own upstream calls.
func TestBatch_EachOperationIsObserved(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e, logs := jsonLogs(t, withConfig(func(c *facade.Config) { c.Metrics = m }))
	postBatch(t, e, restclienttest.DemoKey, []batchOp{
		{Query: `query Tree { categories(first: 100) { nodes { name } } }`, OperationName: "Tree"},
		{Query: `query Again { categories(first: 100) { totalCount } }`, OperationName: "Again"},
		{Query: `query Broken { categories(first: 1) { nope } }`, OperationName: "Broken"},
	}, "")
	var got []string
	for _, line := range logLines(t, logs.String()) {
		if line["msg"] == "graphql operation" {
			got = append(got, fmt.Sprint(line["operation"], " ", line["upstreamCalls"], " ", line["outcome"]))
		}
	}
	if want := []string{"Tree 1 ok", "Again 0 ok", "Broken 0 failed"}; !slices.Equal(got, want) {
		t.Errorf("operation log lines = %q, want %q", got, want)
	}
	families, _ := scrapeMetrics(t, e.server.URL+"/metrics")
	ops := series(families, "suregql_operations_total")
	for labels, n := range map[string]float64{
		`operation="Tree",outcome="ok",type="query"`:                            1,
		`operation="Again",outcome="ok",type="query"`:                           1,
		`operation="Broken",outcome="GRAPHQL_VALIDATION_FAILED",type="unknown"`: 1,
	} {
		if ops[labels] != n {
			t.Errorf("suregql_operations_total{%s} = %v, want %v (all: %v)", labels, ops[labels], n, ops)
		}
	}
}

// A batch larger than -max-batch is refused whole, before any operation
// runs; one at the bound answers.
func TestBatch_MaxBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxBatch = 2 }))
	op := batchOp{Query: `{ categories(first: 1) { totalCount } }`}
	if r := postBatch(t, e, restclienttest.DemoKey, []batchOp{op, op}, ""); r.calls != 1 {
		t.Errorf("a batch of 2 cost %d calls, want 1", r.calls)
	}
	body, _ := json.Marshal([]batchOp{op, op, op})
	before := e.upstream.Calls()
	r := postJSON(t, e, string(body), map[string]string{"X-Api-Key": restclienttest.DemoKey})
	if r.status != http.StatusBadRequest {
		t.Errorf("status %d, want 400", r.status)
	}
	errs, _ := r.body["errors"].([]any)
	first, _ := errs[0].(map[string]any)
	if ext, _ := first["extensions"].(map[string]any); fmt.Sprintf("%v %v %v %v", ext["code"], ext["limit"], ext["max"], ext["count"]) != "QUERY_LIMIT_EXCEEDED batchSize 2 3" {
		t.Errorf("extensions = %v, want QUERY_LIMIT_EXCEEDED, limit batchSize, max 2, count 3", first["extensions"])
	}
	if calls := e.upstream.Calls() - before; calls != 0 {
		t.Errorf("upstream calls = %d, want 0", calls)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// A batch never costs more calls than the same selections sent as one
// operation (whose root fields run concurrently), over every ordered
// triple of six queries of the demo family: a later operation answers from
// what an earlier one read, and an earlier one reads what the later ones
// can share (a lookup that wants subcategories reads the family's first
// page, which the lists then answer from).
func TestBatch_NeverCostsMoreThanOneOperation(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive run (240 envs): skipped with -short")
	}
	t.Parallel()
	key := restclienttest.DemoKey
	// A server with classifications (before v0.6.9), for the filter below.
	legacy := withUpstream(restclienttest.WithVersion(restclienttest.Legacy))
	food, _ := newEnv(t, legacy).upstream.CategoryByName(key, "Food & Drink")
	fields := []string{ // root fields, each alone an operation; $id is Food & Drink
		`categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } }`,
		`category(id: $id) { name subcategories(first: 50) { nodes { name } } }`,
		`categories(first: 100) { totalCount nodes { name parent { name } subcategoriesCount } }`,
		`categories(first: 100, classification: EXPENSE) { totalCount nodes { name } }`,
		`categories(parentId: $id, first: 10) { nodes { name } }`,
		`chats(first: 5) { nodes { title } }`,
	}
	document := func(sel string) (string, map[string]any) {
		if strings.Contains(sel, "$id") {
			return "query($id: ID!) { " + sel + " }", map[string]any{"id": food.ID}
		}
		return "{ " + sel + " }", nil
	}
	var inOrder, merged int
	var worse []string
	for i := range fields {
		for j := range fields {
			for k := range fields {
				if i == j || j == k || i == k {
					continue
				}
				var ops []batchOp
				var sel string
				for n, f := range []int{i, j, k} {
					q, vars := document(fields[f])
					ops = append(ops, batchOp{Query: q, Variables: vars})
					sel += fmt.Sprintf(" a%d: %s", n, fields[f])
				}
				batch := postBatch(t, newEnv(t, legacy), key, ops, "").calls
				q, vars := document(sel)
				one := newEnv(t, legacy).do(key, q, vars)
				if len(one.errs) > 0 {
					t.Fatalf("%s: %v", q, one.errs)
				}
				inOrder += batch
				merged += one.calls
				if batch > one.calls {
					worse = append(worse, fmt.Sprintf("%d%d%d: %d > %d", i, j, k, batch, one.calls))
				}
			}
		}
	}
	t.Logf("120 ordered triples: %d calls as batches, %d as one operation each; batches cost more for %v", inOrder, merged, worse)
	if len(worse) > 0 {
		t.Errorf("batches cost more calls than one operation for %v", worse)
	}
}
