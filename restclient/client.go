// Package restclient is a typed client for the subset of Sure's /api/v1 REST
// API that the GraphQL facade exposes: the resources package resource
// describes (categories, chats, imports…).
//
// The client absorbs the upstream's quirks (overflow pages, per_page
// clamping, the non-UUID parent_id cast, two timestamp precisions) so that
// callers never see them, and it reports every call it makes through an
// Observer, because each call spends the caller's hourly rate limit.
package restclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/suregql/suregql/internal/edge/detach"
	"github.com/suregql/suregql/restclient/resource"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one upstream round trip when New is given no
// *http.Client.
const DefaultTimeout = 10 * time.Second

// maxErrorBody caps how much of an error answer is read: proxies may send
// large HTML pages and only the JSON error code matters.
const maxErrorBody = 64 << 10

// maxBody caps a successful answer (a page of 100 categories is ~30 KiB).
const maxBody = 16 << 20

// Call describes one HTTP request the client sent upstream. Observers use it
// to count calls and to remember the rate-limit headers of a key.
type Call struct {
	Method string
	Path   string // URL path and query, without the base URL
	// Endpoint names the endpoint without ids or query, e.g.
	// "GET /api/v1/categories/{id}": safe as a log field or metric label.
	Endpoint  string
	Attempt   int           // 0 for the first try, 1 for the first retry…
	Status    int           // 0 when the request failed before an answer
	Duration  time.Duration // until the answer's headers arrived
	RateLimit *RateLimit
	Err       error
}

// Resource is a resource of the upstream API by name (the first segment
// of its paths): what a request reads or writes, and what a write makes
// stale. Its description is resource.Named's.
type Resource = resource.Name

// The resources written by hand-written endpoints (categories, chats).
const (
	Categories Resource = "categories"
	Chats      Resource = "chats"
)

// ResourceOf returns the resource a path (relative to /api/v1) names: its
// first segment, or "" for a path of no resource described in
// resource.All.
func ResourceOf(path string) Resource {
	if s := resource.Of(path); s != nil {
		return s.Name
	}
	return ""
}

// PartOf returns the part of its resource a request to path reads, for
// writes that change one record and the list: "chats/" for the list of
// chats, "chats/<id>" for one chat (its messages included); "" for a path
// of no resource.
func PartOf(path string) Resource {
	res := ResourceOf(path)
	if res == "" {
		return ""
	}
	rest := strings.TrimPrefix(strings.TrimLeft(path, "/"), string(res))
	rest, _, _ = strings.Cut(rest, "?")
	rest = strings.TrimPrefix(rest, "/")
	id, _, _ := strings.Cut(rest, "/")
	return res + "/" + Resource(id)
}

// Endpoint returns the endpoint template of a request to path (relative to
// /api/v1): the resource, then {id} for the record segment, e.g.
// "GET /api/v1/chats/{id}".
func Endpoint(method, path string) string {
	res := string(ResourceOf(path))
	if res == "" {
		res = "{unknown}"
	}
	path, _, _ = strings.Cut(path, "?")
	_, rest, hasID := strings.Cut(strings.Trim(path, "/"), "/")
	tmpl := method + " /api/v1/" + res
	if hasID && rest != "" {
		tmpl += "/{id}"
		// A sub-resource keeps its name (chats/{id}/messages); ids and
		// anything past it do not reach a label.
		if _, sub, ok := strings.Cut(rest, "/"); ok && sub == "messages" {
			tmpl += "/messages"
		}
	}
	return tmpl
}

// Observer is told about every request sent upstream, retries included, on
// the goroutine that sent it, with the context the request was sent with
// (so that what it logs carries the values of the caller's request, such
// as its request id).
type Observer func(context.Context, Call)

// Client talks to one Sure server on behalf of one API key. The zero value
// is not usable; build one with New and derive per-caller copies with
// WithAPIKey. A Client is safe for concurrent use.
//
// What the GET methods return is shared: every caller handed the same
// Response by the fetcher (a per-operation memo, coalesced GETs, cache hits)
// gets the same decoded value, decoded once. Callers must treat it as
// read-only, all the way down (slices, pointers, raw JSON): copy before
// changing anything. What the write methods return is the caller's own.
type Client struct {
	baseURL  *url.URL
	http     *http.Client
	apiKey   string
	observer Observer
	gate     Gate
	retry    RetryPolicy
	fetcher  Fetcher
	breaker  *Breaker // nil: none
	// accepted tells the breaker which callers' keys the upstream
	// accepted (WithBreaker).
	accepted func(id string) bool
	// callerID names the caller to the breaker (Caller.ID): a keyed hash
	// of its key, never the key; "" for a client bound to no caller.
	callerID string
	now      func() time.Time
}

// RetryPolicy says how GET requests are retried. Only transport errors and
// 502/503/504 (a proxy in front of the app) are retried: every retry spends
// one more request of the caller's hourly budget, so retries stay few, and a
// 429 is never retried but surfaced with its Retry-After.
type RetryPolicy struct {
	MaxRetries int
	// Backoff is the wait before the first retry, doubled after each; each
	// wait is jittered (between half and all of it) so that callers failed
	// by one upstream hiccup do not all come back at the same instant.
	Backoff time.Duration
}

// DefaultRetryPolicy retries a failed GET twice, after about 50ms and
// 100ms. With an upstream failing one request in five, a GET then fails
// 0.8 % of the time (0.2³) at 1.24 requests on average.
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 2, Backoff: 50 * time.Millisecond}

// Option configures a Client built by New.
type Option func(*Client)

// WithHTTPClient sets the *http.Client used for upstream calls; its Timeout
// bounds each attempt.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithTransport returns a copy of c whose requests go through
// wrap(transport), transport being its *http.Client's (or
// http.DefaultTransport): the facade adds tracing this way. The copy keeps
// the client's timeout and its refusal to follow redirects.
func (c *Client) WithTransport(wrap func(http.RoundTripper) http.RoundTripper) *Client {
	cp := *c
	hc := *c.http
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = wrap(rt)
	cp.http = &hc
	return &cp
}

// requestInfoKey is the context key of a request's requestInfo.
type requestInfoKey struct{}

// requestInfo is what a transport may learn of a request the client sends.
type requestInfo struct {
	endpoint string
	attempt  int
}

// RequestEndpoint returns the endpoint template (as in Call.Endpoint) and
// the attempt (0 for the first try) of a request the client sends, from
// the request's context: a transport names it so, never by its URL. ok is
// false for requests the client did not make.
func RequestEndpoint(ctx context.Context) (endpoint string, attempt int, ok bool) {
	info, ok := ctx.Value(requestInfoKey{}).(*requestInfo)
	if !ok {
		return "", 0, false
	}
	return info.endpoint, info.attempt, true
}

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithClock sets the clock used to turn X-RateLimit-Reset into a time.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// apiRoot is where the API lives under a Sure server's base URL.
const apiRoot = "/api/v1"

// ParseBaseURL checks that raw names a Sure server the way New needs it,
// and returns it normalised: an absolute http or https URL with a host,
// without user info, query or fragment, and without a trailing slash. A
// trailing "/api/v1" (or "/api/v1/") is dropped, since the client appends
// it: "https://sure.example.com/api/v1" is taken for
// "https://sure.example.com". A path in front of it is kept (a Sure served
// under a prefix). The error says what is wrong in words, without echoing
// raw (which may hold a password).
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return nil, errors.New("is not a URL such as https://sure.example.com")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("is not an http or https URL such as https://sure.example.com")
	case u.Host == "" || u.Opaque != "":
		return nil, errors.New("has no host; give one such as https://sure.example.com")
	case u.User != nil:
		// net/http would send them as an Authorization header, which Sure
		// answers 401 whatever the API key.
		return nil, errors.New("carries a user name or password; the facade sends each caller's X-Api-Key, nothing else")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errors.New("has a query or fragment; give the server's base URL such as https://sure.example.com")
	}
	escaped := strings.TrimSuffix(strings.TrimRight(u.EscapedPath(), "/"), apiRoot)
	if strings.Contains(escaped+"/", apiRoot+"/") {
		return nil, errors.New("names a path of the API; give the server's base URL such as https://sure.example.com")
	}
	if u.Path, err = url.PathUnescape(escaped); err != nil {
		return nil, errors.New("is not a URL such as https://sure.example.com")
	}
	u.RawPath = escaped
	return u, nil
}

// New returns a Client for the Sure server at baseURL (for example
// "https://sure.example.com"; "/api/v1" is appended, and accepted if
// baseURL ends with it). It fails when ParseBaseURL refuses baseURL.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, fmt.Errorf("restclient: the base URL %w", err)
	}
	c := &Client{
		baseURL: u.JoinPath(apiRoot),
		http:    &http.Client{Timeout: DefaultTimeout},
		retry:   DefaultRetryPolicy,
		now:     time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	// Never follow redirects: net/http would copy X-Api-Key to whatever
	// host a Location names (it strips only Authorization and cookies). A
	// 3xx is answered as an unusable upstream answer instead.
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	return c, nil
}

// WithAPIKey returns a copy of c that authenticates as apiKey. The copy
// has no fetcher: a fetcher is its caller's (its answers are that key's),
// so it never follows the client to another key; nor has it an id (see
// Caller.ID).
func (c *Client) WithAPIKey(apiKey string) *Client {
	cp := *c
	cp.apiKey = apiKey
	cp.fetcher = nil
	cp.callerID = ""
	return &cp
}

// Caller is what binds a client to one caller's request: its key and the
// request's observer, gate and fetcher (each as With* sets it; nil leaves
// the client's).
type Caller struct {
	APIKey string
	// ID names the key to the client's Breaker: a stable keyed hash of
	// APIKey (callerkey.Key.ID), never the key itself. The breaker counts
	// the calls of the keys the upstream accepted, by their ids; a caller
	// without one is a stranger to it (its calls neither open nor close
	// it, nor probe).
	ID       string
	Observer Observer
	Gate     Gate
	Fetcher  Fetcher
}

// For returns a copy of c bound to the caller: one copy where the With*
// methods in a row would make four, for every request. As with WithAPIKey,
// c's fetcher is not kept: the copy has the caller's, or none.
func (c *Client) For(caller Caller) *Client {
	cp := *c
	cp.apiKey = caller.APIKey
	cp.callerID = caller.ID
	cp.fetcher = caller.Fetcher
	if caller.Observer != nil {
		cp.observer = caller.Observer
	}
	if caller.Gate != nil {
		cp.gate = caller.Gate
	}
	return &cp
}

// WithObserver returns a copy of c that reports every request to obs.
func (c *Client) WithObserver(obs Observer) *Client {
	cp := *c
	cp.observer = obs
	return &cp
}

// Gate is asked before every request is sent, retries included (attempt is
// 0 for the first try, 1 for the first retry…); an error stops the request
// before it reaches the network and is returned wrapped in a *GateError.
// ctx is the request's: the facade uses it to cap the upstream calls of
// one operation, to count them per operation of a batch, and to refuse
// keys known to be out of quota.
type Gate func(ctx context.Context, method, path string, attempt int) error

// WithGate returns a copy of c that asks g before every request.
func (c *Client) WithGate(g Gate) *Client {
	cp := *c
	cp.gate = g
	return &cp
}

// WithFetcher returns a copy of c whose GET requests go through f (a
// per-request memo, a coalescer, a cache). f receives the request's
// identity and a function that performs it.
func (c *Client) WithFetcher(f Fetcher) *Client {
	cp := *c
	cp.fetcher = f
	return &cp
}

// BaseURL returns the API's URL (the server's base URL and /api/v1).
func (c *Client) BaseURL() string { return c.baseURL.String() }

// APIKey returns the key this client sends.
func (c *Client) APIKey() string { return c.apiKey }

// Fetcher wraps the sending of one GET. key identifies the request (its
// URL); fetch sends it. A client's fetcher is made for its caller (see
// Client.For), so the key names no caller: implementations may answer from
// memory or share one fetch between callers, but must never share answers
// across API keys.
type Fetcher interface {
	Fetch(ctx context.Context, key RequestKey, fetch func(context.Context) (*Response, error)) (*Response, error)
}

// RequestKey identifies a GET of one caller: its path and query relative
// to the base URL.
type RequestKey struct {
	Path string
}

// Resource returns the resource the request reads.
func (k RequestKey) Resource() Resource { return ResourceOf(k.Path) }

// Response is an upstream answer whose body has been read. It is immutable,
// so fetchers may hand the same Response to several callers; build one as
// a composite literal and share it by pointer, never by copying it.
type Response struct {
	Status    int
	Body      []byte
	RateLimit *RateLimit
	// Stale is set on an answer a cache served from what it held past its
	// freshness, because the upstream could not answer (see Staleness);
	// nil for an answer of the upstream or a fresh one.
	Stale *Staleness

	// decoded holds Body decoded by the typed methods, once per Go type,
	// for every caller the Response is handed to.
	decoded decodedBodies
}

// Staleness says how old an answer served stale is, and why the upstream
// did not answer in its place.
type Staleness struct {
	Age    time.Duration
	Reason string // "rate_limited", "circuit_open" or "upstream_unavailable"
}

// decodedBodies is the memory of a Response's decoded body. A Response is
// decoded into one type in practice (its path names one endpoint), so a
// short list beats a map.
type decodedBodies struct {
	mu     sync.Mutex
	byType []*decodedBody
}

// decodedBody is a Response's body decoded into one Go type, or why it
// could not be.
type decodedBody struct {
	typ   reflect.Type
	once  sync.Once
	value any // a *T of typ
	err   error
}

// of returns the entry of typ, adding it on first use.
func (d *decodedBodies) of(typ reflect.Type) *decodedBody {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.byType {
		if e.typ == typ {
			return e
		}
	}
	e := &decodedBody{typ: typ}
	d.byType = append(d.byType, e)
	return e
}

// decodeShared returns resp's JSON body decoded into a T and checked to be
// an answer of the Sure API (by T's validate method, when it has one; a
// failed check is a *notSureError). The first caller decodes and checks; every caller of the
// same Response, at the same moment or later (coalesced GETs, cache hits,
// the per-operation memo), gets the same *T or the same error. The *T is
// therefore shared and must be treated as read-only by everyone who
// receives it.
func decodeShared[T any](resp *Response) (*T, error) {
	return decodeSharedAs(resp, decodeChecked[T])
}

// decodeChecked decodes body into a new T and runs its checks.
func decodeChecked[T any](body []byte) (*T, error) {
	out := new(T)
	if err := decodeAnswer(body, out); err != nil {
		return nil, err
	}
	if err := validateAnswer(out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeSharedAs is decodeShared with decode reading (and checking) the
// body: a described resource's envelope (Collection). A Response is
// decoded once per type T, whatever the decode: one path is one endpoint,
// read by one decode.
func decodeSharedAs[T any](resp *Response, decode func([]byte) (*T, error)) (*T, error) {
	e := resp.decoded.of(reflect.TypeFor[T]())
	e.once.Do(func() {
		out, err := decode(resp.Body)
		if err != nil {
			e.err = err
			return
		}
		e.value = out
	})
	if e.err != nil {
		return nil, e.err
	}
	return e.value.(*T), nil // stored by the once above, for this very type
}

// decodeAnswer decodes an upstream answer's JSON body into out with
// encoding/json's v2 implementation (github.com/go-json-experiment/json,
// the code Go ships as encoding/json/v2): half the time and a quarter of
// the allocations of encoding/json on a page of categories, the largest
// cost of a small operation's CPU. Its options keep v1's leniency where an
// upstream could differ: invalid UTF-8 is replaced, not refused, and a
// repeated member is taken, not refused. Member names match exactly: the
// upstream's are lower case, as the struct tags say.
func decodeAnswer(body []byte, out any) error {
	return jsonv2.Unmarshal(body, out, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// get sends a GET to path (relative to /api/v1) with query through the
// client's fetcher, and returns its JSON answer decoded into a T, shared
// (read-only) with whoever else the fetcher hands the same answer to. An
// answer that does not decode or is not Sure's (see validator) is an
// *UnavailableError with NotSure, for the fetcher as for the caller.
func get[T any](ctx context.Context, c *Client, path string, query url.Values) (*T, error) {
	return getAs(ctx, c, path, query, decodeChecked[T])
}

// getAs is get with decode reading the answer (see decodeSharedAs).
func getAs[T any](ctx context.Context, c *Client, path string, query url.Values, decode func([]byte) (*T, error)) (*T, error) {
	rel := path
	if len(query) > 0 {
		rel += "?" + query.Encode()
	}
	fetch := func(ctx context.Context) (*Response, error) {
		resp, err := c.send(ctx, http.MethodGet, path, query, nil)
		if err != nil {
			return nil, err
		}
		// Decoded and checked here (once: every later caller of resp
		// shares it), so that the fetcher gets an answer that is not
		// Sure's as the error it is: caches keep no error.
		if _, err := decodeSharedAs(resp, decode); err != nil {
			return nil, unusableAnswer(getOp(path, query), resp.Status, err)
		}
		return resp, nil
	}
	var (
		resp *Response
		err  error
	)
	if c.fetcher != nil {
		resp, err = c.fetcher.Fetch(ctx, RequestKey{Path: rel}, fetch)
	} else {
		resp, err = fetch(ctx)
	}
	if err != nil {
		return nil, err
	}
	out, err := decodeSharedAs(resp, decode)
	if err != nil {
		return nil, unusableAnswer("GET /"+rel, resp.Status, err)
	}
	return out, nil
}

// getOp names a GET of path with query in errors, as get does.
func getOp(path string, query url.Values) string {
	if len(query) > 0 {
		return "GET /" + path + "?" + query.Encode()
	}
	return "GET /" + path
}

// write sends a POST, PATCH or DELETE with a JSON body (none when body is
// nil) and decodes the answer into out (nothing when out is nil), checked
// as get checks its answers. Writes are never retried: the upstream may
// have applied them.
func (c *Client) write(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, nil, body)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return unusableAnswer(method+" /"+path, resp.Status, err)
	}
	if err := validateAnswer(out); err != nil {
		// The upstream may have applied the write all the same: the
		// answer is no proof either way, and is never shown as data.
		return unusableAnswer(method+" /"+path, resp.Status, err)
	}
	return nil
}

// send performs the request with retries (GET only) and turns any non-2xx
// answer into a typed error.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body any) (*Response, error) {
	// An operation run past its request's end (@defer) sends nothing
	// once the request ended, and its calls in flight end with it.
	ctx, stop := detach.Live(ctx)
	defer stop()
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("restclient: encode %s %s body: %w", method, path, err)
		}
	}
	attempts := 1
	if method == http.MethodGet {
		attempts += max(c.retry.MaxRetries, 0)
	}
	backoff := c.retry.Backoff
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			wait := jitter(backoff)
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
				return nil, lastErr // no time left to wait and try again
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, lastErr
			}
			backoff *= 2
		}
		resp, err := c.once(ctx, method, path, query, payload, attempt)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// jitter returns a random wait between d/2 and d.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// Retryable reports whether a failed GET may succeed when sent again: no
// answer arrived, or a proxy answered 502, 503 or 504.
func Retryable(err error) bool { return retryable(err) }

func retryable(err error) bool {
	var ue *UnavailableError
	if !errors.As(err, &ue) || errors.Is(err, ErrCircuitOpen) {
		return false
	}
	switch ue.Status {
	case 0, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// once sends one request and reads its answer.
func (c *Client) once(ctx context.Context, method, path string, query url.Values, payload []byte, attempt int) (*Response, error) {
	u := c.baseURL.JoinPath(path)
	u.RawQuery = query.Encode()
	rel := strings.TrimPrefix(u.RequestURI(), c.baseURL.EscapedPath())
	op := method + " " + rel

	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	call := Call{Method: method, Path: rel, Endpoint: Endpoint(method, path), Attempt: attempt}
	ctx = context.WithValue(ctx, requestInfoKey{}, &requestInfo{endpoint: call.Endpoint, attempt: attempt})
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("restclient: build %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	// Only the API key authenticates: an Authorization header would make the
	// server try OAuth first and answer 401 even for a valid key.
	req.Header.Set("X-Api-Key", c.apiKey)
	if payload != nil {
		// Without this header Rails reads the body as form data and the
		// title goes missing (422).
		req.Header.Set("Content-Type", "application/json")
	}

	// The breaker first: a call it refuses is no call, which the gate
	// would count against the operation's budget.
	status := 0
	if c.breaker != nil {
		ticket, ok := c.breaker.allow(ctx, c.callerID, method, c.acceptedID(c.callerID))
		if !ok {
			return nil, circuitOpen(op)
		}
		// Released on every way out: status 0 is no answer. Whether the
		// caller left is read from its context, not the probe's below;
		// whether its key is accepted, once the Observer heard the
		// answer (it is told first, below).
		defer func() { c.breaker.done(ctx, ticket, status, ctx.Err() != nil, c.acceptedID(ticket.id)) }()
		if ticket.probe {
			// The probe is quick or a failure: every other call waits
			// for it.
			probeCtx, cancel := context.WithTimeout(ctx, c.breaker.probeTimeout)
			defer cancel()
			req = req.WithContext(probeCtx)
		}
	}
	if c.gate != nil {
		if err := c.gate(ctx, method, call.Path, attempt); err != nil {
			status = -1 // not sent: says nothing of the upstream
			return nil, &GateError{Err: err}
		}
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	call.Duration = time.Since(start)
	if err != nil {
		err = &UnavailableError{Op: op, Err: err}
		call.Err = err
		c.observe(ctx, call)
		return nil, err
	}
	defer resp.Body.Close()

	call.Status = resp.StatusCode
	call.RateLimit = parseRateLimit(resp.Header, c.now())
	limit := int64(maxBody)
	if resp.StatusCode >= 300 {
		limit = maxErrorBody
	}
	data, readErr := readAnswer(resp, limit)
	if readErr == nil {
		status = resp.StatusCode
	}
	if readErr != nil {
		// The connection broke mid-answer: as for any transport error (Status
		// 0), a GET may be retried.
		err := &UnavailableError{Op: op, Err: fmt.Errorf("read answer (status %d): %w", resp.StatusCode, readErr)}
		call.Err = err
		c.observe(ctx, call)
		return nil, err
	}
	if err := checkResponse(op, resp, data, c.now()); err != nil {
		call.Err = err
		c.observe(ctx, call)
		return nil, err
	}
	c.observe(ctx, call)
	return &Response{Status: resp.StatusCode, Body: data, RateLimit: call.RateLimit}, nil
}

// readAnswer reads at most limit bytes of resp's body into one buffer
// sized by Content-Length when the server sent it, rather than one grown by
// doubling from 512 bytes. The size announced is trusted up to
// maxPresized: past that the buffer grows with what actually arrives.
func readAnswer(resp *http.Response, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(resp.ContentLength, 0), limit, maxPresized)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, limit))
	return buf.Bytes(), err
}

// maxPresized bounds the buffer an answer's Content-Length makes readAnswer
// allocate before any byte arrived.
const maxPresized = 1 << 20

func (c *Client) observe(ctx context.Context, call Call) {
	if c.observer != nil {
		c.observer(ctx, call)
	}
}
