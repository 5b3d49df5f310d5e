// Command callbench runs a fixed workload of GraphQL operations against the
// facade backed by the in-process fake Sure upstream, on the demo and the
// large family, and prints one Markdown row per operation: the upstream
// calls it made, the lower bound for that operation, the sequential round
// trips, and the facade's own time per operation (wall time minus the time
// spent inside the fake upstream's handler). The fake plays today's Sure
// (v0.7.1 and later); -sure legacy plays the late-2025 shape (50 messages a
// page, classifications, no imports list nor category creation).
//
//	go run ./cmd/callbench > /tmp/table.md
//	go run ./cmd/callbench -sure legacy > /tmp/legacy.md
//
// BENCHMARKS.md holds its output.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/restclient"
)

// op is one operation of the workload.
type op struct {
	name  string
	key   string
	query string
	vars  func(*restclienttest.Server) map[string]any
	// lower is the fewest upstream calls any client could answer the
	// operation with, knowing only what the upstream tells; why says so.
	lower int
	why   string
}

func main() {
	minTime := flag.Duration("benchtime", 300*time.Millisecond, "time each operation is repeated for, to measure ns/op")
	sure := flag.String("sure", "today", "the Sure the fake upstream plays: today (v0.7.1 and later) or legacy (late 2025)")
	flag.Parse()
	version := restclienttest.Today
	switch *sure {
	case "today":
	case "legacy":
		version = restclienttest.Legacy
	default:
		fmt.Fprintln(os.Stderr, "callbench: -sure is today or legacy")
		os.Exit(2)
	}
	if err := run(os.Stdout, *minTime, version); err != nil {
		fmt.Fprintln(os.Stderr, "callbench:", err)
		os.Exit(1)
	}
}

func idOf(name string) func(*restclienttest.Server) map[string]any {
	return func(s *restclienttest.Server) map[string]any {
		c, _ := s.CategoryByName(restclienttest.DemoKey, name)
		return map[string]any{"id": c.ID}
	}
}

func workload(v restclienttest.Version) []op {
	const tree = `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name parent { name color } } } } } }`
	longChat := func(s *restclienttest.Server) map[string]any {
		for _, c := range s.Chats(restclienttest.DemoKey) {
			if c.MessageCount > 100 {
				return map[string]any{"id": c.ID}
			}
		}
		return nil
	}
	ops := []op{
		{name: "demo: categories(first: 10)", key: restclienttest.DemoKey,
			query: `{ categories(first: 10) { nodes { id name } } }`, lower: 1, why: "one page"},
		{name: "demo: tree of 22 roots with subcategories", key: restclienttest.DemoKey, query: tree,
			lower: 1, why: "45 categories fit one page of 100"},
		{name: "demo: the same tree twice (aliases)", key: restclienttest.DemoKey,
			query: `{ a: categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } b: categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 50) { nodes { name } } } } }`,
			lower: 1, why: "as above"},
		{name: "demo: category(id) { parent { id name } }", key: restclienttest.DemoKey, vars: idOf("Restaurants"),
			query: `query($id: ID!) { category(id: $id) { name parent { id name } } }`, lower: 1, why: "the parent is embedded"},
		{name: "demo: two categories' parent colors", key: restclienttest.DemoKey,
			vars: func(s *restclienttest.Server) map[string]any {
				a, _ := s.CategoryByName(restclienttest.DemoKey, "Restaurants")
				b, _ := s.CategoryByName(restclienttest.DemoKey, "Coffee Shops")
				return map[string]any{"a": a.ID, "b": b.ID}
			},
			query: `query($a: ID!, $b: ID!) { a: category(id: $a) { parent { color } } b: category(id: $b) { parent { color } } }`,
			lower: 1, why: "the family's first page holds all three"},
		{name: "demo: chats(first: 5)", key: restclienttest.DemoKey,
			query: `{ chats(first: 5) { totalCount nodes { title messageCount firstMessageAt } } }`, lower: 1, why: "one page"},
		{name: "demo: chats(first: 5) with lastMessageAt", key: restclienttest.DemoKey,
			query: `{ chats(first: 5) { totalCount nodes { title messageCount lastMessageAt } } }`, lower: 5,
			why: "one page, and the last page of each of its 4 chats of 2+ messages"},
		firstMessages(v, longChat),
		{name: "demo: chat(id) last 3 messages", key: restclienttest.DemoKey, vars: longChat,
			query: `query($id: ID!) { chat(id: $id) { title messages(last: 3) { nodes { content } } } }`,
			lower: 1, why: "the overflow page answers the chat and its last page"},
		{name: "demo: import(id)", key: restclienttest.DemoKey,
			vars: func(s *restclienttest.Server) map[string]any {
				return map[string]any{"id": s.ImportIDs(restclienttest.DemoKey)[0]}
			},
			query: `query($id: ID!) { import(id: $id) { status stats { rowsCount } } }`, lower: 1, why: "one show"},
		{name: "demo: category(id: \"42\") (not a UUID)", key: restclienttest.DemoKey,
			query: `{ category(id: "42") { name } }`, lower: 0, why: "rejected locally"},
		{name: "large: 100 roots with all subcategories", key: restclienttest.LargeFamilyKey, query: tree,
			lower: 50, why: "5,000 categories, 100 a page"},
		{name: "large: categories(first: 30) at offset 45", key: restclienttest.LargeFamilyKey,
			vars: func(*restclienttest.Server) map[string]any {
				return map[string]any{"after": cursorAt(44)}
			},
			query: `query($after: String) { categories(first: 30, after: $after) { nodes { name } } }`, lower: 1, why: "page 2 of 38 holds offsets 38..75"},
		{name: "large: 10 roots with subcategories", key: restclienttest.LargeFamilyKey,
			query: `{ categories(rootsOnly: true, first: 10) { nodes { name subcategories { nodes { name } } } } }`,
			lower: 1, why: "the family's first page holds the first 10 roots and their subcategories, but not the roots' total"},
		{name: "large: chats(first: 100)", key: restclienttest.LargeFamilyKey,
			query: `{ chats(first: 100) { nodes { title } } }`, lower: 5, why: "fixed pages of 20"},
		{name: "large: chats(last: 25)", key: restclienttest.LargeFamilyKey,
			query: `{ chats(last: 25) { nodes { title } } }`, lower: 2, why: "the last page holds 10 of 20"},
	}
	return append(ops, writes(v)...)
}

// firstMessages is the row of a chat's first 30 messages, whose pages
// depend on the version: 20 messages a page since v0.6.6, 50 before.
func firstMessages(v restclienttest.Version, longChat func(*restclienttest.Server) map[string]any) op {
	o := op{name: "demo: chat(id) with first 30 messages and lastMessageAt", key: restclienttest.DemoKey, vars: longChat,
		query: `query($id: ID!) { chat(id: $id) { title lastMessageAt messages(first: 30) { nodes { content } } } }`,
		lower: 3, why: "pages 1 and 2 of 20 messages, and the last page for the newest"}
	if v == restclienttest.Legacy {
		o.lower, o.why = 2, "page 1 of 50 messages, and the last page for the newest"
	}
	return o
}

// writes are the rows of the imports list and of the writes; against the
// older Sure, the endpoints it lacks cost the one call that shows it (and
// none afterwards: the repeated runs measure that).
func writes(v restclienttest.Version) []op {
	anyChat := func(s *restclienttest.Server) map[string]any {
		return map[string]any{"id": s.Chats(restclienttest.DemoKey)[0].ID}
	}
	// unsupported is o against the older Sure: the first row of an
	// endpoint costs the call that shows the server lacks it, the next
	// rows none.
	unsupported := func(o op, first bool) op {
		switch {
		case v != restclienttest.Legacy:
		case first:
			o.lower, o.why = 1, "the call that shows the server lacks the endpoint"
		default:
			o.lower, o.why = 0, "the server is known to lack the endpoint"
		}
		return o
	}
	return []op{
		unsupported(op{name: "large: imports(first: 25)", key: restclienttest.LargeFamilyKey,
			query: `{ imports(first: 25) { totalCount nodes { type status statusDetail { terminal } stats { rowsCount } } } }`,
			lower: 1, why: "one page"}, true),
		unsupported(op{name: "large: imports(last: 30, status: \"complete\")", key: restclienttest.LargeFamilyKey,
			query: `{ imports(last: 30, status: "complete") { totalCount nodes { type createdAt } } }`,
			lower: 1, why: "the overflow page of 100 holds the tail"}, false),
		unsupported(op{name: "large: imports(first: 5) with configuration", key: restclienttest.LargeFamilyKey,
			query: `{ imports(first: 5) { nodes { type configuration { dateFormat } stats { validRowsCount } } } }`,
			lower: 6, why: "the list sends no configuration: one show each"}, false),
		{name: "demo: createChat with its first message", key: restclienttest.DemoKey,
			query: `mutation { createChat(input: {title: "Bench", message: "Hello"}) { chat { id messageCount messages { nodes { content } } } } }`,
			lower: map[restclienttest.Version]int{restclienttest.Today: 2, restclienttest.Legacy: 1}[v],
			why:   map[restclienttest.Version]string{restclienttest.Today: "the write, and a read: the answer shows no message", restclienttest.Legacy: "the write's answer holds the message"}[v]},
		{name: "demo: sendChatMessage", key: restclienttest.DemoKey, vars: anyChat,
			query: `mutation($id: ID!) { sendChatMessage(input: {chatId: $id, content: "And now?"}) { message { id aiResponseStatus } userErrors { code } } }`,
			lower: 1, why: "the write"},
		{name: "demo: deleteChat (of an unknown chat)", key: restclienttest.DemoKey,
			query: `mutation { deleteChat(input: {id: "6f1c7d0e-4c57-4bde-9a3c-3f6c1b8a0d11"}) { deletedChatId userErrors { code } } }`,
			lower: 1, why: "the write"},
		unsupported(op{name: "demo: createCategory (a taken name)", key: restclienttest.DemoKey,
			query: `mutation { createCategory(input: {name: "Groceries"}) { category { id } userErrors { code } } }`,
			lower: 1, why: "the write"}, true),
	}
}

// cursorAt builds the cursor of an offset of the whole category list, as
// the facade would have returned it.
func cursorAt(offset int) string {
	return paging.EncodeCursor("categories?classification=&roots_only=false&parent_id=", offset)
}

// timing records, on the facade's side, when each upstream request was
// out, to count sequential round trips and the time spent waiting upstream.
type timing struct {
	next  http.RoundTripper
	mu    sync.Mutex
	spans [][2]time.Time
}

func (t *timing) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		// The answer is read by the client after RoundTrip returns; read it
		// here so the span covers the whole exchange.
		body, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		err = readErr
	}
	t.mu.Lock()
	t.spans = append(t.spans, [2]time.Time{start, time.Now()})
	t.mu.Unlock()
	return resp, err
}

func (t *timing) reset() {
	t.mu.Lock()
	t.spans = nil
	t.mu.Unlock()
}

// rounds returns the longest chain of requests each started after the
// previous one ended: the round trips the operation waited for in sequence.
func (t *timing) rounds() int {
	t.mu.Lock()
	spans := append([][2]time.Time(nil), t.spans...)
	t.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	depth := make([]int, len(spans))
	best := 0
	for i := range spans {
		depth[i] = 1
		for j := range i {
			if !spans[j][1].After(spans[i][0]) {
				depth[i] = max(depth[i], depth[j]+1)
			}
		}
		best = max(best, depth[i])
	}
	return best
}

// upstreamTime returns how long at least one upstream request was out:
// the union of the spans, since parallel requests overlap.
func (t *timing) upstreamTime() time.Duration {
	t.mu.Lock()
	spans := append([][2]time.Time(nil), t.spans...)
	t.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
	var total time.Duration
	var cur [2]time.Time
	for i, s := range spans {
		switch {
		case i == 0:
			cur = s
		case !s[0].After(cur[1]):
			if s[1].After(cur[1]) {
				cur[1] = s[1]
			}
		default:
			total += cur[1].Sub(cur[0])
			cur = s
		}
	}
	if len(spans) > 0 {
		total += cur[1].Sub(cur[0])
	}
	return total
}

func run(w io.Writer, minTime time.Duration, v restclienttest.Version) error {
	fake := restclienttest.New(restclienttest.WithVersion(v))
	for _, k := range []string{restclienttest.DemoKey, restclienttest.LargeFamilyKey} {
		fake.SetRateLimit(k, 1<<30) // the benchmark repeats operations far past an hour's budget
	}
	upURL, stopUp, err := restclienttest.ServeLoopback(context.Background(), fake)
	if err != nil {
		return err
	}
	defer stopUp()
	tm := &timing{next: http.DefaultTransport}
	client, err := restclient.New(upURL, restclient.WithHTTPClient(&http.Client{Transport: tm, Timeout: time.Minute}))
	if err != nil {
		return err
	}
	// The cache off: each row is what one operation's plan costs cold,
	// not what an earlier row left in the cache (nor the timing of a hit).
	gqlURL, stop, err := restclienttest.ServeLoopback(context.Background(), facade.New(facade.Config{Upstream: client, Log: slog.New(slog.DiscardHandler), CacheTTL: facade.CacheOff}))
	if err != nil {
		return err
	}
	defer stop()
	gqlURL += "/graphql"
	hc := &http.Client{Timeout: time.Minute}

	fmt.Fprintln(w, "| operation | upstream calls | lower bound | sequential round trips | facade ns/op |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, o := range workload(v) {
		var vars map[string]any
		if o.vars != nil {
			vars = o.vars(fake)
		}
		fake.Reset()
		tm.reset()
		reported, err := post(hc, gqlURL, o.key, o.query, vars)
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		calls := fake.Calls()
		if reported != calls {
			return fmt.Errorf("%s: extensions.upstream.calls %d, upstream counted %d", o.name, reported, calls)
		}
		rounds := tm.rounds()

		tm.reset()
		n := 0
		start := time.Now()
		for time.Since(start) < minTime || n < 3 {
			if _, err := post(hc, gqlURL, o.key, o.query, vars); err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			n++
		}
		facadeNs := (time.Since(start) - tm.upstreamTime()).Nanoseconds() / int64(n)
		fmt.Fprintf(w, "| %s | %d | %d (%s) | %d | %d |\n", o.name, calls, o.lower, o.why, rounds, facadeNs)
	}
	return nil
}

// post runs one operation and returns extensions.upstream.calls. Field
// errors are expected for some operations (the invalid id); transport
// failures are not.
func post(hc *http.Client, url, key, query string, vars map[string]any) (int, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Data       json.RawMessage
		Errors     []struct{ Message string }
		Extensions struct {
			Upstream struct{ Calls int }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	if string(out.Data) == "null" || len(out.Data) == 0 {
		if len(out.Errors) > 0 {
			return 0, errors.New(out.Errors[0].Message)
		}
	}
	return out.Extensions.Upstream.Calls, nil
}
