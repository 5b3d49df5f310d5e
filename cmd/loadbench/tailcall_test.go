package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRenderTailcallConfig(t *testing.T) {
	const up = "http://127.0.0.1:4242"
	for name, tc := range map[string]struct {
		config, want string
		ok           bool
	}{
		"both": {
			config: `@server(port: 8000) a: "http://upstream.invalid/api/v1/x" b: "http://upstream.invalid/api/v1/y"`,
			want:   `@server(port: 9999) a: "http://127.0.0.1:4242/api/v1/x" b: "http://127.0.0.1:4242/api/v1/y"`,
			ok:     true,
		},
		"no upstream": {config: `@server(port: 8000) a: "http://example.com/api/v1/x"`},
		"no port":     {config: `@server(port: 80) a: "http://upstream.invalid/x"`},
		"two ports":   {config: `# port: 8000` + "\n" + `@server(port: 8000) a: "http://upstream.invalid/x"`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := renderTailcallConfig(tc.config, up+"/", 9999)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The configuration in the repository renders: a placeholder left behind
// would send Tailcall's calls elsewhere than the fake.
func TestRenderTailcallConfig_Repository(t *testing.T) {
	config, err := os.ReadFile("../../bench/tailcall/sure.graphql")
	if err != nil {
		t.Fatal(err)
	}
	got, err := renderTailcallConfig(string(config), "http://127.0.0.1:4242", 9999)
	if err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{upstreamPlaceholder, portPlaceholder} {
		if strings.Contains(got, leftover) {
			t.Errorf("rendered config still holds %q", leftover)
		}
	}
	if !strings.Contains(got, `hostname: "127.0.0.1"`) {
		t.Error("rendered config does not bind Tailcall to 127.0.0.1")
	}
}

// A binary that cannot start, or exits at once, is reported, not waited for.
func TestStartTailcall_Failures(t *testing.T) {
	const config = "../../bench/tailcall/sure.graphql"
	t.Run("missing binary", func(t *testing.T) {
		_, err := startTailcall(t.Context(), t.TempDir()+"/no-such-tailcall", config, "http://127.0.0.1:1")
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("got %v, want a missing file", err)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		bin, err := exec.LookPath("false")
		if err != nil {
			t.Skip("no false(1) here")
		}
		_, err = startTailcall(t.Context(), bin, config, "http://127.0.0.1:1")
		if err == nil || !strings.Contains(err.Error(), "exited before answering") {
			t.Errorf("got %v, want an early exit", err)
		}
	})
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, s := range []string{"0123", "456789", "ab"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got, want := b.String(), "456789ab"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// cpuTime reads the CPU a process has spent: more after it worked, and an
// error for a server without a process of its own.
func TestCPUTime(t *testing.T) {
	if _, err := (*serverProcess)(nil).cpuTime(); !errors.Is(err, errNoProcess) {
		t.Errorf("nil process: %v, want errNoProcess", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh here")
	}
	// Busy for a moment, then waiting to be killed.
	cmd := exec.CommandContext(t.Context(), sh, "-c", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done; exec sleep 60`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, err := out.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	spent, err := (&serverProcess{cmd: cmd}).cpuTime()
	if err != nil {
		t.Fatal(err)
	}
	if spent < time.Millisecond {
		t.Errorf("cpuTime = %s after a busy loop, want at least 1ms", spent)
	}
}
