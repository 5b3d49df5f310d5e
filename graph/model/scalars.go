package model

import (
	"encoding/json"
	"fmt"
	"io"
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
