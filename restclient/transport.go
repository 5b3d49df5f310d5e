package restclient

import (
	"net/http"
	"time"
)

// MaxIdleConns is how many idle connections to the upstream NewTransport
// keeps: as many as upstream calls the facade has in flight under load, so
// that each call finds an open connection. net/http's default keeps 2 per
// host, which made two thirds of the calls at 64 concurrent requests open a
// new connection (a TLS handshake each, against a real Sure over HTTPS).
const MaxIdleConns = 256

// NewTransport returns a transport for a client that talks to one upstream
// host at high concurrency: http.DefaultTransport's settings (proxy from the
// environment, dial and keep-alive timeouts) with a pool of MaxIdleConns
// idle connections to that host, HTTP/2 attempted over TLS (one connection
// then carries many calls), and bounds on the TLS handshake and on the wait
// for the answer's headers (responseHeaderTimeout; 0: none besides the
// http.Client's Timeout).
func NewTransport(responseHeaderTimeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = MaxIdleConns
	t.MaxIdleConnsPerHost = MaxIdleConns
	t.IdleConnTimeout = 90 * time.Second
	t.ForceAttemptHTTP2 = true
	t.TLSHandshakeTimeout = 5 * time.Second
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return t
}
