package redisstate_test

import "github.com/suregql/suregql/internal/state/callerkey"

// testRing keys the tests' callers, as the edge's ring keys a request's.
var testRing = callerkey.NewRing(nil, false)

// keyOf is what the stores know apiKey by.
func keyOf(apiKey string) callerkey.Key { return testRing.Key(apiKey) }
