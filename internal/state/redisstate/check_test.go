package redisstate_test

import (
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/internal/state/redisstate/redistest"
)

// Check at start: a Redis that answers is up; a wrong password is an
// error that says so in one line, without the password, and sets the
// state down at once; so does a port where nothing listens.
func TestCheck(t *testing.T) {
	t.Parallel()
	const password = "right-p4ss"
	srv := redistest.StartWith(t, "--requirepass", password)
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "redis://" + ln.Addr().String() + "/0"
	_ = ln.Close()

	for _, c := range []struct {
		name, url, reason string
	}{
		{"right password", "redis://:" + password + "@" + srv.Addr() + "/0", ""},
		{"wrong password", "redis://:wrong-p4ss@" + srv.Addr() + "/0", "auth"},
		{"no password", "redis://" + srv.Addr() + "/0", "auth"},
		{"nothing listens", closed, "connection_refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := redisstate.Open(c.url, redisstate.Options{Secret: secret, Timeout: testTimeout, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			err = s.Check()
			st := s.Status()
			if c.reason == "" {
				if err != nil || st.State != redisstate.StateUp {
					t.Fatalf("Check = %v, status %+v; want nil and up", err, st)
				}
				return
			}
			var ce *redisstate.CheckError
			if !errors.As(err, &ce) || ce.Reason != c.reason {
				t.Fatalf("Check = %v, want a CheckError with reason %q", err, c.reason)
			}
			if st.State != redisstate.StateDown || st.Reason != c.reason {
				t.Errorf("status after a failed Check: %+v, want down with reason %q at once", st, c.reason)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || strings.Contains(msg, "wrong-p4ss") || strings.Contains(msg, password) {
				t.Errorf("Check's error %q is not one line without the password", msg)
			}
			if c.reason == "auth" && !strings.Contains(msg, "password") {
				t.Errorf("Check's error %q does not say the password is wrong", msg)
			}
		})
	}
}
