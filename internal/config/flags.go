package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/suregql/suregql/internal/edge/gqlhttp"
	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/planning/live"
	"github.com/suregql/suregql/internal/state/redisstate"
	"github.com/suregql/suregql/restclient"
)

// flags is the table of the server's flags: README.md's configuration
// table lists the same rows, in this order, with these defaults.
var flags = []Flag{
	{
		Name: "version", Default: "false",
		Usage:  "print the version of this build and exit",
		toggle: func(c *Config, on bool) { c.ShowVersion = on },
	},
	{
		Name: "upstream", Env: "UPSTREAM_URL",
		Usage: "base URL of the Sure server, e.g. https://sure.example.com (env UPSTREAM_URL); empty serves the built-in demo upstream",
		parse: parseUpstream,
	},
	{
		Name: "addr", Env: "ADDR", Default: ":8080",
		Usage: "listen address (env ADDR)",
		parse: text(func(c *Config) *string { return &c.Addr }),
	},
	{
		Name: "log-format", Env: "LOG_FORMAT", Default: "text",
		Usage: "log format: text or json, one line per record (env LOG_FORMAT)",
		parse: parseLogFormat,
	},
	{
		Name: "log-level", Env: "LOG_LEVEL", Default: "info",
		Usage: "least level logged: debug, info, warn or error (env LOG_LEVEL)",
		parse: parseLogLevel,
	},
	{
		Name: "upstream-timeout", Env: "UPSTREAM_TIMEOUT", Default: "10s",
		Usage: "timeout of one upstream request (env UPSTREAM_TIMEOUT)",
		parse: duration("upstream timeout", true, func(c *Config) *time.Duration { return &c.UpstreamTimeout }),
	},
	{
		Name: "max-upstream-calls", Env: "MAX_UPSTREAM_CALLS", Default: strconv.Itoa(facade.DefaultMaxUpstreamCalls),
		Usage: "upstream calls allowed per GraphQL operation, 0 for no cap (env MAX_UPSTREAM_CALLS)",
		parse: integer("max upstream calls", 0, func(c *Config) *int { return &c.MaxUpstreamCalls }),
	},
	{
		Name: "cache-ttl", Env: "CACHE_TTL",
		Usage: "unset: serve GET answers per API key by the freshness rule (README, Freshness); a duration such as 30s caps every window of it; 0 turns the cache off (env CACHE_TTL)",
		parse: offOrDuration("cache TTL", facade.CacheOff, func(c *Config) *time.Duration { return &c.CacheTTL }),
	},
	{
		Name: "stale-max", Env: "STALE_MAX", Default: "1h",
		Usage: "hold answers this long past their freshness, to answer (marked stale) when the key is out of quota or the upstream is unavailable; 0 turns it off (env STALE_MAX)",
		parse: offOrDuration("stale max", facade.StaleOff, func(c *Config) *time.Duration { return &c.StaleMax }),
	},
	{
		Name: "cache-bytes", Env: "CACHE_BYTES", Default: strconv.Itoa(facade.DefaultCacheBytes),
		Usage: "memory the answer cache of this process may take, in bytes (an estimate: each answer's body and its decoded values); past it the key holding the most gives up its least recently used answers first, so no key's reads push out another's (env CACHE_BYTES)",
		parse: integer("cache bytes", 1<<20, func(c *Config) *int { return &c.CacheBytes }),
	},
	{
		Name: "cors-origins", Env: "CORS_ORIGINS",
		Usage: "comma-separated origins whose pages may call /graphql from a browser, e.g. https://app.example.com, or * for any; empty turns CORS off (env CORS_ORIGINS)",
		parse: parseOrigins,
	},
	{
		Name: "cors-headers", Env: "CORS_HEADERS",
		Usage: "comma-separated request headers pages of -cors-origins may send besides the default ones (Content-Type, X-Api-Key, X-Request-Id, traceparent, tracestate, baggage, sentry-trace, apollographql-client-name, apollographql-client-version, apollo-require-preflight), e.g. x-client-version (env CORS_HEADERS)",
		parse: parseHeaderNames,
	},
	{
		Name: "playground", Env: "PLAYGROUND", Default: "true",
		Usage:  "serve the GraphiQL playground at / (env PLAYGROUND); -playground=false for production",
		toggle: func(c *Config, on bool) { c.DisablePlayground = !on },
	},
	{
		Name: "introspection", Env: "INTROSPECTION", Default: "true",
		Usage:  "answer __schema and __type (env INTROSPECTION); the playground needs it; -introspection=false hides the schema",
		toggle: func(c *Config, on bool) { c.DisableIntrospection = !on },
	},
	{
		Name: "operation-timeout", Env: "OPERATION_TIMEOUT", Default: facade.DefaultOperationTimeout.String(),
		Usage: "deadline of one GraphQL request: fields not answered by then fail with UPSTREAM_UNAVAILABLE (env OPERATION_TIMEOUT)",
		parse: duration("operation timeout", true, func(c *Config) *time.Duration { return &c.OperationTimeout }),
	},
	{
		Name: "max-depth", Env: "MAX_DEPTH", Default: strconv.Itoa(facade.DefaultMaxDepth),
		Usage: "deepest nesting of fields allowed in an operation (env MAX_DEPTH)",
		parse: integer("max depth", 1, func(c *Config) *int { return &c.MaxDepth }),
	},
	{
		Name: "max-response-bytes", Env: "MAX_RESPONSE_BYTES", Default: strconv.Itoa(facade.DefaultMaxResponseBytes),
		Usage: "largest data of one answer, in bytes; larger answers are refused with RESPONSE_TOO_LARGE (env MAX_RESPONSE_BYTES)",
		parse: integer("max response bytes", 1, func(c *Config) *int { return &c.MaxResponseBytes }),
	},
	{
		Name: "max-batch", Env: "MAX_BATCH", Default: strconv.Itoa(facade.DefaultMaxBatch),
		Usage: "most operations of one batched POST (a JSON array of requests); 1 turns batching off (env MAX_BATCH)",
		parse: integer("max batch", 1, func(c *Config) *int { return &c.MaxBatch }),
	},
	{
		Name: "max-subscriptions-per-key", Env: "MAX_SUBSCRIPTIONS_PER_KEY", Default: strconv.Itoa(live.DefaultMaxPerKey),
		Usage: "most subscriptions one API key may have open at once, over every connection; more are refused with SUBSCRIPTION_LIMIT_EXCEEDED (env MAX_SUBSCRIPTIONS_PER_KEY)",
		parse: integer("max subscriptions per key", 1, func(c *Config) *int { return &c.MaxSubscriptionsPerKey }),
	},
	{
		Name: "max-subscriptions", Env: "MAX_SUBSCRIPTIONS", Default: strconv.Itoa(live.DefaultMaxTotal),
		Usage: "most subscriptions the server keeps open at once, over every key; more are refused with SUBSCRIPTION_LIMIT_EXCEEDED (env MAX_SUBSCRIPTIONS)",
		parse: integer("max subscriptions", 1, func(c *Config) *int { return &c.MaxSubscriptions }),
	},
	{
		Name: "max-websockets", Env: "MAX_WEBSOCKETS", Default: strconv.Itoa(gqlhttp.DefaultMaxWebSockets),
		Usage: "most WebSocket connections the server keeps open at once; one more is refused with 503 CONNECTION_LIMIT_EXCEEDED before the upgrade (env MAX_WEBSOCKETS)",
		parse: integer("max websockets", 1, func(c *Config) *int { return &c.MaxWebSockets }),
	},
	{
		Name: "max-websockets-per-address", Env: "MAX_WEBSOCKETS_PER_ADDRESS", Default: strconv.Itoa(gqlhttp.DefaultMaxWebSocketsPerAddress),
		Usage: "most WebSocket connections one client address (an IPv6 /64) may have open at once; one more is refused with 429 CONNECTION_LIMIT_EXCEEDED; 0 for no bound, behind a reverse proxy whose address every client has (env MAX_WEBSOCKETS_PER_ADDRESS)",
		parse: offOrInteger("max websockets per address", -1, func(c *Config) *int { return &c.MaxWebSocketsPerAddress }),
	},
	{
		Name: "websocket-idle-timeout", Env: "WEBSOCKET_IDLE_TIMEOUT", Default: gqlhttp.DefaultWebSocketIdleTimeout.String(),
		Usage: "close a WebSocket that holds no subscription (nor other operation) this long; 0 never (env WEBSOCKET_IDLE_TIMEOUT)",
		parse: offOrDuration("websocket idle timeout", -1, func(c *Config) *time.Duration { return &c.WebSocketIdleTimeout }),
	},
	{
		Name: "metrics-addr", Env: "METRICS_ADDR",
		Usage: "serve GET /metrics on this address instead of the main listener, e.g. :9090 (env METRICS_ADDR)",
		parse: text(func(c *Config) *string { return &c.MetricsAddr }),
	},
	{
		Name: "redis-url", Env: "REDIS_URL",
		Usage: "Redis shared by the replicas, redis://[user:password@]host:6379[/db] or rediss://… (env REDIS_URL); empty keeps the cache, rate limits and persisted queries in this process",
		parse: parseRedisURL,
	},
	{
		Name: "redis-secret", Env: "REDIS_SECRET",
		Usage: "secret that names and seals what is stored in Redis, the same on every replica, at least 16 bytes; required with -redis-url (env REDIS_SECRET)",
		parse: text(func(c *Config) *string { return &c.RedisSecret }),
	},
	{
		Name: "persisted-documents", Env: "PERSISTED_DOCUMENTS",
		Usage: "JSON manifest of trusted documents, {\"<id>\": \"<document>\"} as relay-compiler's persistConfig or GraphQL Code Generator's persistedDocuments write it; requests may send a documentId instead of a document (env PERSISTED_DOCUMENTS)",
		parse: text(func(c *Config) *string { return &c.PersistedDocuments }),
	},
	{
		Name: "allow-arbitrary-documents", Env: "ALLOW_ARBITRARY_DOCUMENTS", Default: "true",
		Usage:  "run documents sent as text (env ALLOW_ARBITRARY_DOCUMENTS); false runs only the documents of -persisted-documents",
		toggle: func(c *Config, on bool) { c.RefuseArbitraryDocuments = !on },
	},
	{
		Name: "redis-timeout", Env: "REDIS_TIMEOUT", Default: redisstate.DefaultTimeout.String(),
		Usage: "timeout of one round trip to Redis; past it the request goes on without the shared state (env REDIS_TIMEOUT)",
		parse: duration("redis timeout", true, func(c *Config) *time.Duration { return &c.RedisTimeout }),
	},
	{
		Name: "shutdown-delay", Env: "SHUTDOWN_DELAY", Default: "5s",
		Usage: "on SIGTERM, keep serving this long with /readyz answering 503 (so load balancers stop sending) before draining; match the pod's preStop (env SHUTDOWN_DELAY)",
		parse: duration("shutdown delay", false, func(c *Config) *time.Duration { return &c.ShutdownDelay }),
	},
	{
		Name: "new-key-calls", Env: "NEW_KEY_CALLS", Default: strconv.Itoa(facade.DefaultNewKeyCalls),
		Usage: "upstream calls a second this process makes with API keys the Sure server has not accepted yet (new, unknown or random keys), after a burst of 1,000; past it their requests are refused RATE_LIMITED, keys already accepted never; 0 lifts the bound (env NEW_KEY_CALLS)",
		parse: offOrInteger("new key calls", facade.NewKeyCallsOff, func(c *Config) *int { return &c.NewKeyCalls }),
	},
	{
		Name: "trace-baggage", Env: "TRACE_BAGGAGE", Default: "false",
		Usage:  "with tracing on, send the caller's W3C baggage header upstream with the traceparent (env TRACE_BAGGAGE); off, only traceparent and tracestate are sent",
		toggle: func(c *Config, on bool) { c.TraceBaggage = on },
	},
}

// text stores a value as it is.
func text(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, s string) error {
		*field(c) = s
		return nil
	}
}

// duration reads a duration of at least 0, or above 0 when positive; what
// names it in the error.
func duration(what string, positive bool, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, s string) error {
		d, err := time.ParseDuration(s)
		switch {
		case positive && (err != nil || d <= 0):
			return fmt.Errorf("%s %q is not a positive duration", what, s)
		case err != nil || d < 0:
			return fmt.Errorf("%s %q is not a duration", what, s)
		}
		*field(c) = d
		return nil
	}
}

// offOrDuration reads a duration where 0 means off (stored as off) and
// an empty value the default (stored as 0); what names it in the error.
func offOrDuration(what string, off time.Duration, field func(*Config) *time.Duration) func(*Config, string) error {
	read := duration(what, false, field)
	return func(c *Config, s string) error {
		if s == "" {
			*field(c) = 0
			return nil
		}
		if err := read(c, s); err != nil {
			return err
		}
		if *field(c) == 0 {
			*field(c) = off
		}
		return nil
	}
}

// offOrInteger reads a non-negative integer where 0 means off, stored as
// off (-1, say, so that a zero Config keeps its default); what names it in
// the error.
func offOrInteger(what string, off int, field func(*Config) *int) func(*Config, string) error {
	read := integer(what, 0, field)
	return func(c *Config, s string) error {
		if err := read(c, s); err != nil {
			return err
		}
		if *field(c) == 0 {
			*field(c) = off
		}
		return nil
	}
}

// integer reads an integer of at least least (0 or 1); what names it in
// the error.
func integer(what string, least int, field func(*Config) *int) func(*Config, string) error {
	kind := "a positive integer"
	switch {
	case least == 0:
		kind = "a non-negative integer"
	case least > 1:
		kind = "an integer of at least " + strconv.Itoa(least)
	}
	return func(c *Config, s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < least {
			return fmt.Errorf("%s %q is not %s", what, s, kind)
		}
		*field(c) = n
		return nil
	}
}

// parseUpstream reads the upstream's base URL, canonical: the error echoes
// it without its password, query and fragment (which may hold secrets),
// and a value that does not even parse not at all.
func parseUpstream(c *Config, s string) error {
	if s == "" {
		return nil
	}
	u, err := restclient.ParseBaseURL(s)
	if err != nil {
		shown := ""
		if raw, perr := url.Parse(strings.TrimSpace(s)); perr == nil {
			raw.RawQuery, raw.ForceQuery, raw.Fragment, raw.RawFragment = "", false, "", ""
			shown = fmt.Sprintf(" %q", raw.Redacted())
		}
		return fmt.Errorf("-upstream / UPSTREAM_URL%s %w", shown, err)
	}
	c.Upstream = u.String()
	return nil
}

// parseLogFormat reads a log format, text or json, in any case.
func parseLogFormat(c *Config, s string) error {
	switch s = strings.ToLower(s); s {
	case "text", "json":
		c.LogFormat = s
		return nil
	}
	return fmt.Errorf("-log-format / LOG_FORMAT %q is neither text nor json", s)
}

// parseLogLevel reads a log level: debug, info, warn or error.
func parseLogLevel(c *Config, s string) error {
	switch strings.ToLower(s) {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		return fmt.Errorf("-log-level / LOG_LEVEL %q is none of debug, info, warn and error", s)
	}
	return nil
}

// parseOrigins splits a comma-separated list of CORS origins and checks
// each is one a browser could send: a scheme and a host, without the path
// or trailing slash that would make it match nothing, and without wildcards
// (the library would read "https://*.example.com" as a pattern).
func parseOrigins(c *Config, list string) error {
	var origins []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" && !isOrigin(o) {
			return fmt.Errorf("CORS origin %q is neither an origin such as https://app.example.com nor *", o)
		}
		origins = append(origins, o)
	}
	c.CORSOrigins = origins
	return nil
}

// parseHeaderNames splits a comma-separated list of request header names
// pages may send, and checks each is a header name (RFC 9110 token).
func parseHeaderNames(c *Config, list string) error {
	var names []string
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !isToken(n) {
			return fmt.Errorf("-cors-headers / CORS_HEADERS: %q is not a header name", n)
		}
		names = append(names, n)
	}
	c.CORSHeaders = names
	return nil
}

// isToken says whether s is an RFC 9110 token, what a header name is.
func isToken(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return s != "" && s != "*"
}

// isOrigin says whether o is an http or https origin, without wildcards.
func isOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" && !strings.Contains(o, "*")
}

// parseRedisURL reads a Redis URL, one redisstate.Open accepts; it is never
// echoed, since it may hold a password.
func parseRedisURL(c *Config, s string) error {
	if s != "" {
		if err := redisstate.CheckURL(s); err != nil {
			return fmt.Errorf("-redis-url / REDIS_URL: %w", err)
		}
	}
	c.RedisURL = s
	return nil
}

// checkRedis checks what no one flag tells: with a Redis URL, a secret long
// enough.
func checkRedis(c Config) error {
	if c.RedisURL != "" && len(c.RedisSecret) < redisstate.MinSecretBytes {
		return fmt.Errorf("-redis-secret / REDIS_SECRET must be set with -redis-url, at least %d bytes, the same on every replica", redisstate.MinSecretBytes)
	}
	return nil
}
