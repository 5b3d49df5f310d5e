package restclienttest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ServeLoopback serves h on a free port of 127.0.0.1 until stop is called:
// the demo upstream of `go run .` and the benchmark commands use it, so
// that they go through real HTTP, as production does.
func ServeLoopback(ctx context.Context, h http.Handler) (baseURL string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}
