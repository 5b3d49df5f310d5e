package restclienttest

import (
	"context"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxBodyBytes bounds the request bodies the fake reads.
const maxBodyBytes = 1 << 20

// Server is the fake upstream: an http.Handler serving the paths under
// /api/v1. All state sits behind one mutex; an answer is computed under it and
// written after it is released.
type Server struct {
	mu       sync.Mutex
	keys     map[string]*apiKey
	clock    func() time.Time
	delay    time.Duration
	windows  map[string]*rateWindow // rate-limit window of each API key
	failures []*failure             // pending FailNext answers, oldest first
	log      []Request
	minted   int           // records created at runtime, numbered for deterministic ids
	held     chan struct{} // while non-nil, answers wait for it to close (Hold)
	faults   Faults
	rng      *rand.Rand     // draws SetFaults failures; seeded, so runs repeat
	sent     map[string]int // Faults.ByRequest: times each request was sent since SetFaults
	version  Version        // set by New's options, then never changed

	assistantDelay time.Duration // SetAssistant; negative: the assistant never answers
	replies        int           // assistant replies delivered, numbered for variety

	// collections serve the resources package resource describes
	// (collection.go), checked by the router before the others.
	collections []served
}

// Faults makes a share of authenticated requests fail as a flaky proxy in
// front of the app would: the status (e.g. 503) with an HTML body and no
// rate-limit headers. The requests are still recorded and counted against
// the rate limit.
type Faults struct {
	Rate   float64 // share of requests that fail, 0..1
	Status int
	// AfterApply makes the app handle the request first (a write is
	// applied) before the proxy answers Status instead of the app's
	// answer, as a gateway timing out does. Otherwise nothing is touched.
	AfterApply bool
	Seed       uint64
	// ByRequest draws each failure from the request itself (its key,
	// method and URL, and how many times that same request was sent
	// since SetFaults) rather than from the order requests arrive in:
	// requests sent in parallel (the pages of a family read) then fail
	// alike on every run, whatever the scheduling, and a retry of a
	// request draws anew. Without it, one seeded sequence is drawn in
	// arrival order.
	ByRequest bool
}

// SetFaults sets the random failures (the zero Faults turns them off).
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
	s.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	s.sent = nil
}

// faulty draws whether this request fails; s.mu is held.
func (s *Server) faulty(r *http.Request, keyName string) bool {
	if s.faults.Rate <= 0 {
		return false
	}
	if !s.faults.ByRequest {
		return s.rng.Float64() < s.faults.Rate
	}
	if s.sent == nil {
		s.sent = map[string]int{}
	}
	id := keyName + "\x00" + r.Method + " " + r.URL.RequestURI()
	n := s.sent[id]
	s.sent[id] = n + 1
	return drawFor(s.faults.Seed, id, n) < s.faults.Rate
}

// drawFor returns a number in [0, 1) that depends only on seed, the
// request id and n (its times sent before).
func drawFor(seed uint64, id string, n int) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	x := h.Sum64() ^ seed ^ uint64(n)*0x9e3779b97f4a7c15
	// splitmix64's finalizer: every input bit moves every output bit.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// RevokeKey makes key unknown: from now on every request with it answers
// 401, as a revoked key does.
func (s *Server) RevokeKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
}

// AddKey makes key a new API key opening what like opens (family, user,
// scope and tier), e.g. to load-test with many keys that share no call.
// It does nothing when like is unknown.
func (s *Server) AddKey(key, like string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[like]; ok {
		cp := *k
		s.keys[key] = &cp
	}
}

// Request is one request as the fake recorded it.
type Request struct {
	Method   string
	Path     string
	RawQuery string
	APIKey   string
	Status   int // the status the fake answered (or would have, had the client waited)
}

// failure is a pending FailNext answer.
type failure struct {
	pathPrefix  string
	remaining   int
	status      int
	contentType string
	body        string
}

// call is one authenticated, routed request handed to an endpoint.
type call struct {
	key   *apiKey
	req   *http.Request
	body  []byte
	query params
	id    string // the {id} (or {chat_id}) path segment, as sent
	now   time.Time
}

// New returns a seeded server, ready to serve, playing Today's release line
// unless an option says otherwise. The seed is deterministic: the same ids
// every run. The large family is only built when first used.
func New(opts ...Option) *Server {
	s := &Server{
		keys:           newKeys(),
		clock:          time.Now,
		windows:        map[string]*rateWindow{},
		assistantDelay: -1,
	}
	s.collections = []served{s.importsCollection(), s.accountsCollection()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ServeHTTP answers one request the way the upstream would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the body before taking the lock: a slow client must not stall
	// everybody else.
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	}
	resp, delay := s.handle(r, body)
	if delay > 0 && !sleep(r.Context(), delay) {
		return // the client gave up; the work is done and recorded, the answer is lost
	}
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	resp.write(w)
}

// handle runs the upstream's checks in its order: routing (Rails' router,
// before any controller), authentication, rate limit, then (for chats) AI
// features and scope, then the endpoint. It also returns the delay to apply
// before answering.
func (s *Server) handle(r *http.Request, body []byte) (response, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()

	keyName := r.Header.Get("X-Api-Key")
	ep, routed := s.resolve(r.Method, r.URL.Path)
	if !routed {
		// A routing error: whatever the key, no rate-limit header and nothing
		// counted, but the caller did spend a round trip, so it is recorded.
		resp := routeNotFound()
		s.record(r, keyName, resp.status)
		return resp, s.delay
	}
	key, known := s.keys[keyName]
	// The upstream tries OAuth first whenever an Authorization header is
	// present, and fails, even when the API key is valid. Unauthenticated
	// requests are recorded (the caller did spend a round trip) but do not
	// count against any rate limit.
	if _, oauth := r.Header["Authorization"]; oauth || !known {
		resp := unauthorized()
		s.record(r, keyName, resp.status)
		return resp, s.delay
	}

	now := s.clock()
	rate := hitRateLimit(s.windows, keyName, key.limit, now)
	var resp response
	if f := s.takeFailure(r.URL.Path); f != nil {
		// An injected failure plays a proxy in front of the app: it answers
		// as told, without the app's rate-limit headers, and touches no data.
		resp = f.response()
	} else if s.faulty(r, keyName) {
		if s.faults.AfterApply && rate.allowed {
			s.dispatch(ep, &call{key: key, req: r, body: body, query: queryParams(r.URL.RawQuery), now: now})
		}
		resp = (&failure{status: s.faults.Status, contentType: "text/html", body: "<html><body>proxy error</body></html>"}).response()
	} else {
		if rate.allowed {
			resp = s.dispatch(ep, &call{key: key, req: r, body: body, query: queryParams(r.URL.RawQuery), now: now})
		} else {
			resp = rate.tooManyRequests()
		}
		rate.setHeaders(resp.header)
	}
	s.record(r, keyName, resp.status)
	return resp, s.delay
}

// record appends a request to the log; s.mu is held.
func (s *Server) record(r *http.Request, keyName string, status int) {
	s.log = append(s.log, Request{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		APIKey:   keyName,
		Status:   status,
	})
}

// takeFailure consumes one pending failure matching path, if any.
func (s *Server) takeFailure(path string) *failure {
	for i, f := range s.failures {
		if strings.HasPrefix(path, f.pathPrefix) {
			if f.remaining--; f.remaining == 0 {
				s.failures = append(s.failures[:i], s.failures[i+1:]...)
			}
			return f
		}
	}
	return nil
}

func (f *failure) response() response {
	h := http.Header{}
	if f.contentType != "" {
		h.Set("Content-Type", f.contentType)
	}
	return response{status: f.status, header: h, body: []byte(f.body)}
}

// sleep waits d, or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Requests returns a copy of the log of requests, in arrival order. Every
// one is there, whatever its status (401, 4xx and 429 included).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	copy(out, s.log)
	return out
}

// Calls returns the number of recorded requests.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log)
}

// CallsFor returns the number of recorded requests made with key.
func (s *Server) CallsFor(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r.APIKey == key {
			n++
		}
	}
	return n
}

// Reset clears the request log and the rate-limit windows. Data (including
// chats created through the API), rate-limit overrides, pending failures,
// the clock and the delay are kept.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
	s.windows = map[string]*rateWindow{}
}

// SetRateLimit sets the requests per hour allowed to key (a key unknown to the
// fake is ignored); Unlimited makes it a self-hosted server's key. Requests
// already counted in the current window stay counted.
func (s *Server) SetRateLimit(key string, limitPerHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[key]; ok {
		k.limit = limitPerHour
	}
}

// SetClock replaces the clock (time.Now by default; nil restores it). It
// drives the rate-limit windows, the timestamps of created or updated
// records and when the assistant's replies appear (SetAssistant). It is called with the server's lock held: it must not call back into
// the Server.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	s.clock = now
}

// FailNext makes the next n authenticated requests (to a route that exists:
// a routing error is answered before) whose path starts with pathPrefix (e.g. "/api/v1/chats") answer status with the given content type
// and body (e.g. 503 text/html "<html>..."), as a proxy in front of the app
// would: no data is touched and no rate-limit header is sent. They are still
// recorded and count against the rate limit. When several FailNext are
// pending, the oldest matching one answers first.
func (s *Server) FailNext(pathPrefix string, n int, status int, contentType, body string) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &failure{
		pathPrefix:  pathPrefix,
		remaining:   n,
		status:      status,
		contentType: contentType,
		body:        body,
	})
}

// SetDelay makes every request wait d before it is answered (0 turns it off).
// The request is processed and recorded first; if its context ends during the
// wait, the answer is dropped, as when a real upstream is too slow for the
// client.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes every answer wait, after the request is processed and
// recorded, until release is called: a test can then see which requests
// arrive while others are in flight. release is idempotent.
func (s *Server) Hold() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.held = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.held == ch {
				s.held = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}
