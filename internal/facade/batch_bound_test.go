package facade_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// A batch is bounded as a whole: ten operations, each within the limits
// alone, do not get ten times the work and the bytes. Each 20 aliases of a
// page of 100 categories with every scalar field: alone, an operation
// answers; in a batch, the operations run until the batch's complexity or
// its answers' bytes reach the one operation's limit, and the rest are
// refused with their code, not a truncated body.
func TestBatch_BoundedAsAWhole(t *testing.T) {
	t.Parallel()
	var aliases []string
	for i := range 20 {
		aliases = append(aliases, fmt.Sprintf("a%d: categories(first: 100) { nodes { id name classification color icon subcategoriesCount createdAt updatedAt } }", i))
	}
	query := "{ " + strings.Join(aliases, " ") + " }"
	ops := make([]batchOp, 10)
	for i := range ops {
		ops[i] = batchOp{Query: query}
	}
	key := restclienttest.LargeFamilyKey

	t.Run("the response cap", func(t *testing.T) {
		// A cap one operation's answer fits: the batch's answers fit it
		// together, the others are RESPONSE_TOO_LARGE.
		const maxBytes = 600 << 10
		e := newEnv(t, withConfig(func(c *facade.Config) { c.MaxResponseBytes = maxBytes }))
		alone := postBatch(t, e, key, ops[:1], "")
		if alone.answers[0].code() != "" || len(alone.answers[0].Data) > maxBytes {
			t.Fatalf("one operation alone: %s, %d bytes; want it answered within %d", alone.answers[0].code(), len(alone.answers[0].Data), maxBytes)
		}
		res := postBatch(t, e, key, ops, "")
		answered, total := 0, 0
		for i, a := range res.answers {
			switch a.code() {
			case "":
				answered++
				total += len(a.Data)
			case "RESPONSE_TOO_LARGE", "QUERY_LIMIT_EXCEEDED": // bytes, or work
				if string(a.Data) != "" && string(a.Data) != "null" {
					t.Errorf("answer %d: refused with data %.80s", i, a.Data)
				}
			default:
				t.Errorf("answer %d: %s, want data or a refusal", i, a.code())
			}
		}
		if total > maxBytes || answered == 0 || answered == len(ops) {
			t.Errorf("%d of %d operations answered, %d bytes of data in all; want some, within the cap of %d for the whole batch", answered, len(ops), total, maxBytes)
		}
		t.Logf("%d of %d answered, %d bytes of data (cap %d)", answered, len(ops), total, maxBytes)
	})

	t.Run("the complexity limit", func(t *testing.T) {
		e := newEnv(t)
		res := postBatch(t, e, key, ops, "")
		answered, refused := 0, 0
		for i, a := range res.answers {
			switch a.code() {
			case "":
				answered++
			case "QUERY_LIMIT_EXCEEDED":
				refused++
				ext := a.Errors[0].Extensions
				if ext["limit"] != "complexity" || !strings.Contains(a.Errors[0].Message, "batch") || (string(a.Data) != "" && string(a.Data) != "null") {
					t.Errorf("answer %d: %+v (data %.80s), want the batch's complexity refused before it ran", i, a.Errors[0], a.Data)
				}
			default:
				t.Errorf("answer %d: %s", i, a.code())
			}
		}
		if answered == 0 || refused == 0 || answered+refused != len(ops) {
			t.Errorf("%d answered, %d refused; want the batch's operations run until its complexity reaches one operation's limit", answered, refused)
		}
		// The family page is read once; refused operations cost nothing.
		if res.calls > 1 {
			t.Errorf("%d upstream calls, want 1", res.calls)
		}
		t.Logf("%d of %d answered before the batch's complexity reached the limit", answered, len(ops))
	})
}
