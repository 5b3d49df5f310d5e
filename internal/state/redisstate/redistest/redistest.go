// Package redistest starts Debian's redis-server for tests, on a free
// loopback port with persistence off, and reads everything it holds.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server a test started; it is killed when the test ends.
type Server struct {
	t    testing.TB
	bin  string
	args []string // more arguments of redis-server (StartWith)
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// installHint says how to get the binary.
const installHint = "redis-server is not installed: apt-get install -y redis-server (Debian's package; .ci/run installs it)"

// Start starts a redis-server for t. Without the binary the test fails
// when CI=true (CI must run it) and is skipped otherwise, saying how to
// install it.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t)
}

// StartWith starts a redis-server for t with more arguments, e.g.
// "--requirepass", "p4ss"; the password's server is checked with it.
func StartWith(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(installHint)
		}
		t.Skip(installHint)
	}
	s := &Server{t: t, bin: bin, args: args}
	var last error
	for range 5 { // a free port may be taken between the check and the start
		if s.port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if last = s.start(); last == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("start redis-server: %v", last)
	return nil
}

func freePort() (int, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.t.TempDir(),
		"--daemonize", "no", "--loglevel", "warning"}, s.args...)
	cmd := exec.Command(s.bin, args...) //nolint:noctx // it runs for the whole test; Kill stops it
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second})
	defer func() { _ = c.Close() }()
	// A generous guard: a loaded machine may take seconds to start the
	// process; a healthy one answers in milliseconds.
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("redis-server exited at start (port taken?)")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		// Any answer, NOAUTH included, says the server is up.
		if err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // polling a real process until it answers
	}
	s.Kill()
	return fmt.Errorf("redis-server did not answer PING within %s", startTimeout)
}

// startTimeout bounds the wait for a redis-server to answer its first PING.
const startTimeout = 30 * time.Second

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Kill stops the server at once (SIGKILL), as a crash would; its data is
// gone (no persistence).
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	var err error
	for range 20 { // the port may linger a moment after the kill
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond) // until the kernel frees the port
	}
	s.t.Fatalf("restart redis-server: %v", err)
}

// Dump returns every key the server holds and, for each, its values: a
// string's bytes or a hash's fields and values, as `redis-cli --scan` and
// GET / HGETALL would show them.
func (s *Server) Dump(ctx context.Context) (map[string][][]byte, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer func() { _ = c.Close() }()
	out := map[string][][]byte{}
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		typ, err := c.Type(ctx, key).Result()
		if err != nil {
			return nil, err
		}
		switch typ {
		case "string":
			b, err := c.Get(ctx, key).Bytes()
			if err != nil && !errors.Is(err, redis.Nil) {
				return nil, err
			}
			out[key] = [][]byte{b}
		case "hash":
			m, err := c.HGetAll(ctx, key).Result()
			if err != nil {
				return nil, err
			}
			for f, v := range m {
				out[key] = append(out[key], []byte(f), []byte(v))
			}
		default:
			out[key] = [][]byte{[]byte("(" + typ + ")")}
		}
	}
	return out, iter.Err()
}
