package facade_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// manyDeferred is issue 25's row 1 query: every category of a page of 100
// with 49 deferred fragments, 30 deferring an aliased parent (a resolver,
// so one part per category each) and 19 deferring a scalar field.
func manyDeferred(withDefer bool) string {
	var b strings.Builder
	b.WriteString("query Many { categories(first: 100) { nodes { name ...F } } }\nfragment F on Category {\n")
	deferred := func(label string) string {
		if !withDefer {
			return "..."
		}
		return fmt.Sprintf(`... @defer(label: %q)`, label)
	}
	for i := range 30 {
		fmt.Fprintf(&b, "  %s { a%d: parent { name } }\n", deferred(fmt.Sprintf("a%d", i)), i)
	}
	scalars := []string{"color", "icon", "id", "createdAt", "updatedAt", "subcategoriesCount", "classification"}
	for i := range 19 {
		fmt.Fprintf(&b, "  %s { %s }\n", deferred(fmt.Sprintf("b%d", i)), scalars[i%len(scalars)])
	}
	b.WriteString("}\n")
	return b.String()
}

// processCPU is the CPU time the process has used, user and system.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// allocated is the bytes the process has allocated so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A query with 49 deferred fragments over a page of categories, answered
// in one piece (issue 25, row 1), costs what the same query without
// @defer costs: the server answers it as if it had no @defer (which
// incremental delivery lets a server do), making no part at all. It
// decoded and re-encoded the whole answer once per deferred part before:
// ~1.7 CPU-s a request. Counted in bytes allocated by the whole process
// (the test runs alone); the CPU time is printed for the record.
func TestDefer_OnePieceCostsWhatTheQueryWithoutDeferCosts(t *testing.T) {
	e := newEnv(t)
	one := func(query string, batch int) []byte {
		body, _ := json.Marshal(map[string]any{"query": query})
		if batch > 0 {
			body = []byte("[" + strings.TrimSuffix(strings.Repeat(string(body)+",", batch), ",") + "]")
		}
		return []byte(postJSON(t, e, string(body), map[string]string{"Accept": "application/json", "X-Api-Key": restclienttest.DemoKey}).raw)
	}
	// Warm: the family is kept in the process's memory by neither, but the
	// document caches and the transport's connections are.
	plainAnswer := one(manyDeferred(false), 0)
	one(manyDeferred(true), 0)

	measure := func(query string, batch int) (answer []byte, bytes uint64, cpu time.Duration) {
		runtime.GC()
		a0, c0 := allocated(), processCPU(t)
		answer = one(query, batch)
		return answer, allocated() - a0, processCPU(t) - c0
	}
	_, plainBytes, plainCPU := measure(manyDeferred(false), 0)
	deferredAnswer, deferredBytes, deferredCPU := measure(manyDeferred(true), 0)
	_, batchBytes, batchCPU := measure(manyDeferred(true), 10)
	t.Logf("without @defer: %d KB allocated, %v CPU; with 49 @defer: %d KB, %v CPU; a batch of ten: %d KB, %v CPU",
		plainBytes>>10, plainCPU, deferredBytes>>10, deferredCPU, batchBytes>>10, batchCPU)

	var plain, deferred struct {
		Data    json.RawMessage
		Errors  []any
		HasNext *bool
	}
	if err := json.Unmarshal(plainAnswer, &plain); err != nil || len(plain.Errors) > 0 {
		t.Fatalf("answer without @defer %.300s: %v", plainAnswer, err)
	}
	if err := json.Unmarshal(deferredAnswer, &deferred); err != nil || len(deferred.Errors) > 0 || deferred.HasNext != nil {
		t.Fatalf("answer with @defer %.300s: %v", deferredAnswer, err)
	}
	if string(deferred.Data) != string(plain.Data) {
		t.Errorf("with @defer the data differ from those of the same query without it")
	}
	// Twice what the query without @defer allocates, and a margin for
	// the larger document: far below the merge's hundreds of MB.
	if limit := 2*plainBytes + 4<<20; deferredBytes > limit {
		t.Errorf("with @defer the request allocated %d KB, without %d KB: want at most %d KB", deferredBytes>>10, plainBytes>>10, limit>>10)
	}
	if limit := 10 * (2*plainBytes + 4<<20); batchBytes > limit {
		t.Errorf("a batch of ten allocated %d KB: want at most %d KB", batchBytes>>10, limit>>10)
	}
}

// streamed posts query as Apollo Client does (multipart/mixed accepted)
// with key, and returns the answer's bytes and its parts, decoded.
func streamed(t *testing.T, e *env, key, query string) (total int, parts []map[string]json.RawMessage) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	r := postJSON(t, e, string(body), map[string]string{"Accept": apolloAccept, "X-Api-Key": key})
	_, params, err := mime.ParseMediaType(r.contentType)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", r.contentType, err)
	}
	if params["boundary"] == "" { // one piece
		var p map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.raw), &p); err != nil {
			t.Fatalf("answer %.300s: %v", r.raw, err)
		}
		return len(r.raw), []map[string]json.RawMessage{p}
	}
	mr := multipart.NewReader(strings.NewReader(r.raw), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d parts: %v", len(parts), err)
		}
		var payload map[string]json.RawMessage
		if err := json.NewDecoder(p).Decode(&payload); err != nil {
			t.Fatalf("part %d: %v", len(parts), err)
		}
		parts = append(parts, payload)
	}
	return len(r.raw), parts
}

// A streamed @defer over a list (issue 25, row 4: fragments × items) is
// bounded before any call: 49 fragments over a page of 100 categories of
// the large family made 3,301 parts, 1.2 MB under a 100 KB cap. The cost
// model counts the parts (a fragment once per item its list may hold)
// and refuses past the limit with QUERY_LIMIT_EXCEEDED, at no call.
func TestDefer_StreamedPartsAreCountedBeforeAnyCall(t *testing.T) {
	e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxResponseBytes = 100_000 }))
	before := e.upstream.Calls()
	total, parts := streamed(t, e, restclienttest.LargeFamilyKey, manyDeferred(true))
	calls := e.upstream.Calls() - before
	t.Logf("49 fragments × 100 categories, streamed under a 100,000-byte cap: %d bytes in %d parts, %d upstream calls", total, len(parts), calls)
	if len(parts) != 1 || total > 2_000 {
		t.Fatalf("%d bytes in %d parts, want one refusal", total, len(parts))
	}
	var errs []struct {
		Extensions map[string]any
	}
	if err := json.Unmarshal(parts[0]["errors"], &errs); err != nil || len(errs) != 1 ||
		errs[0].Extensions["code"] != "QUERY_LIMIT_EXCEEDED" || errs[0].Extensions["limit"] != "deferredParts" {
		t.Fatalf("answer %s, want QUERY_LIMIT_EXCEEDED with limit deferredParts", parts[0]["errors"])
	}
	if calls != 0 {
		t.Errorf("%d upstream calls, want none", calls)
	}

	// Within the limit, one fragment per category of the page: at most
	// the 100 parts and the initial payload, and every byte within the
	// cap but the refusal that ends the answer when it is reached.
	const within = `{ categories(first: 100) { nodes { name ... @defer { parent { name } subcategories(first: 50) { nodes { id name color icon createdAt updatedAt subcategoriesCount parent { id name color icon createdAt } } } } } } }`
	total, parts = streamed(t, e, restclienttest.LargeFamilyKey, within)
	t.Logf("one fragment × 100 categories, streamed under a 100,000-byte cap: %d bytes in %d parts", total, len(parts))
	if total > 100_000+600 || len(parts) > 101 {
		t.Errorf("%d bytes in %d parts, want at most 100,000 bytes and a refusal, in at most 101 parts", total, len(parts))
	}
	if last := parts[len(parts)-1]; string(last["hasNext"]) != "false" {
		t.Errorf("the last part %s says more follows", last)
	}
}
