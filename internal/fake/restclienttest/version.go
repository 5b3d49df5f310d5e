package restclienttest

import "github.com/suregql/suregql/restclient/resource"

// Version is the Sure release line the fake plays.
type Version int

// The versions the fake plays.
const (
	Today  Version = iota // v0.7.1 and later: the default
	Legacy                // before v0.6.6 (late 2025): the shape UPSTREAM.md's first sections describe
)

// String names the version, for test names.
func (v Version) String() string {
	switch v {
	case Today:
		return "today"
	case Legacy:
		return "legacy"
	}
	return "unknown"
}

// Option configures a Server built by New.
type Option func(*Server)

// WithVersion makes the fake play the given release line (Today by default).
func WithVersion(v Version) Option {
	return func(s *Server) { s.version = v }
}

// WithUnlimited makes every key unlimited, as on a self-hosted server (the
// usual way to run Sure): no rate limit at all. Keys added later with AddKey
// copy their model's limit, so they are unlimited too; SetRateLimit can
// still give one key a finite limit.
func WithUnlimited() Option {
	return func(s *Server) {
		for _, k := range s.keys {
			k.limit = Unlimited
		}
	}
}

// Version reports the release line the fake plays.
func (s *Server) Version() Version { return s.version }

// sure is the Sure release the line plays, for what a description says a
// version added: Legacy is v0.6.5, Today the newest (v0.7.4).
func (v Version) sure() resource.Version {
	if v == Legacy {
		return "v0.6.5"
	}
	return "v0.7.4"
}

// has reports whether the release line serves what Sure added in since.
func (v Version) has(since resource.Version) bool { return !v.sure().Before(since) }

// hasTodayEndpoints reports whether the release line serves the endpoints
// that came after Legacy (POST /categories, GET /imports): Legacy answers
// those with a routing 404.
func (v Version) hasTodayEndpoints() bool { return v == Today }
