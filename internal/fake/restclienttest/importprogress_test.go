package restclienttest

import (
	"testing"
	"time"
)

// An import added with AddProgressingImport moves on the fake's clock:
// pending, importing after a step, complete (terminal) after two; a
// repeating one is followed, once complete, by a new pending import.
func TestProgressingImports(t *testing.T) {
	s, c := newClocked(Today)
	id := s.AddRepeatingImports(DemoKey, 10*time.Second)
	status := func() (string, bool) {
		t.Helper()
		got := decode[struct {
			Data importJSON `json:"data"`
		}](t, get(t, s, "/api/v1/imports/"+id, DemoKey))
		return got.Data.Status, got.Data.StatusDetail != nil && got.Data.StatusDetail.Terminal
	}
	for _, want := range []struct {
		after    time.Duration
		status   string
		terminal bool
	}{{0, "pending", false}, {10 * time.Second, "importing", false}, {10 * time.Second, "complete", true}} {
		c.advance(want.after)
		if got, terminal := status(); got != want.status || terminal != want.terminal {
			t.Errorf("after %v more: %s (terminal %v), want %s (%v)", want.after, got, terminal, want.status, want.terminal)
		}
	}
	newest := listImports(t, s, DemoKey, "per_page=1").Data[0]
	if newest.ID == id || newest.Status != "pending" {
		t.Errorf("newest import %s %s, want a new pending one after %s completed", newest.ID, newest.Status, id)
	}
}
