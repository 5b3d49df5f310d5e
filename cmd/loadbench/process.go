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

// How long a server under test may take to answer its readiness route
// after start, and to exit after SIGTERM before it is killed.
const (
	processStartTimeout = 30 * time.Second
	processStopTimeout  = 5 * time.Second
)

// serverProcess is a GraphQL server under test running as a process of its
// own: Tailcall, or the facade's production binary.
type serverProcess struct {
	name    string
	cmd     *exec.Cmd
	cancel  context.CancelFunc // stops cmd
	exited  chan struct{}      // closed when the process has exited
	waitErr error              // set before exited is closed
	output  *tailBuffer        // the end of its standard output and error
	dir     string             // a temporary directory removed by stop ("": none)
	url     string             // its GraphQL endpoint
}

// startProcess starts bin with args and, added to this environment, env,
// and returns once readyURL answers 200. It fails, with the end of the
// process's output, when the binary does not start or does not answer in
// time.
func startProcess(ctx context.Context, name, bin string, args, env []string, readyURL string) (*serverProcess, error) {
	p := &serverProcess{
		name:   name,
		exited: make(chan struct{}),
		output: &tailBuffer{max: 4 << 10},
	}
	// stop cancels the process's context: SIGTERM first, SIGKILL when it has
	// not exited within processStopTimeout.
	procCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	p.cmd = exec.CommandContext(procCtx, bin, args...)
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = processStopTimeout
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	if err := p.awaitReady(ctx, readyURL); err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// errNoProcess is cpuTime's answer for a server without a process of its
// own.
var errNoProcess = errors.New("not a process of its own")

// cpuTime returns the CPU time the process's threads have spent so far,
// from Linux's per-thread scheduler statistics (nanoseconds on a CPU, the
// first field of /proc/PID/task/TID/schedstat).
func (p *serverProcess) cpuTime() (time.Duration, error) {
	if p == nil {
		return 0, errNoProcess
	}
	dir := fmt.Sprintf("/proc/%d/task", p.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread has exited since the listing
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			return 0, fmt.Errorf("%s/%s/schedstat: empty", dir, t.Name())
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// awaitReady polls readyURL until it answers 200, the process exits or the
// start timeout passes.
func (p *serverProcess) awaitReady(ctx context.Context, readyURL string) error {
	ctx, cancel := context.WithTimeout(ctx, processStartTimeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, http.NoBody)
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
			return fmt.Errorf("%s exited before answering (%w); its output:\n%s", p.name, p.waitErr, p.output)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s within %s; its output:\n%s", p.name, readyURL, processStartTimeout, p.output)
		case <-tick.C:
		}
	}
}

// stop ends the process (SIGTERM, then SIGKILL after processStopTimeout),
// waits for it and removes its directory. It fails only when the directory
// cannot be removed: how a server exits once told to is not the
// benchmark's concern.
func (p *serverProcess) stop() error {
	p.cancel()
	<-p.exited
	if p.dir == "" {
		return nil
	}
	return os.RemoveAll(p.dir)
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
