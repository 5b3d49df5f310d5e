package facade_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// largeTree is the page of 100 roots of the large family with all their
// subcategories: without faults, one family read of 50 pages of 100.
const largeTree = `{ categories(rootsOnly: true, first: 100) { nodes { name subcategories(first: 100) { nodes { name } } } } }`

// treeAnswer is the data of largeTree.
type treeAnswer struct {
	Categories *struct {
		Nodes []struct {
			Name          string
			Subcategories *struct {
				Nodes []struct{ Name string }
			}
		}
	}
}

// TestFaults_LargeTreeUnderFaults: largeTree against an upstream failing
// one request in five with 503, set up as in production, where item 4 of
// issue 17 found 11 operations of 20 answering QUERY_TOO_EXPENSIVE on
// every subcategories field: the default cap of 100 calls per operation
// (the key's quarter of its hour is 2,500), and the client's retries.
// (The harness has no cap: there, the second read of a failed family
// passed the budget and the memo answered its failed page again, at no
// call, so the test of this tree passed.) The faults are drawn per
// request, so that the run repeats whatever the order the parallel pages
// arrive in; the retries' wait is left out (it changes no count).
//
// A failed family read shows as what it is: every field it left without
// an answer is UPSTREAM_UNAVAILABLE with the status, the others are the
// fault-free data, never QUERY_TOO_EXPENSIVE, and the calls stay within
// 1.3× the fault-free ones.
func TestFaults_LargeTreeUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault run: skipped with -short")
	}
	t.Parallel()
	for _, tc := range []struct {
		name       string
		retries    int
		seed       uint64
		operations int
	}{
		// A family read fails in about one operation of three.
		{"production retries", restclient.DefaultRetryPolicy.MaxRetries, 5, 50},
		// The harness's policy: most family reads fail.
		{"one retry", 1, 6, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			operations := tc.operations
			if raceEnabled {
				operations = 8 // 50 calls an operation, several times slower
			}
			e := newEnv(t, withRetry(restclient.RetryPolicy{MaxRetries: tc.retries}),
				withConfig(func(c *facade.Config) { c.MaxUpstreamCalls = facade.DefaultMaxUpstreamCalls }))
			key := restclienttest.LargeFamilyKey
			e.upstream.SetRateLimit(key, 1_000_000) // the operations, not the hour, are measured
			var want treeAnswer
			nominal := e.ok(key, largeTree, nil, &want).calls
			if nominal != 50 {
				t.Fatalf("the tree without faults cost %d calls, want 50 (the family in 50 pages)", nominal)
			}
			wantSubs := map[string][]string{}
			for _, n := range want.Categories.Nodes {
				for _, s := range n.Subcategories.Nodes {
					wantSubs[n.Name] = append(wantSubs[n.Name], s.Name)
				}
			}

			e.upstream.SetFaults(restclienttest.Faults{Rate: faultRate, Status: http.StatusServiceUnavailable, Seed: tc.seed, ByRequest: true})
			calls, failedOps, failedFields, answeredFields := 0, 0, 0, 0
			for op := range operations {
				r := e.do(key, largeTree, nil)
				calls += r.calls
				failedPaths := map[string]bool{}
				for _, er := range r.errs {
					if er.Extensions["code"] != "UPSTREAM_UNAVAILABLE" || er.Extensions["status"] != float64(http.StatusServiceUnavailable) {
						t.Fatalf("operation %d: error %q (%v) at %v, want UPSTREAM_UNAVAILABLE with status 503", op, er.Message, er.Extensions, er.Path)
					}
					failedPaths[fmt.Sprint(er.Path)] = true
				}
				if len(r.errs) > 0 {
					failedOps++
				}
				var got treeAnswer
				if err := json.Unmarshal(r.data, &got); err != nil {
					t.Fatalf("operation %d: decode %s: %v", op, r.data, err)
				}
				if got.Categories == nil {
					if !failedPaths["[categories]"] {
						t.Fatalf("operation %d: no categories and no error for them: %v", op, r.errs)
					}
					continue
				}
				if len(got.Categories.Nodes) != len(want.Categories.Nodes) {
					t.Fatalf("operation %d: %d roots, want %d", op, len(got.Categories.Nodes), len(want.Categories.Nodes))
				}
				for i, n := range got.Categories.Nodes {
					if n.Name != want.Categories.Nodes[i].Name {
						t.Fatalf("operation %d: root %d is %q, want %q", op, i, n.Name, want.Categories.Nodes[i].Name)
					}
					if n.Subcategories == nil {
						if !failedPaths[fmt.Sprint([]any{"categories", "nodes", float64(i), "subcategories"})] {
							t.Fatalf("operation %d: subcategories of %q are null without an error of their own: %v", op, n.Name, r.errs)
						}
						failedFields++
						continue
					}
					var names []string
					for _, s := range n.Subcategories.Nodes {
						names = append(names, s.Name)
					}
					if !slices.Equal(names, wantSubs[n.Name]) {
						t.Fatalf("operation %d: subcategories of %q = %v, want %v", op, n.Name, names, wantSubs[n.Name])
					}
					answeredFields++
				}
			}
			if failedFields == 0 {
				t.Errorf("no family read failed in %d operations: the seed tests nothing", operations)
			}
			ratio := float64(calls) / float64(operations*nominal)
			if ratio > 1.3 {
				t.Errorf("%d upstream calls for %d fault-free (%.3f×), want at most 1.3×", calls, operations*nominal, ratio)
			}
			t.Logf("%d operations: %d upstream calls for %d fault-free (%.3f×); %d operations with an error, %d subcategories fields UPSTREAM_UNAVAILABLE, %d answered",
				operations, calls, operations*nominal, ratio, failedOps, failedFields, answeredFields)
		})
	}
}
