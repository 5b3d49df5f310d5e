package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The placeholders of bench/tailcall/sure.graphql that renderTailcallConfig
// replaces.
const (
	upstreamPlaceholder = "http://upstream.invalid"
	portPlaceholder     = "port: 8000"
)

// How long Tailcall may take to answer its status route after start, and to
// exit after SIGTERM before it is killed.
const (
	tailcallStartTimeout = 30 * time.Second
	tailcallStopTimeout  = 5 * time.Second
)

// renderTailcallConfig points the Tailcall configuration at the upstream and
// at port: every upstream placeholder is replaced, and the port placeholder
// must occur exactly once. It fails on a configuration that lacks either,
// which would otherwise start Tailcall against the wrong server or port.
func renderTailcallConfig(config, upstreamURL string, port int) (string, error) {
	if !strings.Contains(config, upstreamPlaceholder) {
		return "", fmt.Errorf("tailcall config: no %q to replace with the upstream URL", upstreamPlaceholder)
	}
	if n := strings.Count(config, portPlaceholder); n != 1 {
		return "", fmt.Errorf("tailcall config: %q occurs %d times, want 1", portPlaceholder, n)
	}
	out := strings.ReplaceAll(config, upstreamPlaceholder, strings.TrimSuffix(upstreamURL, "/"))
	return strings.Replace(out, portPlaceholder, "port: "+strconv.Itoa(port), 1), nil
}

// tailcallProcess is a running Tailcall server.
type tailcallProcess struct {
	cmd     *exec.Cmd
	cancel  context.CancelFunc // stops cmd
	exited  chan struct{}      // closed when the process has exited
	waitErr error              // set before exited is closed
	output  *tailBuffer        // the end of its standard output and error
	dir     string             // temporary directory of the rendered config
	url     string             // its GraphQL endpoint
}

// startTailcall starts the Tailcall binary bin on a free port of 127.0.0.1,
// serving configPath rendered against upstreamURL, and returns once it
// answers its status route. It fails, with the end of Tailcall's output,
// when the binary does not start or does not answer in time.
func startTailcall(ctx context.Context, bin, configPath, upstreamURL string) (*tailcallProcess, error) {
	config, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("tailcall config: %w", err)
	}
	port, err := freeLoopbackPort(ctx)
	if err != nil {
		return nil, err
	}
	rendered, err := renderTailcallConfig(string(config), upstreamURL, port)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "loadbench-tailcall-")
	if err != nil {
		return nil, err
	}
	// Tailcall reads the format from the extension.
	path := filepath.Join(dir, "sure.graphql")
	if err := os.WriteFile(path, []byte(rendered), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}

	p := &tailcallProcess{
		exited: make(chan struct{}),
		output: &tailBuffer{max: 4 << 10},
		dir:    dir,
		url:    "http://127.0.0.1:" + strconv.Itoa(port) + "/graphql",
	}
	// stop cancels the process's context: SIGTERM first, SIGKILL when it has
	// not exited within tailcallStopTimeout.
	procCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	p.cmd = exec.CommandContext(procCtx, bin, "start", path)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = tailcallStopTimeout
	// No usage tracking (Tailcall reports starts to its vendor otherwise),
	// and no log line per request, as the facade logs nothing here either.
	p.cmd.Env = append(os.Environ(), "TAILCALL_TRACKER=false", "TAILCALL_LOG_LEVEL=error")
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		cancel()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start tailcall: %w", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	if err := p.awaitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+"/status"); err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// awaitReady polls statusURL until it answers 200, the process exits or the
// start timeout passes.
func (p *tailcallProcess) awaitReady(ctx context.Context, statusURL string) error {
	ctx, cancel := context.WithTimeout(ctx, tailcallStartTimeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, statusURL, http.NoBody)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("tailcall exited before answering (%w); its output:\n%s", p.waitErr, p.output)
		case <-ctx.Done():
			return fmt.Errorf("tailcall did not answer %s within %s; its output:\n%s", statusURL, tailcallStartTimeout, p.output)
		case <-tick.C:
		}
	}
}

// stop ends the process (SIGTERM, then SIGKILL after tailcallStopTimeout),
// waits for it and removes the rendered config. It fails only when the
// directory cannot be removed: how Tailcall exits once told to is not the
// benchmark's concern.
func (p *tailcallProcess) stop() error {
	p.cancel()
	<-p.exited
	return os.RemoveAll(p.dir)
}

// tailcallVersion returns what bin --version prints, e.g. "tailcall v1.0.0".
func tailcallVersion(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// freeLoopbackPort returns a port of 127.0.0.1 that was free a moment ago.
// Another process could take it before Tailcall binds it; Tailcall then
// exits and startTailcall reports its output.
func freeLoopbackPort(ctx context.Context) (int, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// tailBuffer keeps the last max bytes written to it, so that a chatty
// process cannot grow the benchmark's memory.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}
