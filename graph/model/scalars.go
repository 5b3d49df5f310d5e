package model

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// JSON is a free-form JSON value (the JSON scalar), kept as the raw bytes the
// upstream sent so that numbers and key order survive unchanged.
type JSON json.RawMessage

// MarshalGQL writes the value as it is; empty means null.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL accepts any GraphQL input value and stores it as JSON.
func (j *JSON) UnmarshalGQL(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON scalar: %w", err)
	}
	*j = b
	return nil
}

// MarshalDateTime writes a DateTime: RFC 3339 in UTC, whatever zone the
// upstream sent (Rails sends the app's zone when it is not UTC), with
// fractional seconds only when present.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	if t.IsZero() {
		return graphql.Null
	}
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(time.RFC3339Nano)))
	})
}

// UnmarshalDateTime reads an RFC 3339 DateTime input.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("DateTime must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("DateTime must be an RFC 3339 string: %w", err)
	}
	return t.UTC(), nil
}

// maxSafeInt is 2^53−1, the largest integer every JSON reader holds
// exactly (a JavaScript number).
const maxSafeInt = 1<<53 - 1

// MarshalSafeInt writes a SafeInt: a JSON number in ±(2^53−1), as
// graphql-scalars' SafeInt (minor units of money outgrow GraphQL's Int).
func MarshalSafeInt(n int64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.FormatInt(n, 10))
	})
}

// UnmarshalSafeInt reads a SafeInt input: an integer in ±(2^53−1).
func UnmarshalSafeInt(v any) (int64, error) {
	n, err := graphql.UnmarshalInt64(v)
	if err != nil {
		return 0, fmt.Errorf("SafeInt must be an integer: %w", err)
	}
	if n > maxSafeInt || n < -maxSafeInt {
		return 0, fmt.Errorf("SafeInt must be within ±(2^53−1), got %d", n)
	}
	return n, nil
}
