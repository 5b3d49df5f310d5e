// Package redisstate keeps in Redis (or a service that speaks its protocol)
// the state that makes several facade replicas act as one: what each key's
// rate limit is known to be, its family's size, its writes' generations, its
// cached GET answers, and the persisted queries. Each store has the same
// interface as its in-memory counterpart in package restcache.
//
// Nothing in Redis reveals a key or a caller's data: every Redis key is
// named by a keyed hash (callerkey), and every value is sealed with AES-GCM
// under a key derived from the caller's API key (or, for a persisted query,
// from its hash), so only a request that carries that key can read it.
//
// Redis trouble never fails a request: every round trip has a short
// timeout, a circuit breaker stops asking after a few failures in a row and
// asks again a little later, and every store then answers as if Redis held
// nothing (a cache miss, no reading), so the facade answers from the
// upstream. Rate limits and family sizes are also kept in memory, so a
// replica keeps what it learnt itself while Redis is away.
package redisstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/suregql/suregql/internal/state/callerkey"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one round trip to Redis: on a network where
	// Redis answers in a millisecond, 100 ms is a fault, and it is still
	// small beside an upstream call (about 100 ms too, but spent once).
	DefaultTimeout = 100 * time.Millisecond
	// DefaultFailures is how many failed round trips in a row open the
	// breaker.
	DefaultFailures = 3
	// DefaultCooldown is how long an open breaker waits before it lets one
	// round trip try Redis again.
	DefaultCooldown = 2 * time.Second
	// MinSecretBytes is the shortest secret accepted: the secret keys the
	// hashes that name every Redis key.
	MinSecretBytes = 16
)

// prefix starts every Redis key the facade writes, so that it can share a
// database with others and an operator can find (and drop) its keys.
const prefix = "suregql:"

// Options configures a Store.
type Options struct {
	// Secret keys the hashes that name Redis keys and salts the derivation
	// of the ciphers; every replica must have the same one. At least
	// MinSecretBytes.
	Secret []byte
	// Timeout bounds each round trip; 0 means DefaultTimeout.
	Timeout time.Duration
	// Failures in a row open the breaker; 0 means DefaultFailures.
	Failures int
	// Cooldown is how long the breaker stays open; 0 means
	// DefaultCooldown.
	Cooldown time.Duration
	// Log receives one line per change of state (Redis lost, Redis back);
	// nil means slog.Default().
	Log *slog.Logger
	// Now is the clock of the breaker; nil means time.Now.
	Now func() time.Time
}

// Store is the connection to Redis shared by the stores of one process,
// with its timeout and circuit breaker. It is safe for concurrent use.
type Store struct {
	rdb      *redis.Client
	ring     *callerkey.Ring
	timeout  time.Duration
	failures int
	cooldown time.Duration
	log      *slog.Logger
	now      func() time.Time

	mu          sync.Mutex
	state       State
	since       time.Time
	inARow      int  // failed round trips in a row
	probing     bool // half-open: one round trip is trying Redis
	reopenAt    time.Time
	lastFailure string

	roundTrips, failed, skipped atomic.Int64
	// lostWrite: a write generation could not be recorded; when Redis is
	// back, every replica's cached answers must be dropped (see epoch).
	lostWrite atomic.Bool
}

// State is what the breaker knows of Redis.
type State string

// States of the breaker.
const (
	// StateUp: round trips are sent (the breaker is closed).
	StateUp State = "up"
	// StateDown: round trips are not sent until the cooldown ends (open).
	StateDown State = "down"
)

// errBadURL says what a Redis URL looks like, without the one given:
// go-redis's message may quote it, password included.
var errBadURL = errors.New("not a redis:// or rediss:// URL (redis://[user:password@]host:port[/db])")

// CheckURL returns an error when url is not one Open accepts.
func CheckURL(url string) error {
	if _, err := redis.ParseURL(strings.TrimSpace(url)); err != nil {
		return errBadURL
	}
	return nil
}

// Open returns a Store of the Redis at url (redis:// or rediss://, with
// an optional username, password and database number: redis://user:pass@
// host:6379/2). It does not connect: the server starts whatever Redis's
// state, and the breaker tells.
func Open(url string, opts Options) (*Store, error) {
	if len(opts.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("the Redis secret must be at least %d bytes, shared by every replica", MinSecretBytes)
	}
	o, err := redis.ParseURL(strings.TrimSpace(url))
	if err != nil {
		return nil, errBadURL
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// The breaker and the callers' fallbacks are the retry policy: one
	// attempt per round trip, each bounded by timeout, dial included.
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DialTimeout = timeout
	o.ReadTimeout = timeout
	o.WriteTimeout = timeout
	o.PoolTimeout = timeout
	o.ContextTimeoutEnabled = true
	o.Protocol = 2           // nothing here needs RESP3's push messages
	o.DisableIdentity = true // no CLIENT SETINFO: Redis-compatible services may refuse it
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	quietLibrary.Do(func() { redis.SetLogger(quiet{}) })
	return newStore(redis.NewClient(o), opts, timeout), nil
}

// quietLibrary silences go-redis's own log (a line per failed dial, on
// the standard logger): the Store logs once per change of state instead.
var quietLibrary sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func newStore(rdb *redis.Client, opts Options, timeout time.Duration) *Store {
	s := &Store{
		rdb:      rdb,
		ring:     callerkey.NewRing(opts.Secret, true),
		timeout:  timeout,
		failures: opts.Failures,
		cooldown: opts.Cooldown,
		log:      opts.Log,
		now:      opts.Now,
		state:    StateUp,
	}
	if s.failures <= 0 {
		s.failures = DefaultFailures
	}
	if s.cooldown <= 0 {
		s.cooldown = DefaultCooldown
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.since = s.now()
	return s
}

// Keys returns the ring that derives each request's Key: keyed by the
// secret, with a cipher per key.
func (s *Store) Keys() *callerkey.Ring { return s.ring }

// Close closes the connections to Redis.
func (s *Store) Close() error { return s.rdb.Close() }

// errSkipped is returned by do while the breaker is open.
var errSkipped = errors.New("redisstate: redis is down: not asked until the cooldown ends")

// do runs one round trip fn, bounded by the timeout, unless the breaker is
// open. redis.Nil (no such key) is an answer, not a failure.
func (s *Store) do(fn func(ctx context.Context) error) error {
	if !s.allow() {
		s.skipped.Add(1)
		return errSkipped
	}
	// Not the request's context: a request that ends while Redis answers
	// must not count as Redis failing, and the timeout bounds it anyway.
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	s.roundTrips.Add(1)
	err := fn(ctx)
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	s.record(err)
	if err == nil && s.lostWrite.Load() {
		s.bumpEpoch()
	}
	return err
}

// allow reports whether a round trip may be sent: the breaker is closed,
// or its cooldown ended and no other round trip is trying Redis.
func (s *Store) allow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateUp {
		return true
	}
	if s.probing || s.now().Before(s.reopenAt) {
		return false
	}
	s.probing = true
	return true
}

// record updates the breaker with a round trip's outcome and logs a
// change of state.
func (s *Store) record(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probing = false
	if err == nil {
		s.inARow = 0
		if s.state == StateDown {
			downFor := s.now().Sub(s.since)
			s.state, s.since = StateUp, s.now()
			s.log.Info("redis is back: shared state is used again", "downFor", downFor.Round(time.Millisecond))
		}
		return
	}
	s.failed.Add(1)
	s.inARow++
	s.lastFailure = reason(err)
	switch {
	case s.state == StateDown: // the probe failed
		s.reopenAt = s.now().Add(s.cooldown)
	case s.inARow >= s.failures:
		s.state, s.since = StateDown, s.now()
		s.reopenAt = s.since.Add(s.cooldown)
		s.log.Warn("redis unavailable: answering from the upstream without shared state until it is back",
			"reason", s.lastFailure, "failuresInARow", s.inARow, "retryIn", s.cooldown)
	}
}

// reason names a failed round trip for logs and /readyz: never an address.
func reason(err error) string {
	var ne interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, redis.ErrClosed):
		return "closed"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection_refused"
	case strings.HasPrefix(err.Error(), "NOAUTH"), strings.HasPrefix(err.Error(), "WRONGPASS"),
		strings.Contains(err.Error(), "AUTH") && strings.Contains(err.Error(), "password"):
		return "auth"
	}
	return "error"
}

// Status is the Store's state as /readyz and metrics report it.
type Status struct {
	State State     `json:"state"`
	Since time.Time `json:"since"`
	// Reason of the last failed round trip, while down.
	Reason string `json:"reason,omitempty"`
}

// Status returns what the breaker knows of Redis.
func (s *Store) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{State: s.state, Since: s.since.UTC()}
	if s.state == StateDown {
		st.Reason = s.lastFailure
	}
	return st
}

// Counts returns the round trips sent, those that failed, and those not
// sent because the breaker was open, since the Store was made.
func (s *Store) Counts() (roundTrips, failed, skipped int64) {
	return s.roundTrips.Load(), s.failed.Load(), s.skipped.Load()
}

// Ping asks Redis whether it answers, through the breaker.
func (s *Store) Ping() error {
	return s.do(func(ctx context.Context) error { return s.rdb.Ping(ctx).Err() })
}

// epochKey holds a number that every cached answer is sealed with: bumping
// it makes every replica's cached answers unreadable at once.
const epochKey = prefix + "epoch"

// bumpEpoch drops every cached answer of every key: a write generation was
// lost while Redis was away, so an answer read before that write could
// otherwise be served after it.
func (s *Store) bumpEpoch() {
	if !s.lostWrite.CompareAndSwap(true, false) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.rdb.Incr(ctx, epochKey).Err(); err != nil {
		s.lostWrite.Store(true) // try again after the next answer
		return
	}
	s.log.Info("redis: cached answers of every key dropped: a write made while Redis was away could not be recorded")
}

// Up reports whether the breaker is closed: Redis is asked.
func (s *Store) Up() bool { return s.Status().State == StateUp }

// checkKey is where Check writes its sealed round trip.
const checkKey = prefix + "check"

// ErrAuth is returned by Check when Redis refused the URL's credentials:
// a configuration error that no retry fixes.
var ErrAuth = errors.New("redis refused the password or user of -redis-url / REDIS_URL (NOAUTH / WRONGPASS)")

// CheckError is a failed Check: Reason is the one Status reports
// ("timeout", "connection_refused", "auth", "sealed_round_trip"…), never
// an address or a password.
type CheckError struct {
	Reason string
	Err    error
}

func (e *CheckError) Error() string {
	if e.Reason == "auth" {
		return ErrAuth.Error()
	}
	return "redis check failed (" + e.Reason + "): " + e.Err.Error()
}

func (e *CheckError) Unwrap() error { return e.Err }

// Check asks Redis whether it answers, as the server does at start: a
// PING, then a value sealed with the secret written, read back and
// opened. It bypasses the breaker and sets its state at once: up when
// Redis answered, down (with the reason, as after DefaultFailures failed
// round trips) when not; so that /readyz and the metrics tell Redis's state
// from the first second, not after the first requests fail. Each round
// trip is bounded by the timeout.
func (s *Store) Check() error {
	err := s.check()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roundTrips.Add(1)
	if err == nil {
		s.inARow, s.probing = 0, false
		if s.state == StateDown {
			s.state, s.since = StateUp, s.now()
		}
		return nil
	}
	s.failed.Add(1)
	ce := &CheckError{Reason: reason(err), Err: err}
	if errors.Is(err, errSealedRoundTrip) {
		ce.Reason = "sealed_round_trip"
	}
	s.lastFailure = ce.Reason
	s.inARow = max(s.inARow+1, s.failures)
	if s.state == StateUp {
		s.state, s.since = StateDown, s.now()
	}
	s.reopenAt = s.now().Add(s.cooldown)
	return ce
}

// errSealedRoundTrip: Redis answered, but the value written was not read
// back as written (a proxy that drops writes, a read-only replica).
var errSealedRoundTrip = errors.New("the sealed value written was not read back")

func (s *Store) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return err
	}
	key := s.ring.Key(checkKey)
	want := []byte("suregql check " + s.now().UTC().Format(time.RFC3339Nano))
	sealed, err := key.Seal(want, []byte(checkKey))
	if err != nil {
		return err
	}
	ctx, cancel = context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.rdb.Set(ctx, checkKey, sealed, time.Minute).Err(); err != nil {
		return err
	}
	ctx, cancel = context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	got, err := s.rdb.Get(ctx, checkKey).Bytes()
	if err != nil {
		return err
	}
	// Another replica may have written its own check meanwhile: sealed
	// with the same secret, it opens too, and says the same.
	if plain, err := key.Open(got, []byte(checkKey)); err != nil || !strings.HasPrefix(string(plain), "suregql check ") {
		return errSealedRoundTrip
	}
	return nil
}
