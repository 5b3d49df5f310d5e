package querylimit

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

func TestCacheEvictsByBytes(t *testing.T) {
	ctx := context.Background()
	// Each entry weighs its length; 100 bytes hold ten of 10.
	c := NewCache(100, func(_ string, v string) int { return len(v) })
	ten := strings.Repeat("x", 10)
	for i := range 10 {
		c.Add(ctx, fmt.Sprint(i), ten)
	}
	if n, b := c.Stats(); n != 10 || b != 100 {
		t.Fatalf("stats = %d entries, %d bytes; want 10, 100", n, b)
	}
	c.Get(ctx, "0") // 0 is now the most recently used; 1 the least
	c.Add(ctx, "new", ten)
	for _, tc := range []struct {
		key  string
		kept bool
	}{{"0", true}, {"1", false}, {"2", true}, {"new", true}} {
		t.Run(tc.key, func(t *testing.T) {
			if _, ok := c.Get(ctx, tc.key); ok != tc.kept {
				t.Errorf("kept = %v, want %v", ok, tc.kept)
			}
		})
	}
	t.Run("an entry over an eighth is not kept", func(t *testing.T) {
		c.Add(ctx, "big", strings.Repeat("x", 13))
		if _, ok := c.Get(ctx, "big"); ok {
			t.Error("kept")
		}
	})
	t.Run("replacing an entry recharges it", func(t *testing.T) {
		c.Add(ctx, "new", "y")
		if v, _ := c.Get(ctx, "new"); v != "y" {
			t.Errorf("value = %q", v)
		}
		if _, b := c.Stats(); b != 91 {
			t.Errorf("bytes = %d, want 91", b)
		}
	})
	t.Run("a negative weight is not kept", func(t *testing.T) {
		neg := NewCache(100, func(string, string) int { return -1 })
		neg.Add(ctx, "k", "v")
		if n, _ := neg.Stats(); n != 0 {
			t.Errorf("%d entries kept", n)
		}
	})
}

func TestPersistedQueryCacheKeepsNoLongQuery(t *testing.T) {
	ctx := context.Background()
	c := NewPersistedQueryCache(1<<20, 100)
	c.Add(ctx, "short", "{ a }")
	c.Add(ctx, "long", "{ a }"+strings.Repeat(" ", 100))
	if _, ok := c.Get(ctx, "short"); !ok {
		t.Error("short query not kept")
	}
	if _, ok := c.Get(ctx, "long"); ok {
		t.Error("query over the byte limit kept")
	}
}

// TestDocumentBytesEstimate compares the charge of a document with the
// heap it really holds once parsed: the charge must not be smaller by
// much (the cache would then hold more than it says), nor larger by much
// (it would hold few documents).
func TestDocumentBytesEstimate(t *testing.T) {
	for _, tc := range []struct{ name, query string }{
		{"demo tree", `{ categories(rootsOnly: true, first: 100) { totalCount nodes { name color subcategoriesCount subcategories(first: 50) { nodes { name parent { name } } } } } }`},
		{"many fields", "{ categories { nodes {" + strings.Repeat(" name", 2000) + " } } }"},
		{"aliases with arguments", "{" + strings.Repeat(" a: categories(first: 1, rootsOnly: true) { totalCount }", 200) + " }"},
		{"a list of numbers", `query Q($x: [Int] = [` + strings.Repeat("1,", 2000) + `]) { __typename }`},
		{"mostly a comment", "{ __typename } #" + strings.Repeat("x", 60_000)},
		{"introspection", introspectionQuery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 50
			docs := make([]*ast.QueryDocument, n)
			queries := make([]string, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range docs {
				// Distinct texts, as a cache holds: each document holds
				// its text (positions point into it).
				queries[i] = fmt.Sprintf("%s #%d", tc.query, i)
				doc, err := parser.ParseQuery(&ast.Source{Input: queries[i]})
				if err != nil {
					t.Fatal(err)
				}
				docs[i] = doc
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := int(after.HeapAlloc-before.HeapAlloc) / n
			charged := DocumentBytes(queries[0], docs[0])
			runtime.KeepAlive(docs)
			t.Logf("held %d bytes, charged %d (%.2f×)", held, charged, float64(charged)/float64(held))
			if float64(charged) < 0.8*float64(held) || charged > 4*held {
				t.Errorf("charged %d bytes for a document holding %d", charged, held)
			}
		})
	}
}
