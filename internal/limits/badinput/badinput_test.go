package badinput_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/limits/badinput"
)

func TestError_NamesTheArgumentAndUnwrapsItsCase(t *testing.T) {
	errStale := errors.New("invalid cursor")
	err := error(badinput.Wrap("after", errStale))
	if got, want := err.Error(), "after: invalid cursor"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var bad *badinput.Error
	if !errors.As(err, &bad) || bad.Arg != "after" {
		t.Fatalf("errors.As = %v (%+v), want the *Error for after", errors.As(err, &bad), bad)
	}
	if !errors.Is(err, errStale) {
		t.Error("errors.Is(err, its case) = false, want true")
	}
}

func TestQuote_CutsLongValues(t *testing.T) {
	if got := badinput.Quote("42"); got != `"42"` {
		t.Errorf("Quote(42) = %s", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := badinput.Quote(long)
	if !strings.HasSuffix(got, "… (200 bytes)") || len(got) > 130 {
		t.Errorf("Quote(200 bytes) = %s, want at most 100 bytes of it and its length", got)
	}
}
