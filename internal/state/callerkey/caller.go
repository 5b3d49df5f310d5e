package callerkey

import "errors"

// ErrNoAPIKey is a Caller's error when the request carried no X-Api-Key.
var ErrNoAPIKey = errors.New("no API key: send your Sure API key in the X-Api-Key header")

// ErrBadAPIKey is a Caller's error when X-Api-Key is not a plausible key
// (too long, or characters no header may carry).
var ErrBadAPIKey = errors.New("the X-Api-Key header is not a valid API key")

// maxKeyLen bounds accepted API keys; Sure's keys are 64 hex characters.
const maxKeyLen = 512

// Caller is the caller of one request, made once, at the HTTP edge, from
// its X-Api-Key header, and handed as a value to everything below: the raw
// key goes to the upstream request and nowhere else (APIKey), every store
// and map knows the caller by Key, and Err says why the key cannot be used.
type Caller struct {
	apiKey string
	// Key is what the stores know the caller by: a keyed hash of its API
	// key (and, on a ring that encrypts, a cipher derived from it).
	Key Key
	// Err is ErrNoAPIKey or ErrBadAPIKey when the caller cannot be passed
	// upstream; Key is then the zero Key.
	Err error
}

// Caller returns the caller whose X-Api-Key header is apiKey. It costs
// what Key costs: call it once per request.
func (r *Ring) Caller(apiKey string) Caller {
	if err := checkKey(apiKey); err != nil {
		return Caller{Err: err}
	}
	return Caller{apiKey: apiKey, Key: r.Key(apiKey)}
}

// APIKey returns the key to send upstream ("" when Err is set). Nothing
// but the upstream request may hold it.
func (c Caller) APIKey() string { return c.apiKey }

func checkKey(key string) error {
	if key == "" {
		return ErrNoAPIKey
	}
	if len(key) > maxKeyLen {
		return ErrBadAPIKey
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return ErrBadAPIKey
		}
	}
	return nil
}
