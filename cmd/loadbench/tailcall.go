package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The placeholders of bench/tailcall/sure.graphql that renderTailcallConfig
// replaces.
const (
	upstreamPlaceholder = "http://upstream.invalid"
	portPlaceholder     = "port: 8000"
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

// startTailcall starts the Tailcall binary bin on a free port of 127.0.0.1,
// serving configPath rendered against upstreamURL, and returns once it
// answers its status route. It fails, with the end of Tailcall's output,
// when the binary does not start or does not answer in time.
func startTailcall(ctx context.Context, bin, configPath, upstreamURL string) (*serverProcess, error) {
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
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// No usage tracking (Tailcall reports starts to its vendor otherwise),
	// and no log line per request.
	p, err := startProcess(ctx, "tailcall", bin, []string{"start", path},
		[]string{"TAILCALL_TRACKER=false", "TAILCALL_LOG_LEVEL=error"}, base+"/status")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	p.dir, p.url = dir, base+"/graphql"
	return p, nil
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
