package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// The floor (-floor) is what Go's net/http costs alone: a server that
// reads each request and answers it with fixed bytes (the facade's own
// answer to the workload, taken before the run), with no GraphQL and no
// upstream call. Its CPU per answer, measured in the same run as the
// facade's and Tailcall's, is the part of the facade's that no work on
// GraphQL or on the upstream calls can remove.

// floorEnv, set in a loadbench process's environment, makes it serve the
// floor on the address it holds instead of running the benchmark.
const floorEnv = "LOADBENCH_FLOOR_ADDR"

// Routes of the floor server.
const (
	floorAnswerPath = "/answer" // PUT: the bytes every POST is answered with
	floorReadyPath  = "/readyz"
)

// serveFloor serves the floor on addr until the process is stopped.
func serveFloor(addr string) error {
	var answer atomic.Pointer[[]byte]
	empty := []byte(`{"data":null}`)
	answer.Store(&empty)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT "+floorAnswerPath, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer.Store(&b)
	})
	mux.HandleFunc("GET "+floorReadyPath, func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		// Read as a GraphQL server must before it can answer.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*answer.Load())
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// startFloor runs this program again as the floor server, on a free port
// of 127.0.0.1.
func startFloor(ctx context.Context) (*serverProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the floor: %w", err)
	}
	port, err := freeLoopbackPort(ctx)
	if err != nil {
		return nil, err
	}
	base := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p, err := startProcess(ctx, "the net/http floor", self, nil,
		[]string{floorEnv + "=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, base+floorReadyPath)
	if err != nil {
		return nil, err
	}
	p.url = base + "/graphql"
	return p, nil
}

// floorAnswers returns the prepare step of the floor's target: before
// each run, it asks the facade (at oursURL) the workload's operation once
// and makes its answer the floor's.
func floorAnswers(hc *http.Client, oursURL, floorURL string, key string) func(operation) error {
	return func(op operation) error {
		body, err := json.Marshal(map[string]any{"query": op.query, "variables": op.vars})
		if err != nil {
			return err
		}
		answer, err := send(hc, http.MethodPost, oursURL, key, body)
		if err != nil {
			return fmt.Errorf("the facade's answer for the floor: %w", err)
		}
		u := floorURL[:len(floorURL)-len("/graphql")] + floorAnswerPath
		if _, err := send(hc, http.MethodPut, u, "", answer); err != nil {
			return fmt.Errorf("set the floor's answer: %w", err)
		}
		return nil
	}
}

// send sends body and returns the answer's body, or an error for a
// status other than 200.
func send(hc *http.Client, method, url, key string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	return b, err
}
