package planner

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// TestObserve_DebugOffCostsNothing: every upstream call is observed, and
// its DEBUG line must cost no allocation when DEBUG is off (the
// production default is INFO).
func TestObserve_DebugOffCostsNothing(t *testing.T) {
	client, err := restclient.New("http://sure.test")
	if err != nil {
		t.Fatal(err)
	}
	info := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := New(&Shared{Upstream: client, Log: info}, callerkey.NewRing(nil, false).Caller("key-1"))
	call := restclient.Call{
		Method: http.MethodGet, Path: "categories?page=1", Endpoint: "GET /api/v1/categories",
		Status: http.StatusOK, Duration: 1234567 * time.Nanosecond,
	}
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() { l.observe(ctx, call) }); allocs != 0 {
		t.Errorf("observing a successful call with DEBUG off allocates %.0f times, want 0", allocs)
	}
}
