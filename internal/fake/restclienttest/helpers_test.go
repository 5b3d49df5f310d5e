package restclienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixedNow is the clock of most tests: 20 minutes 42 seconds before the end
// of an hour, after every seeded record.
var fixedNow = at("2026-01-15T10:39:18Z")

// newFixed returns a fresh server playing Today's line, whose clock is
// stopped at fixedNow.
func newFixed() *Server { return newFixedAs(Today) }

// newFixedAs returns a fresh server playing v, whose clock is stopped at
// fixedNow.
func newFixedAs(v Version, opts ...Option) *Server {
	s := New(append([]Option{WithVersion(v)}, opts...)...)
	s.SetClock(func() time.Time { return fixedNow })
	return s
}

// versions are the release lines, for tests that run in both.
var versions = []Version{Today, Legacy}

// clock is a settable clock for tests that move time.
type clock struct{ now time.Time }

func (c *clock) get() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }

// newClocked returns a fresh server playing v whose clock starts at fixedNow
// and moves only when the test advances it.
func newClocked(v Version) (*Server, *clock) {
	c := &clock{now: fixedNow}
	s := New(WithVersion(v))
	s.SetClock(c.get)
	return s, c
}

// option tweaks a request before it is served.
type option func(*http.Request)

// withBody sets a body and its Content-Type ("" sends none).
func withBody(contentType, body string) option {
	return func(r *http.Request) {
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
	}
}

// withAuthorization sends an Authorization header (the upstream then tries
// OAuth first, and fails).
func withAuthorization(value string) option {
	return func(r *http.Request) { r.Header["Authorization"] = []string{value} }
}

// serve runs one request through s; key "" sends no X-Api-Key.
func serve(t *testing.T, s *Server, method, target, key string, opts ...option) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if key != "" {
		r.Header.Set("X-Api-Key", key)
	}
	for _, o := range opts {
		o(r)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	return rec
}

func get(t *testing.T, s *Server, target, key string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(t, s, http.MethodGet, target, key)
}

// decode unmarshals a 2xx JSON answer into T.
func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if rec.Code < 200 || rec.Code > 299 {
		t.Fatalf("status: got %d, want 2xx; body %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	return v
}

// wantStatus fails the test unless rec answered want.
func wantStatus(t *testing.T, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status: got %d, want %d; body %s", rec.Code, want, rec.Body)
	}
}

// wantJSON fails the test unless rec answered status with a JSON body equal
// (as JSON) to body, with the upstream's content type.
func wantJSON(t *testing.T, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	wantStatus(t, rec, status)
	if got := rec.Header().Get("Content-Type"); got != jsonContentType {
		t.Errorf("Content-Type: got %q, want %q", got, jsonContentType)
	}
	var got, want any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("bad expectation %s: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body: got %s, want %s", rec.Body, body)
	}
}

// Response shapes, decoded with the package's own JSON types.
type (
	categoryList struct {
		Categories []categoryJSON `json:"categories"`
		Pagination pagination     `json:"pagination"`
	}
	chatList struct {
		Chats      []chatSummaryJSON `json:"chats"`
		Pagination chatPagination    `json:"pagination"`
	}
	importList struct {
		Data []importItemJSON `json:"data"`
		Meta pageMeta         `json:"meta"`
	}
	importEnvelope struct {
		Data importJSON `json:"data"`
	}
)

// mustCategory looks a seeded category up by name.
func mustCategory(t *testing.T, s *Server, key, name string) Category {
	t.Helper()
	c, ok := s.CategoryByName(key, name)
	if !ok {
		t.Fatalf("no category %q for key %q", name, key)
	}
	return c
}

// mustChat looks a seeded chat up by title.
func mustChat(t *testing.T, s *Server, key, title string) Chat {
	t.Helper()
	for _, c := range s.Chats(key) {
		if c.Title == title {
			return c
		}
	}
	t.Fatalf("no chat %q for key %q", title, key)
	return Chat{}
}

// intp is a pointer to n, for expected JSON values that may be null.
func intp(n int) *int { return &n }

// rawObject decodes a 2xx JSON object answer loosely, to see which keys are
// present.
func rawObject(t *testing.T, rec *httptest.ResponseRecorder) map[string]json.RawMessage {
	t.Helper()
	return decode[map[string]json.RawMessage](t, rec)
}

// wantNoRateHeaders fails the test if rec carries any X-RateLimit-* header.
func wantNoRateHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if got := rec.Header().Get(name); got != "" {
			t.Errorf("%s: got %q, want none", name, got)
		}
	}
}

// equalChatPagination compares a rendered chat pagination with a want whose
// PerPage nil means null.
func equalChatPagination(got, want chatPagination) bool {
	if (got.PerPage == nil) != (want.PerPage == nil) || (got.PerPage != nil && *got.PerPage != *want.PerPage) {
		return false
	}
	got.PerPage, want.PerPage = nil, nil
	return got == want
}

func (p chatPagination) String() string {
	perPage := "null"
	if p.PerPage != nil {
		perPage = strconv.Itoa(*p.PerPage)
	}
	return fmt.Sprintf("{page %d, per_page %s, total_count %d, total_pages %d}", p.Page, perPage, p.TotalCount, p.TotalPages)
}
