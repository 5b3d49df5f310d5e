package restclienttest

import (
	"net/http"
	"strconv"
	"time"
)

// Unlimited is the limit that, given to SetRateLimit, makes a key's server
// self-hosted: no limit. (Any negative limit is read the same way.)
const Unlimited = -1

// rateWindowSeconds is the upstream's window: one clock hour, aligned on the
// Unix epoch (so on UTC hours), like ApiRateLimiter's Redis key.
const rateWindowSeconds = 3600

// rateWindow counts one key's requests within the window starting at start
// (Unix seconds).
type rateWindow struct {
	start int64
	count int
}

// rateState is the outcome of one request against its key's window.
type rateState struct {
	allowed   bool
	unlimited bool // a self-hosted server: nothing is counted, nothing refused
	limit     int
	count     int // requests counted in the window, this one included if allowed
	reset     int // seconds until the window ends, 1..3600
}

// hitRateLimit counts a request of key at now against limit. Like the upstream,
// a request over the limit is refused without being counted, so a 429 reports
// "current" equal to the limit.
func hitRateLimit(windows map[string]*rateWindow, key string, limit int, now time.Time) rateState {
	if limit < 0 {
		// Self-hosted Sure runs a no-op limiter: no window to count in.
		return rateState{allowed: true, unlimited: true}
	}
	unix := now.Unix()
	start := unix - mod(unix, rateWindowSeconds)
	w := windows[key]
	if w == nil || w.start != start {
		w = &rateWindow{start: start}
		windows[key] = w
	}
	st := rateState{limit: limit, reset: int(start + rateWindowSeconds - unix)}
	if w.count < limit {
		w.count++
		st.allowed = true
	}
	st.count = w.count
	return st
}

// mod is a floored modulo, so that clocks before 1970 still land in the right
// window.
func mod(a, b int64) int64 {
	if m := a % b; m < 0 {
		return m + b
	}
	return a % b
}

// setHeaders adds the headers every authenticated upstream answer carries.
func (st rateState) setHeaders(h http.Header) {
	if st.unlimited {
		// What a self-hosted server sends (UPSTREAM.md, "Rate limits of
		// self-hosted servers"): Ruby's Float::INFINITY, printed.
		h.Set("X-RateLimit-Limit", "Infinity")
		h.Set("X-RateLimit-Remaining", "Infinity")
		h.Set("X-RateLimit-Reset", "0")
		return
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(st.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(st.limit-st.count, 0)))
	h.Set("X-RateLimit-Reset", strconv.Itoa(st.reset))
}

// tooManyRequests is the upstream's 429.
func (st rateState) tooManyRequests() response {
	type details struct {
		Limit          int `json:"limit"`
		Current        int `json:"current"`
		ResetInSeconds int `json:"reset_in_seconds"`
	}
	resp := jsonResponse(http.StatusTooManyRequests, errorBody{
		Error:   "rate_limit_exceeded",
		Message: "Rate limit exceeded. Try again in " + strconv.Itoa(st.reset) + " seconds.",
		Details: details{Limit: st.limit, Current: st.count, ResetInSeconds: st.reset},
	})
	resp.header.Set("Retry-After", strconv.Itoa(st.reset))
	return resp
}
