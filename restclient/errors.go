package restclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// APIError is a JSON error answer of the upstream (4xx, or a 5xx that the
// app itself produced).
type APIError struct {
	Op         string   // "GET /categories/…", for logs; never shown to callers
	StatusCode int      // HTTP status
	Code       string   // the body's "error" value, e.g. "insufficient_scope"
	Message    string   // the body's "message", when present
	Details    []string // the body's "details" (422 validation messages)
	// NoRoute marks a 404 without rate-limit headers: the server's router
	// refused the path before any controller ran (see IsNoRoute).
	NoRoute bool
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code
	}
	return fmt.Sprintf("restclient: %s: %d %s", e.Op, e.StatusCode, msg)
}

// RateLimitError is a 429 answer: the key has spent its hourly budget.
type RateLimitError struct {
	APIError
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("restclient: %s: rate limited, retry after %s", e.Op, e.RetryAfter)
}

// UnavailableError means the upstream gave no usable answer: it was
// unreachable, timed out, answered 5xx (or an HTML page from a proxy), or
// sent a body that is not the JSON it documents.
type UnavailableError struct {
	Op     string
	Status int // 0 when no answer arrived
	Err    error
	// NotSure marks an answer that is not the Sure API's (a 2xx that is
	// not JSON, lacks a key its endpoint always sends or holds a value
	// Sure never sends (see validator), an HTML 4xx, a redirect): the
	// upstream URL most likely names something else.
	NotSure bool
	// NoRoute: a 404 without rate-limit headers (see IsNoRoute).
	NoRoute bool
}

// Reasons an upstream gave no usable answer (UnavailableError.Reason):
// what an operator checks first, and a stable value for callers and logs.
const (
	ReasonTimeout           = "timeout"            // no answer within the time allowed
	ReasonConnectionRefused = "connection_refused" // nothing listens at the upstream address
	ReasonDNS               = "dns"                // the upstream host name does not resolve
	ReasonTLS               = "tls"                // the TLS handshake failed (certificate, protocol)
	ReasonConnectionLost    = "connection_lost"    // the connection broke before the answer was read
	ReasonUnreachable       = "unreachable"        // any other transport failure
	ReasonBadGateway        = "bad_gateway"        // a proxy answered 502, 503 or 504
	ReasonServerError       = "server_error"       // the app itself answered 5xx
	ReasonNotSure           = "not_sure"           // the answer is not the Sure API's
	// ReasonCircuitOpen (breaker.go): not sent, the upstream failed the
	// last calls.
)

// Reason classifies why the upstream gave no usable answer; one of the
// Reason constants.
func (e *UnavailableError) Reason() string {
	var (
		dns   *net.DNSError
		netTO interface{ Timeout() bool }
		cert  *tls.CertificateVerificationError
		rec   tls.RecordHeaderError
		unk   x509.UnknownAuthorityError
		host  x509.HostnameError
		inv   x509.CertificateInvalidError
	)
	switch {
	case errors.Is(e.Err, ErrCircuitOpen):
		return ReasonCircuitOpen
	case e.NotSure:
		return ReasonNotSure
	case e.Status == http.StatusBadGateway || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusGatewayTimeout:
		return ReasonBadGateway
	case e.Status >= 500:
		return ReasonServerError
	case e.Status != 0:
		return ReasonNotSure
	case errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &netTO) && netTO.Timeout()):
		return ReasonTimeout
	case errors.As(e.Err, &dns):
		return ReasonDNS
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return ReasonConnectionRefused
	case errors.As(e.Err, &cert), errors.As(e.Err, &rec), errors.As(e.Err, &unk), errors.As(e.Err, &host), errors.As(e.Err, &inv):
		return ReasonTLS
	case errors.Is(e.Err, syscall.ECONNRESET), errors.Is(e.Err, io.EOF), errors.Is(e.Err, io.ErrUnexpectedEOF), errors.Is(e.Err, syscall.EPIPE):
		return ReasonConnectionLost
	}
	return ReasonUnreachable
}

func (e *UnavailableError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("restclient: %s: upstream unavailable (status %d): %v", e.Op, e.Status, e.Err)
	}
	return fmt.Sprintf("restclient: %s: upstream unavailable: %v", e.Op, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// OutcomeUnknown reports whether a write that failed with err may still
// have been applied by the upstream: the request may have reached it (no
// answer arrived in time, the connection broke, or a proxy or the app
// answered 5xx or an unreadable body) rather than being refused before
// any connection was made (DNS, connection refused).
func OutcomeUnknown(err error) bool {
	var ue *UnavailableError
	if !errors.As(err, &ue) || errors.Is(err, ErrCircuitOpen) {
		return false // nothing was sent
	}
	var (
		op  *net.OpError
		dns *net.DNSError
	)
	if errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial") {
		return false
	}
	return true
}

// IsNotFound reports whether err is an upstream 404.
func IsNotFound(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.StatusCode == http.StatusNotFound
	}
	return false
}

// IsNoRoute reports whether err is a 404 that no controller of the API
// answered: without the rate-limit headers every authenticated answer of
// Sure carries, whatever its body. Asked of an endpoint that a Sure
// version added (POST /categories in v0.7.1, GET /imports in v0.6.7), it
// means the server is older than that.
func IsNoRoute(err error) bool {
	var (
		ae *APIError
		ue *UnavailableError
	)
	if errors.As(err, &ae) {
		return ae.NoRoute
	}
	return errors.As(err, &ue) && ue.NoRoute
}

// IsUnauthorized reports whether err is an upstream 401: the key is
// missing, unknown or revoked.
func IsUnauthorized(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode == http.StatusUnauthorized
}

// As lets errors.As find the embedded APIError of a RateLimitError.
func (e *RateLimitError) Unwrap() error { return &e.APIError }

// errorBody is the upstream's error shape; every field is optional.
type errorBody struct {
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details"`
	// Errors is the list of messages some controllers send instead of
	// details ({"error":"validation_failed","errors":[…]}).
	Errors json.RawMessage `json:"errors"`
}

// checkResponse returns nil for 2xx answers and a typed error otherwise.
func checkResponse(op string, resp *http.Response, body []byte, now time.Time) error {
	if resp.StatusCode == http.StatusNoContent {
		return nil // a DELETE's answer
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if !isJSON(resp.Header.Get("Content-Type"), body) {
			return &UnavailableError{Op: op, Status: resp.StatusCode, Err: errors.New("answer is not JSON"), NotSure: true}
		}
		return nil
	}
	noRoute := resp.StatusCode == http.StatusNotFound && resp.Header.Get("X-RateLimit-Limit") == ""
	var eb errorBody
	jsonErr := json.Unmarshal(body, &eb)
	if resp.StatusCode >= 500 || (jsonErr != nil && resp.StatusCode != http.StatusTooManyRequests) {
		// 5xx, or a non-JSON 4xx (an HTML page from a proxy in front of the
		// app): nothing the caller can act on.
		cause := fmt.Errorf("status %d", resp.StatusCode)
		if jsonErr == nil && eb.Error != "" {
			cause = fmt.Errorf("%s", eb.Error)
		}
		// A non-JSON 4xx or a redirect is no answer of the Sure API; a 5xx
		// is the app's or a proxy's failure.
		return &UnavailableError{Op: op, Status: resp.StatusCode, Err: cause, NotSure: resp.StatusCode < 500, NoRoute: noRoute}
	}
	ae := APIError{Op: op, StatusCode: resp.StatusCode, Code: eb.Error, Message: eb.Message, Details: parseDetails(eb.Details), NoRoute: noRoute}
	if len(ae.Details) == 0 {
		ae.Details = parseDetails(eb.Errors)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return &RateLimitError{APIError: ae, RetryAfter: retryAfter(resp.Header, now)}
	}
	return &ae
}

// parseDetails accepts the 422 list of messages; any other shape (the 429
// object) is not a list of messages and is dropped.
func parseDetails(raw json.RawMessage) []string {
	var list []string
	if len(raw) > 0 && json.Unmarshal(raw, &list) == nil {
		return list
	}
	return nil
}

func isJSON(contentType string, body []byte) bool {
	if strings.Contains(contentType, "json") {
		return true
	}
	return json.Valid(body)
}

// retryAfter reads Retry-After (seconds or an HTTP date); a missing or
// unreadable value falls back to X-RateLimit-Reset, then to one minute.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			// Capped: a huge value would overflow time.Duration.
			return time.Duration(min(s, maxRetryAfter)) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	if rl := parseRateLimit(h, now); rl != nil && rl.Reset > 0 {
		return rl.Reset
	}
	return time.Minute
}

// maxRetryAfter caps Retry-After (seconds): a day is far past any hourly
// window.
const maxRetryAfter = 24 * 60 * 60

// RateLimit is the upstream's view of a key's hourly budget, read from the
// X-RateLimit-* headers of an answer. A self-hosted Sure has no limit and
// says so with "Infinity": Unlimited is then set, and Limit and Remaining
// are -1 (not numbers the server sent). Remaining is -1 too when the
// header is missing or unreadable, and ResetAt zero when no reset was
// given.
type RateLimit struct {
	Unlimited bool
	Limit     int
	Remaining int
	// Reset is how long until the window resets: Sure sends seconds until
	// the reset, not an epoch time as GitHub does.
	Reset   time.Duration
	ResetAt time.Time
}

// Sent returns what the headers said of the window, nil where they said
// nothing: the numbers of an unlimited server, a missing or unreadable
// header, a reset a 429 did not give. What callers show of a reading.
func (rl RateLimit) Sent() (limit, remaining *int, resetAt *time.Time) {
	if rl.Unlimited {
		return nil, nil, nil
	}
	if rl.Limit >= 0 {
		limit = &rl.Limit
	}
	if rl.Remaining >= 0 {
		remaining = &rl.Remaining
	}
	if !rl.ResetAt.IsZero() {
		resetAt = &rl.ResetAt
	}
	return limit, remaining, resetAt
}

// windowSlack absorbs the rounding of ResetAt (whole seconds, computed from
// each answer's arrival time): readings whose resets differ by less belong
// to the same window.
const windowSlack = 2 * time.Second

// Newer reports whether reading b is newer than reading a: it belongs to a
// later window, or to the same window with no more requests remaining
// (the upstream only ever counts down within a window, while answers of
// parallel calls arrive in any order).
func Newer(b, a RateLimit) bool {
	switch {
	case b.ResetAt.After(a.ResetAt.Add(windowSlack)):
		return true
	case a.ResetAt.After(b.ResetAt.Add(windowSlack)):
		return false
	case a.Unlimited != b.Unlimited:
		// The server changed its mind (a self-hosted server put behind a
		// limit, or the reverse): the limited reading is the cautious one.
		return !b.Unlimited
	case a.Remaining < 0:
		return true
	case b.Remaining < 0:
		return false
	}
	return b.Remaining <= a.Remaining
}

// Exhausted reports whether the reading says no request is left at now,
// and how long until the window resets.
func (rl RateLimit) Exhausted(now time.Time) (retryAfter time.Duration, exhausted bool) {
	if rl.Unlimited || rl.Remaining != 0 || rl.ResetAt.IsZero() || !now.Before(rl.ResetAt) {
		return 0, false
	}
	return rl.ResetAt.Sub(now), true
}

// parseRateLimit returns nil when the answer carries no readable
// X-RateLimit-Limit; "Infinity" (a self-hosted server) is a reading of no
// limit.
func parseRateLimit(h http.Header, now time.Time) *RateLimit {
	raw := strings.TrimSpace(h.Get("X-RateLimit-Limit"))
	if strings.EqualFold(raw, "Infinity") {
		return &RateLimit{Unlimited: true, Limit: -1, Remaining: -1}
	}
	limit, err := strconv.Atoi(raw)
	if err != nil || limit < 0 {
		return nil
	}
	rl := &RateLimit{Limit: limit, Remaining: -1}
	if v, err := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Remaining"))); err == nil {
		rl.Remaining = v
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && v >= 0 && v < 1<<31 {
		rl.Reset = time.Duration(v) * time.Second
		rl.ResetAt = now.Add(rl.Reset).Truncate(time.Second)
	}
	return rl
}

// GateError is returned when the client's Gate refused a request: nothing
// was sent. It is local to the operation that asked, never an upstream
// answer, so shared fetches must not hand it to other callers.
type GateError struct{ Err error }

func (e *GateError) Error() string { return e.Err.Error() }

func (e *GateError) Unwrap() error { return e.Err }
