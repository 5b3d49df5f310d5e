// Command memcheck starts a built suregql server, sends it streams of
// distinct comment-padded queries without an API key over loopback, and
// reports the server's resident memory (Linux /proc/PID/status) before
// and after each stream: what the server keeps per query must be bounded
// by its limits and its byte-bounded caches, not by the traffic.
//
//	go build -o /tmp/sg . && go run ./cmd/memcheck -server /tmp/sg
//
// The first stream is 2,000 queries of about 1 MB (refused by the byte
// limit: nothing is kept); the second is 2,000 valid queries of 60 KB
// (each parsed, validated and cached, until the cache's 16 MiB evicts
// them). memcheck fails if the peak resident memory passes -max-rss.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memcheck:", err)
		os.Exit(1)
	}
}

func run() error {
	server := flag.String("server", "", "path of the built suregql binary (go build -o /tmp/sg .)")
	n := flag.Int("n", 2000, "queries per stream")
	workers := flag.Int("concurrency", 4, "requests in flight")
	// 160: the server runs at GOGC=400 unless told, and its collector
	// lets the heap grow to 5x what is live (123 MiB measured; 66 MiB
	// at GOGC=100).
	maxRSS := flag.Int("max-rss", 160, "peak resident memory allowed, in MiB")
	flag.Parse()
	if *server == "" {
		return errors.New("-server is required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// No shutdown delay: no load balancer to leave, the measure is done.
	cmd := exec.CommandContext(ctx, *server, "-addr", "127.0.0.1:0", "-log-format", "text", "-shutdown-delay", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("pipe the server's output: %w", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", *server, err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	endpoint, err := readEndpoint(stdout)
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // the server logs a line per operation
	pid := cmd.Process.Pid
	fmt.Printf("server pid %d at %s\n", pid, endpoint)

	streams := []struct {
		name  string
		size  int
		check func(body []byte) error
	}{
		{"~1 MB queries, refused by the byte limit", 1_000_000, wantCode("QUERY_LIMIT_EXCEEDED")},
		{"60 KB valid queries, cached", 60_000, wantData},
	}
	if err := report(pid, "before"); err != nil {
		return err
	}
	for _, s := range streams {
		start := time.Now()
		if err := send(ctx, endpoint, *n, *workers, s.size, s.check); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("sent %d %s in %v\n", *n, s.name, time.Since(start).Round(time.Millisecond))
		if err := report(pid, "after"); err != nil {
			return err
		}
	}
	_, hwm, err := memory(pid)
	if err != nil {
		return err
	}
	if hwm > *maxRSS<<20 {
		return fmt.Errorf("peak resident memory %d MiB passes %d MiB", hwm>>20, *maxRSS)
	}
	fmt.Printf("peak resident memory %d MiB, within %d MiB\n", hwm>>20, *maxRSS)
	return nil
}

// readEndpoint reads the server's log (text, the default) until it logs
// its endpoint: msg="graphql endpoint" url=http://….
func readEndpoint(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), `msg="graphql endpoint" url=`); ok {
			ep, _, _ := strings.Cut(rest, " ")
			return ep, nil
		}
	}
	return "", fmt.Errorf("the server exited before printing its endpoint: %w", sc.Err())
}

// send posts n distinct queries of about size bytes, workers at a time.
func send(ctx context.Context, endpoint string, n, workers, size int, check func([]byte) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				if err := post(ctx, endpoint, padded(i, size), check); err != nil {
					errs <- fmt.Errorf("query %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// padded is { __typename } and a comment making it size bytes, distinct
// per i so that each would be a new cache entry.
func padded(i, size int) string {
	q := fmt.Sprintf("{ __typename } #%d ", i)
	return q + strings.Repeat("x", max(size-len(q), 0))
}

func post(ctx context.Context, endpoint, query string, check func([]byte) error) error {
	body := `{"query":"` + query + `"}` // the query has nothing to escape
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	return check(answer)
}

func wantCode(code string) func([]byte) error {
	return func(body []byte) error {
		if !bytes.Contains(body, []byte(`"code":"`+code+`"`)) {
			return fmt.Errorf("want %s, got %.200s", code, body)
		}
		return nil
	}
}

func wantData(body []byte) error {
	if !bytes.Contains(body, []byte(`"data":{"__typename":"Query"}`)) || bytes.Contains(body, []byte(`"errors"`)) {
		return fmt.Errorf("want data, got %.200s", body)
	}
	return nil
}

func report(pid int, when string) error {
	rss, hwm, err := memory(pid)
	if err != nil {
		return err
	}
	fmt.Printf("%-6s VmRSS %4d MiB  VmHWM %4d MiB\n", when, rss>>20, hwm>>20)
	return nil
}

// memory returns the resident and peak resident bytes of pid.
func memory(pid int) (rss, hwm int, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read the server's memory: %w", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(value), " kB"))
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s %q: %w", name, value, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm, nil
}
