package config

import (
	"flag"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suregql/suregql/internal/facade"
)

func TestParse(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Config
		wantErr bool
		// zeroDelay: the row expects a shutdown delay of 0, not the default.
		zeroDelay bool
	}{
		{name: "defaults", want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second}},
		{name: "environment", env: map[string]string{"ADDR": ":9", "UPSTREAM_URL": "https://sure.example.com", "UPSTREAM_TIMEOUT": "3s", "MAX_UPSTREAM_CALLS": "7", "CACHE_TTL": "30s",
			"OPERATION_TIMEOUT": "5s"},
			want: Config{Addr: ":9", Upstream: "https://sure.example.com", UpstreamTimeout: 3 * time.Second, MaxUpstreamCalls: 7, CacheTTL: 30 * time.Second,
				OperationTimeout: 5 * time.Second}},
		{name: "flags win over the environment", args: []string{"-addr", ":7", "-max-upstream-calls", "0", "-cache-ttl", "1m", "-operation-timeout", "2s"},
			env:  map[string]string{"ADDR": ":9", "MAX_UPSTREAM_CALLS": "7", "OPERATION_TIMEOUT": "5s"},
			want: Config{Addr: ":7", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 0, CacheTTL: time.Minute, OperationTimeout: 2 * time.Second}},
		{name: "limits from the environment", env: map[string]string{"MAX_DEPTH": "20", "MAX_RESPONSE_BYTES": "1000"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MaxDepth: 20, MaxResponseBytes: 1000}},
		{name: "limits from flags", args: []string{"-max-depth", "8", "-max-response-bytes", "65536"}, env: map[string]string{"MAX_DEPTH": "20"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MaxDepth: 8, MaxResponseBytes: 65536}},
		{name: "batch size from a flag", args: []string{"-max-batch", "3"}, env: map[string]string{"MAX_BATCH": "20"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MaxBatch: 3}},
		{name: "batch size from the environment", env: map[string]string{"MAX_BATCH": "1"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MaxBatch: 1}},
		{name: "zero batch size", args: []string{"-max-batch", "0"}, wantErr: true},
		{name: "zero depth", args: []string{"-max-depth", "0"}, wantErr: true},
		{name: "bad response cap", env: map[string]string{"MAX_RESPONSE_BYTES": "4MiB"}, wantErr: true},
		{name: "bad timeout", args: []string{"-upstream-timeout", "soon"}, wantErr: true},
		{name: "negative budget", env: map[string]string{"MAX_UPSTREAM_CALLS": "-1"}, wantErr: true},
		{name: "bad cache TTL", args: []string{"-cache-ttl", "forever"}, wantErr: true},
		{name: "cache off, stale answers off", args: []string{"-cache-ttl", "0"}, env: map[string]string{"STALE_MAX": "0"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				CacheTTL: facade.CacheOff, StaleMax: facade.StaleOff}},
		{name: "stale answers for a day", args: []string{"-stale-max", "24h"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, StaleMax: 24 * time.Hour}},
		{name: "negative stale max", env: map[string]string{"STALE_MAX": "-1m"}, wantErr: true},
		{name: "cache bytes", args: []string{"-cache-bytes", "16777216"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, CacheBytes: 16 << 20}},
		{name: "cache bytes below a MiB", env: map[string]string{"CACHE_BYTES": "1000"}, wantErr: true},
		{name: "new key calls", args: []string{"-new-key-calls", "500"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, NewKeyCalls: 500}},
		{name: "new key calls unbounded", env: map[string]string{"NEW_KEY_CALLS": "0"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, NewKeyCalls: facade.NewKeyCallsOff}},
		{name: "negative new key calls", args: []string{"-new-key-calls", "-5"}, wantErr: true},
		{name: "baggage forwarded", env: map[string]string{"TRACE_BAGGAGE": "true"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, TraceBaggage: true}},
		{name: "CORS origins", args: []string{"-cors-origins", " https://app.example.com, http://localhost:3000 "},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				CORSOrigins: []string{"https://app.example.com", "http://localhost:3000"}}},
		{name: "CORS for any origin from the environment", env: map[string]string{"CORS_ORIGINS": "*"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				CORSOrigins: []string{"*"}}},
		{name: "CORS origin with a path", args: []string{"-cors-origins", "https://app.example.com/"}, wantErr: true},
		{name: "CORS origin without a scheme", args: []string{"-cors-origins", "app.example.com"}, wantErr: true},
		{name: "CORS origin with a wildcard", env: map[string]string{"CORS_ORIGINS": "https://*.example.com"}, wantErr: true},
		{name: "CORS headers", env: map[string]string{"CORS_HEADERS": " x-client-version, X-Tenant "},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				CORSHeaders: []string{"x-client-version", "X-Tenant"}}},
		{name: "CORS header that is no header name", args: []string{"-cors-headers", "x-ok, x bad"}, wantErr: true},
		{name: "CORS header wildcard", args: []string{"-cors-headers", "*"}, wantErr: true},
		{name: "production switches", args: []string{"-playground=false", "-introspection=false"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				DisablePlayground: true, DisableIntrospection: true}},
		{name: "production switches from the environment", env: map[string]string{"PLAYGROUND": "false", "INTROSPECTION": "0"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				DisablePlayground: true, DisableIntrospection: true}},
		{name: "a switch flag wins over the environment", args: []string{"-playground"}, env: map[string]string{"PLAYGROUND": "false"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second}},
		{name: "bad switch", env: map[string]string{"INTROSPECTION": "maybe"}, wantErr: true},
		{name: "metrics listener", env: map[string]string{"METRICS_ADDR": ":9090"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MetricsAddr: ":9090"}},
		{name: "metrics listener from a flag", args: []string{"-metrics-addr", "127.0.0.1:9091"}, env: map[string]string{"METRICS_ADDR": ":9090"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second, MetricsAddr: "127.0.0.1:9091"}},
		{name: "zero operation timeout", args: []string{"-operation-timeout", "0"}, wantErr: true},
		{name: "bad operation timeout", env: map[string]string{"OPERATION_TIMEOUT": "soon"}, wantErr: true},
		{name: "the API root as upstream", args: []string{"-upstream", "https://sure.example.com/api/v1/"},
			want: Config{Addr: ":8080", Upstream: "https://sure.example.com", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second}},
		{name: "an upstream under a path", env: map[string]string{"UPSTREAM_URL": "http://10.0.0.7:3000/sure/api/v1"},
			want: Config{Addr: ":8080", Upstream: "http://10.0.0.7:3000/sure", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second}},
		{name: "an upstream without a scheme", env: map[string]string{"UPSTREAM_URL": "sure.example.com"}, wantErr: true},
		{name: "an upstream of another scheme", args: []string{"-upstream", "ftp://sure.example.com"}, wantErr: true},
		{name: "an upstream with a password", args: []string{"-upstream", "https://me:secret@sure.example.com"}, wantErr: true},
		{name: "an unparsable upstream", args: []string{"-upstream", "http://sure.example.com:port"}, wantErr: true},
		{name: "an endpoint as upstream", args: []string{"-upstream", "https://sure.example.com/api/v1/categories"}, wantErr: true},
		{name: "JSON logs from the environment", env: map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "debug"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				LogFormat: "json", LogLevel: slog.LevelDebug}},
		{name: "log flags win over the environment", args: []string{"-log-format", "TEXT", "-log-level", "warn"}, env: map[string]string{"LOG_FORMAT": "json", "LOG_LEVEL": "debug"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				LogFormat: "text", LogLevel: slog.LevelWarn}},
		{name: "bad log format", env: map[string]string{"LOG_FORMAT": "logfmt"}, wantErr: true},
		{name: "bad log level", args: []string{"-log-level", "verbose"}, wantErr: true},
		{name: "version", args: []string{"-version"}, want: Config{ShowVersion: true}},
		{name: "redis from the environment", env: map[string]string{"REDIS_URL": "rediss://app:pw@redis.internal:6380/2", "REDIS_SECRET": "0123456789abcdef"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				RedisURL: "rediss://app:pw@redis.internal:6380/2", RedisSecret: "0123456789abcdef"}},
		{name: "redis without a secret", args: []string{"-redis-url", "redis://127.0.0.1:6379"}, wantErr: true},
		{name: "redis with a short secret", args: []string{"-redis-url", "redis://127.0.0.1:6379", "-redis-secret", "short"}, wantErr: true},
		{name: "redis of another scheme", args: []string{"-redis-url", "http://127.0.0.1:6379", "-redis-secret", "0123456789abcdef"}, wantErr: true},
		{name: "trusted documents from the environment", env: map[string]string{"PERSISTED_DOCUMENTS": "/etc/suregql/persisted-documents.json", "ALLOW_ARBITRARY_DOCUMENTS": "false"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				PersistedDocuments: "/etc/suregql/persisted-documents.json", RefuseArbitraryDocuments: true}},
		{name: "a manifest, arbitrary documents allowed", args: []string{"-persisted-documents", "m.json"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				PersistedDocuments: "m.json"}},
		{name: "arbitrary documents refused without a manifest", args: []string{"-allow-arbitrary-documents=false"}, wantErr: true},
		{name: "shutdown delay and redis timeout", args: []string{"-shutdown-delay", "0"}, env: map[string]string{"REDIS_TIMEOUT": "2s"}, zeroDelay: true,
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				RedisTimeout: 2 * time.Second}},
		{name: "a negative shutdown delay", env: map[string]string{"SHUTDOWN_DELAY": "-1s"}, wantErr: true},
		{name: "a redis timeout of 0", args: []string{"-redis-timeout", "0"}, wantErr: true},
		{name: "WebSocket limits", args: []string{"-max-websockets", "50", "-websocket-idle-timeout", "0"}, env: map[string]string{"MAX_WEBSOCKETS_PER_ADDRESS": "0"},
			want: Config{Addr: ":8080", UpstreamTimeout: 10 * time.Second, MaxUpstreamCalls: 100, OperationTimeout: 15 * time.Second,
				MaxWebSockets: 50, MaxWebSocketsPerAddress: -1, WebSocketIdleTimeout: -1}},
		{name: "zero WebSockets", args: []string{"-max-websockets", "0"}, wantErr: true},
		{name: "a negative per-address bound", args: []string{"-max-websockets-per-address", "-1"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.args, env(tc.env))
			// A row that leaves the limits out expects their defaults.
			if tc.want.MaxDepth == 0 {
				tc.want.MaxDepth = 12
			}
			if tc.want.MaxResponseBytes == 0 {
				tc.want.MaxResponseBytes = 4 << 20
			}
			if tc.want.MaxBatch == 0 {
				tc.want.MaxBatch = 10
			}
			if tc.want.MaxSubscriptionsPerKey == 0 {
				tc.want.MaxSubscriptionsPerKey = 10
			}
			if tc.want.MaxSubscriptions == 0 {
				tc.want.MaxSubscriptions = 1000
			}
			if tc.want.MaxWebSockets == 0 {
				tc.want.MaxWebSockets = 1000
			}
			if tc.want.MaxWebSocketsPerAddress == 0 {
				tc.want.MaxWebSocketsPerAddress = 64
			}
			if tc.want.WebSocketIdleTimeout == 0 {
				tc.want.WebSocketIdleTimeout = 30 * time.Second
			}
			if tc.want.LogFormat == "" {
				tc.want.LogFormat = "text"
			}
			if tc.want.RedisTimeout == 0 {
				tc.want.RedisTimeout = 100 * time.Millisecond
			}
			if tc.want.ShutdownDelay == 0 && !tc.zeroDelay {
				tc.want.ShutdownDelay = 5 * time.Second
			}
			if tc.want.StaleMax == 0 {
				tc.want.StaleMax = time.Hour
			}
			if tc.want.CacheBytes == 0 {
				tc.want.CacheBytes = 64 << 20
			}
			if tc.want.NewKeyCalls == 0 {
				tc.want.NewKeyCalls = 150
			}
			if tc.want.ShowVersion {
				// Nothing else is read: the server only prints its version.
				tc.want = Config{ShowVersion: true}
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error: %t", err, tc.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("config = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A wrong upstream URL is refused at start in one line that names the
// flag and its variable, in words rather than a Go parse error, and

func noEnv(string) string { return "" }

// Every flag of the table is defined once, and each but -version names
// its variable in its usage as "(env NAME)"; Parse reads those variables
// and no other.
func TestFlags_NameTheirVariables(t *testing.T) {
	read := map[string]bool{}
	if _, err := Parse(nil, func(name string) string { read[name] = true; return "" }); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	usageEnv := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`)
	for _, f := range Flags() {
		if names[f.Name] {
			t.Errorf("-%s: twice in the table", f.Name)
		}
		names[f.Name] = true
		if (f.parse == nil) == (f.toggle == nil) {
			t.Errorf("-%s: want exactly one of parse and toggle", f.Name)
		}
		m := usageEnv.FindStringSubmatch(f.Usage)
		switch {
		case f.Env == "" && f.Name != "version":
			t.Errorf("-%s has no variable: only -version, a command, has none", f.Name)
		case f.Env == "" && m != nil:
			t.Errorf("-%s has no variable, but its usage names %s", f.Name, m[1])
		case f.Env == "":
		case m == nil || m[1] != f.Env || len(usageEnv.FindAllString(f.Usage, -1)) != 1:
			t.Errorf("-%s: its usage %q does not name its variable as \"(env %s)\"", f.Name, f.Usage, f.Env)
		case !read[f.Env]:
			t.Errorf("-%s: its variable %s is never read", f.Name, f.Env)
		}
		delete(read, f.Env)
	}
	for name := range read {
		t.Errorf("Parse reads %s, which no flag names", name)
	}
}

// The table's defaults are the ones Parse applies: each flag given its
// default on the command line yields the configuration of no flag at all.
// And a flag wins over its variable: given with its default, the variable
// (a value the flag would refuse, where it has one) is not read.
func TestFlags_DefaultsAndFlagsWin(t *testing.T) {
	defaults, err := Parse(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Flags() {
		if f.Env == "" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			envValue := "not a value of -" + f.Name
			if f.toggle != nil {
				// A switch's variable must be a boolean whatever the flag.
				def, _ := strconv.ParseBool(f.Default)
				envValue = strconv.FormatBool(!def)
			}
			got, err := Parse([]string{"-" + f.Name + "=" + f.Default}, func(k string) string {
				if k == f.Env {
					return envValue
				}
				return ""
			})
			if err != nil {
				t.Fatalf("-%s=%s with %s=%q: %v", f.Name, f.Default, f.Env, envValue, err)
			}
			if !reflect.DeepEqual(got, defaults) {
				t.Errorf("-%s=%s with %s=%q: config = %+v, want the defaults %+v", f.Name, f.Default, f.Env, envValue, got, defaults)
			}
		})
	}
}

// A switch's variable that is no boolean is refused, naming it; a switch
// flag's value, by package flag.
func TestParse_SwitchErrors(t *testing.T) {
	_, err := Parse(nil, func(k string) string {
		if k == "PLAYGROUND" {
			return "maybe"
		}
		return ""
	})
	if err == nil || err.Error() != `PLAYGROUND "maybe" is not a boolean` {
		t.Errorf("PLAYGROUND=maybe: error %v", err)
	}
	fs := flag.NewFlagSet("suregql", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := define(fs, noEnv); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"-introspection=maybe"}); err == nil || !strings.Contains(err.Error(), "-introspection") {
		t.Errorf("-introspection=maybe: error %v", err)
	}
}
