// Package config reads the server's configuration: its flags, each
// defaulting to the environment variable its usage names ("(env NAME)"; a
// flag wins over its variable), and the checks of their values. Only
// -version, a command rather than a setting, has no variable.
//
// The flags are described once, in a table (Flags): the flag set that
// Parse reads is built from it, and README.md's configuration table is
// checked against it.
package config

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// Config is the server's configuration. Its zero value is not the
// defaults: Parse(nil, an empty environment) is.
type Config struct {
	// Addr is the listen address (-addr).
	Addr string
	// Upstream is the base URL of the Sure server, as
	// restclient.ParseBaseURL canonicalises it (a trailing /api/v1
	// dropped); empty serves the built-in demo upstream (-upstream).
	Upstream string
	// UpstreamTimeout bounds one upstream request (-upstream-timeout).
	UpstreamTimeout time.Duration
	// MaxUpstreamCalls caps the upstream calls of one operation, 0 for no
	// cap (-max-upstream-calls).
	MaxUpstreamCalls int
	// CacheTTL is facade.Config's: 0 (unset) serves GET answers by the
	// freshness rule, a duration caps its windows, facade.CacheOff turns
	// the cache off (-cache-ttl 0).
	CacheTTL time.Duration
	// StaleMax is facade.Config's: how long past their freshness answers
	// are held to answer stale; facade.StaleOff for none (-stale-max 0).
	StaleMax time.Duration
	// CacheBytes bounds the in-process answer cache's memory
	// (-cache-bytes).
	CacheBytes int
	// OperationTimeout is the deadline of one GraphQL request
	// (-operation-timeout).
	OperationTimeout time.Duration
	// CORSOrigins are the origins whose pages may call /graphql from a
	// browser, or "*" for any; empty turns CORS off (-cors-origins).
	CORSOrigins []string
	// CORSHeaders are request headers those pages may send besides
	// gqlhttp.DefaultCORSHeaders (-cors-headers).
	CORSHeaders []string
	// MaxDepth bounds the nesting of fields in an operation (-max-depth).
	MaxDepth int
	// MaxResponseBytes caps the data of one answer (-max-response-bytes).
	MaxResponseBytes int
	// MaxBatch bounds the operations of one batched POST; 1 turns
	// batching off (-max-batch).
	MaxBatch int
	// MaxSubscriptionsPerKey and MaxSubscriptions bound the subscriptions
	// open at once, of one API key and in all
	// (-max-subscriptions-per-key, -max-subscriptions).
	MaxSubscriptionsPerKey, MaxSubscriptions int
	// MaxWebSockets bounds the WebSockets open at once (-max-websockets).
	MaxWebSockets int
	// MaxWebSocketsPerAddress bounds those of one client address; -1
	// (the flag's 0) for no bound (-max-websockets-per-address).
	MaxWebSocketsPerAddress int
	// WebSocketIdleTimeout closes a WebSocket holding no operation this
	// long; -1 (the flag's 0) never (-websocket-idle-timeout).
	WebSocketIdleTimeout time.Duration
	// MetricsAddr serves GET /metrics on a listener of its own; empty
	// serves it on the main listener (-metrics-addr).
	MetricsAddr string
	// RedisURL is the Redis shared by the replicas; empty keeps the state
	// in this process (-redis-url).
	RedisURL string
	// RedisSecret names and seals what is stored in Redis; at least
	// redisstate.MinSecretBytes when RedisURL is set (-redis-secret).
	RedisSecret string
	// PersistedDocuments is the manifest file of trusted documents
	// (-persisted-documents); empty holds none.
	PersistedDocuments string
	// RefuseArbitraryDocuments runs only the manifest's documents: the
	// off switch of -allow-arbitrary-documents.
	RefuseArbitraryDocuments bool
	// RedisTimeout bounds one round trip to Redis (-redis-timeout).
	RedisTimeout time.Duration
	// ShutdownDelay is how long the server keeps serving after SIGTERM,
	// /readyz answering 503 meanwhile, before it drains (-shutdown-delay).
	ShutdownDelay time.Duration
	// NewKeyCalls is facade.Config's: the upstream calls a second with
	// keys not accepted yet; facade.NewKeyCallsOff for no bound
	// (-new-key-calls 0).
	NewKeyCalls int
	// TraceBaggage sends the caller's baggage header upstream
	// (-trace-baggage).
	TraceBaggage bool
	// DisablePlayground and DisableIntrospection are the off switches of
	// -playground and -introspection, so that the zero value serves both.
	DisablePlayground    bool
	DisableIntrospection bool
	// LogFormat is "text" or "json" (-log-format).
	LogFormat string
	// LogLevel is the least level logged (-log-level).
	LogLevel slog.Level
	// ShowVersion asks for the version to be printed, and nothing else
	// done (-version). When it is set, no other field is read.
	ShowVersion bool
}

// Flag is a row of the table of flags.
type Flag struct {
	// Name is the flag's name, without its dash.
	Name string
	// Env is the environment variable the flag defaults to; empty for
	// -version alone.
	Env string
	// Default is the value when neither the flag nor its variable is set,
	// as the flag is given ("10s", "true"); empty for none.
	Default string
	// Usage is the flag's help text; it names Env as "(env NAME)".
	Usage string

	// parse checks a setting's value and stores it in the Config; toggle
	// stores a switch's. A flag has one of the two.
	parse  func(c *Config, value string) error
	toggle func(c *Config, on bool)
}

// Flags returns the table of the server's flags, in the order of
// README.md's configuration table, -version first.
func Flags() []Flag { return append([]Flag(nil), flags...) }

// Parse reads the configuration from args (the command line without the
// program's name) and the environment getenv reads, and checks it.
// Failures to parse the command line are also printed to standard error,
// with the usage, as package flag does.
func Parse(args []string, getenv func(string) string) (Config, error) {
	fs := flag.NewFlagSet("suregql", flag.ContinueOnError)
	values, err := define(fs, getenv)
	if err != nil {
		return Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	var cfg Config
	for i, f := range flags {
		if f.toggle != nil {
			f.toggle(&cfg, *values[i].on)
		} else if err := f.parse(&cfg, *values[i].text); err != nil {
			return Config{}, err
		}
		if cfg.ShowVersion {
			// -version, the table's first row: nothing else is read.
			return Config{ShowVersion: true}, nil
		}
	}
	if err := checkRedis(cfg); err != nil {
		return Config{}, err
	}
	if cfg.RefuseArbitraryDocuments && cfg.PersistedDocuments == "" {
		return Config{}, errors.New("-allow-arbitrary-documents=false needs -persisted-documents / PERSISTED_DOCUMENTS: without a manifest no document could run")
	}
	return cfg, nil
}

// value is where the flag set stores a flag's value: text for a setting,
// on for a switch.
type value struct {
	text *string
	on   *bool
}

// define defines the table's flags on fs, each defaulting to its variable's
// value when set (getenv), else to its Default. A switch's variable must
// be a boolean.
func define(fs *flag.FlagSet, getenv func(string) string) ([]value, error) {
	values := make([]value, len(flags))
	for i, f := range flags {
		def := f.Default
		if v := getenvOf(getenv, f.Env); v != "" {
			def = v
		}
		if f.toggle == nil {
			values[i].text = fs.String(f.Name, def, f.Usage)
			continue
		}
		on, err := strconv.ParseBool(def)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a boolean", f.Env, def)
		}
		values[i].on = fs.Bool(f.Name, on, f.Usage)
	}
	return values, nil
}

// getenvOf returns the variable's value; a flag without one (-version)
// reads nothing.
func getenvOf(getenv func(string) string, name string) string {
	if name == "" {
		return ""
	}
	return getenv(name)
}
