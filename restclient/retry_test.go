package restclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// answer is one canned upstream answer.
type answer struct {
	status      int
	contentType string // default application/json
	header      http.Header
	body        string
}

var (
	answer503 = answer{status: 503, contentType: "text/html", body: proxyHTML}
	answer200 = answer{status: 200, body: categoryJSON}
)

// sequence answers the i-th request with answers[i], repeating the last.
func sequence(answers ...answer) http.HandlerFunc {
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		a := answers[min(int(n.Add(1))-1, len(answers)-1)]
		for k, v := range a.header {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", cmpOr(a.contentType, "application/json"))
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}
}

// flakyTransport fails its first failures round trips as a broken
// connection would, then hands requests to next.
type flakyTransport struct {
	failures atomic.Int32
	next     http.RoundTripper
}

func (f *flakyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.failures.Add(-1) >= 0 {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("read tcp: connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

// callLog is an Observer that keeps every call.
type callLog struct {
	mu    sync.Mutex
	calls []Call
}

func (l *callLog) observe(_ context.Context, c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *callLog) all() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// doers call one endpoint of each method; the answers of sequence suit
// all of them (a chat decodes from the category fixture too).
var doers = map[string]func(ctx context.Context, c *Client) error{
	http.MethodGet: func(ctx context.Context, c *Client) error { _, err := c.GetCategory(ctx, catID); return err },
	http.MethodPost: func(ctx context.Context, c *Client) error {
		_, err := c.CreateChat(ctx, CreateChatRequest{Title: "t"})
		return err
	},
	http.MethodPatch: func(ctx context.Context, c *Client) error { _, err := c.UpdateChat(ctx, chatID, "t"); return err },
}

func TestClient_Retries(t *testing.T) {
	once := RetryPolicy{MaxRetries: 1}
	tests := []struct {
		name              string
		method            string
		policy            RetryPolicy
		answers           []answer
		transportFailures int32
		wantRequests      int // that reached the server
		wantAttempts      int // that the observer saw
		wantErr           bool
		wantStatus        int // of the final *UnavailableError
	}{
		{name: "GET 503 then 200", method: "GET", policy: once, answers: []answer{answer503, answer200}, wantRequests: 2, wantAttempts: 2},
		{name: "GET 502 then 200", method: "GET", policy: once, answers: []answer{{status: 502, contentType: "text/html", body: proxyHTML}, answer200}, wantRequests: 2, wantAttempts: 2},
		{name: "GET 504 then 200", method: "GET", policy: once, answers: []answer{{status: 504, contentType: "text/html", body: proxyHTML}, answer200}, wantRequests: 2, wantAttempts: 2},
		{name: "GET 503 twice, one retry", method: "GET", policy: once, answers: []answer{answer503, answer503, answer200}, wantRequests: 2, wantAttempts: 2, wantErr: true, wantStatus: 503},
		{name: "GET 503 thrice, two retries", method: "GET", policy: RetryPolicy{MaxRetries: 2}, answers: []answer{answer503}, wantRequests: 3, wantAttempts: 3, wantErr: true, wantStatus: 503},
		{name: "GET 503, no retries", method: "GET", policy: RetryPolicy{}, answers: []answer{answer503, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 503},
		{name: "GET 503, negative retries", method: "GET", policy: RetryPolicy{MaxRetries: -3}, answers: []answer{answer503, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 503},
		{name: "GET 500 is not retried", method: "GET", policy: once, answers: []answer{{status: 500, body: `{"error":"internal_server_error"}`}, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 500},
		{name: "GET 429 is not retried", method: "GET", policy: once, answers: []answer{{status: 429, header: http.Header{"Retry-After": {"1"}}, body: `{"error":"rate_limit_exceeded"}`}, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true},
		{name: "GET 404 is not retried", method: "GET", policy: once, answers: []answer{{status: 404, body: `{"error":"not_found"}`}, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true},
		{name: "GET 200 HTML is not retried", method: "GET", policy: once, answers: []answer{{status: 200, contentType: "text/html", body: "<html></html>"}, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 200},
		{name: "GET transport error then 200", method: "GET", policy: once, answers: []answer{answer200}, transportFailures: 1, wantRequests: 1, wantAttempts: 2},
		{name: "GET transport errors only", method: "GET", policy: once, answers: []answer{answer200}, transportFailures: 5, wantRequests: 0, wantAttempts: 2, wantErr: true, wantStatus: 0},
		{name: "POST 503 is not retried", method: "POST", policy: once, answers: []answer{answer503, {status: 201, body: chatJSON}}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 503},
		{name: "PATCH 503 is not retried", method: "PATCH", policy: once, answers: []answer{answer503, answer200}, wantRequests: 1, wantAttempts: 1, wantErr: true, wantStatus: 503},
		{name: "POST transport error is not retried", method: "POST", policy: once, answers: []answer{{status: 201, body: chatJSON}}, transportFailures: 1, wantRequests: 0, wantAttempts: 1, wantErr: true, wantStatus: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, sequence(tt.answers...))
			tr := &flakyTransport{next: u.srv.Client().Transport}
			tr.failures.Store(tt.transportFailures)
			log := &callLog{}
			c := u.client(t, WithRetryPolicy(tt.policy), WithHTTPClient(&http.Client{Transport: tr})).WithObserver(log.observe)

			err := doers[tt.method](t.Context(), c)

			if n := u.count(); n != tt.wantRequests {
				t.Errorf("requests = %d, want %d", n, tt.wantRequests)
			}
			if n := len(log.all()); n != tt.wantAttempts {
				t.Errorf("observed attempts = %d, want %d", n, tt.wantAttempts)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("error = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("error = nil, want one")
			}
			var ue *UnavailableError
			if errors.As(err, &ue) && ue.Status != tt.wantStatus {
				t.Errorf("UnavailableError.Status = %d, want %d", ue.Status, tt.wantStatus)
			}
		})
	}
}

// TestClient_RetryBackoff checks the waits between attempts on a fake clock:
// each wait is jittered between half and all of a backoff that doubles
// after each retry, and no wait starts that the deadline would cut short.
func TestClient_RetryBackoff(t *testing.T) {
	tests := []struct {
		name     string
		policy   RetryPolicy
		timeout  time.Duration   // 0: none
		gaps     []time.Duration // nominal waits before each retry
		attempts int             // attempts expected, when the deadline decides (0: len(gaps)+1)
	}{
		{name: "default policy", policy: DefaultRetryPolicy, gaps: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}},
		{
			name: "doubling", policy: RetryPolicy{MaxRetries: 3, Backoff: 100 * time.Millisecond},
			gaps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		},
		{name: "no backoff", policy: RetryPolicy{MaxRetries: 2}, gaps: []time.Duration{0, 0}},
		{
			// 1 s, then 2 s would both pass a 900 ms deadline: one attempt.
			name: "deadline shorter than the backoff", policy: RetryPolicy{MaxRetries: 5, Backoff: 2 * time.Second}, timeout: 900 * time.Millisecond,
			attempts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var attempts []time.Duration
				rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					attempts = append(attempts, time.Since(start))
					return &http.Response{
						StatusCode: http.StatusServiceUnavailable,
						Header:     http.Header{"Content-Type": {"text/html"}},
						Body:       io.NopCloser(strings.NewReader(proxyHTML)),
						Request:    r,
					}, nil
				})
				c, err := New("https://sure.example.com/sure", WithHTTPClient(&http.Client{Transport: rt}), WithRetryPolicy(tt.policy))
				if err != nil {
					t.Fatalf("New error: %v", err)
				}
				ctx := t.Context()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				_, err = c.WithAPIKey(testKey).GetCategory(ctx, catID)
				var ue *UnavailableError
				if !errors.As(err, &ue) || ue.Status != http.StatusServiceUnavailable {
					t.Errorf("error = %v, want the last *UnavailableError (status 503)", err)
				}
				want := tt.attempts
				if want == 0 {
					want = len(tt.gaps) + 1
				}
				if len(attempts) != want {
					t.Fatalf("attempts at %v, want %d attempts", attempts, want)
				}
				for i := 1; i < len(attempts); i++ {
					gap, nominal := attempts[i]-attempts[i-1], tt.gaps[i-1]
					if gap < nominal/2 || gap > nominal {
						t.Errorf("wait before retry %d = %s, want between %s and %s", i, gap, nominal/2, nominal)
					}
				}
				if tt.timeout > 0 && time.Since(start) >= tt.timeout {
					t.Errorf("returned after %s, at or past the deadline %s: it waited for nothing", time.Since(start), tt.timeout)
				}
			})
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClient_Observer(t *testing.T) {
	rateHeaders := func(remaining, reset string) http.Header {
		return http.Header{"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {remaining}, "X-Ratelimit-Reset": {reset}}
	}
	tests := []struct {
		name              string
		answers           []answer
		transportFailures int32
		call              func(ctx context.Context, c *Client) error
		want              []Call
		wantErrs          []string // type of each Call.Err, "" for nil
	}{
		{
			name: "GET retried after 503",
			answers: []answer{
				{status: 503, contentType: "text/html", header: rateHeaders("10", "1200"), body: proxyHTML},
				{status: 200, header: rateHeaders("9", "1199"), body: `{"categories":[],"pagination":{"page":2,"per_page":10,"total_count":3,"total_pages":1}}`},
			},
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListCategories(ctx, ListCategoriesOptions{Page: 2, PerPage: 10})
				return err
			},
			want: []Call{
				{Method: "GET", Path: "/categories?page=2&per_page=10", Endpoint: "GET /api/v1/categories", Status: 503, RateLimit: &RateLimit{Limit: 100, Remaining: 10, Reset: 1200 * time.Second, ResetAt: fixedNow.Add(1200 * time.Second)}},
				{Method: "GET", Path: "/categories?page=2&per_page=10", Endpoint: "GET /api/v1/categories", Attempt: 1, Status: 200, RateLimit: &RateLimit{Limit: 100, Remaining: 9, Reset: 1199 * time.Second, ResetAt: fixedNow.Add(1199 * time.Second)}},
			},
			wantErrs: []string{"*restclient.UnavailableError", ""},
		},
		{
			name:              "transport error has no status",
			answers:           []answer{{status: 200, body: categoryJSON}},
			transportFailures: 1,
			call:              doers[http.MethodGet],
			want: []Call{
				{Method: "GET", Path: "/categories/" + catID, Endpoint: "GET /api/v1/categories/{id}"},
				{Method: "GET", Path: "/categories/" + catID, Endpoint: "GET /api/v1/categories/{id}", Attempt: 1, Status: 200},
			},
			wantErrs: []string{"*restclient.UnavailableError", ""},
		},
		{
			name:    "POST answered 422",
			answers: []answer{{status: 422, header: rateHeaders("0", "5"), body: `{"error":"Failed to create chat","details":["Title can't be blank"]}`}},
			call:    doers[http.MethodPost],
			want: []Call{
				{Method: "POST", Path: "/chats", Endpoint: "POST /api/v1/chats", Status: 422, RateLimit: &RateLimit{Limit: 100, Remaining: 0, Reset: 5 * time.Second, ResetAt: fixedNow.Add(5 * time.Second)}},
			},
			wantErrs: []string{"*restclient.APIError"},
		},
		{
			name:    "429",
			answers: []answer{{status: 429, header: rateHeaders("0", "30"), body: `{"error":"rate_limit_exceeded"}`}},
			call:    doers[http.MethodGet],
			want: []Call{
				{Method: "GET", Path: "/categories/" + catID, Endpoint: "GET /api/v1/categories/{id}", Status: 429, RateLimit: &RateLimit{Limit: 100, Remaining: 0, Reset: 30 * time.Second, ResetAt: fixedNow.Add(30 * time.Second)}},
			},
			wantErrs: []string{"*restclient.RateLimitError"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, sequence(tt.answers...))
			tr := &flakyTransport{next: u.srv.Client().Transport}
			tr.failures.Store(tt.transportFailures)
			log := &callLog{}
			c := u.client(t, WithClock(fixedClock), WithRetryPolicy(RetryPolicy{MaxRetries: 1}), WithHTTPClient(&http.Client{Transport: tr})).
				WithObserver(log.observe)
			_ = tt.call(t.Context(), c)
			got := log.all()
			if len(got) != len(tt.want) {
				t.Fatalf("observed %d calls %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				errType := ""
				if got[i].Err != nil {
					errType = reflect.TypeOf(got[i].Err).String()
				}
				if errType != tt.wantErrs[i] {
					t.Errorf("call %d Err = %v (%s), want type %q", i, got[i].Err, errType, tt.wantErrs[i])
				}
				got[i].Err = nil
				got[i].Duration = 0 // measured, not compared
				if !reflect.DeepEqual(got[i], tt.want[i]) {
					t.Errorf("call %d = %+v (rate limit %+v), want %+v (rate limit %+v)", i, got[i], got[i].RateLimit, tt.want[i], tt.want[i].RateLimit)
				}
			}
		})
	}
}

func TestClient_ContextCanceled(t *testing.T) {
	retrying := WithRetryPolicy(RetryPolicy{MaxRetries: 3})

	t.Run("before the call", func(t *testing.T) {
		u := newUpstream(t, refuse(t))
		log := &callLog{}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := u.client(t, retrying).WithObserver(log.observe).GetCategory(ctx, catID)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want one wrapping context.Canceled", err)
		}
		if n := len(log.all()); n != 1 {
			t.Errorf("observed attempts = %d, want 1 (no retry once the context is done)", n)
		}
	})

	t.Run("while waiting for the answer", func(t *testing.T) {
		entered := make(chan struct{})
		release := make(chan struct{})
		var enteredOnce sync.Once
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			enteredOnce.Do(func() { close(entered) })
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		t.Cleanup(func() { close(release) }) // runs before the server closes
		log := &callLog{}
		c := u.client(t, retrying).WithObserver(log.observe)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := c.GetCategory(ctx, catID)
			done <- err
		}()
		<-entered
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want one wrapping context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("GetCategory did not return within 10s of its context being cancelled")
		}
		if n := len(log.all()); n != 1 {
			t.Errorf("observed attempts = %d, want 1", n)
		}
		if n := u.count(); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})

	t.Run("during the backoff", func(t *testing.T) {
		u := newUpstream(t, sequence(answer503, answer200))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// The observer cancels as soon as the first attempt failed: the
		// hour-long backoff must end at once.
		c := u.client(t, WithRetryPolicy(RetryPolicy{MaxRetries: 1, Backoff: time.Hour})).
			WithObserver(func(context.Context, Call) { cancel() })
		done := make(chan error, 1)
		go func() {
			_, err := c.GetCategory(ctx, catID)
			done <- err
		}()
		select {
		case err := <-done:
			var ue *UnavailableError
			if !errors.As(err, &ue) || ue.Status != http.StatusServiceUnavailable {
				t.Errorf("error = %v, want the 503 *UnavailableError", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("GetCategory did not return within 10s of its context being cancelled during the backoff")
		}
		if n := u.count(); n != 1 {
			t.Errorf("requests = %d, want 1", n)
		}
	})
}

// TestClient_RetriesTruncatedAnswer: a connection that breaks while the
// body of a GET is read is a transport error, which the policy retries.
func TestClient_RetriesTruncatedAnswer(t *testing.T) {
	var n atomic.Int32
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "4096")
			_, _ = io.WriteString(w, categoryJSON[:20]) // the server then drops the connection
			return
		}
		reply(w, http.StatusOK, categoryJSON)
	})
	_, err := u.client(t, WithRetryPolicy(RetryPolicy{MaxRetries: 1})).GetCategory(t.Context(), catID)
	if err != nil {
		t.Errorf("GetCategory error = %v, want nil after one retry", err)
	}
	if got := u.count(); got != 2 {
		t.Errorf("requests = %d, want 2", got)
	}
}

// TestClient_RedirectKeepsKey: the API key must never reach another host.
// net/http strips only Authorization and cookies on a cross-host redirect;
// X-Api-Key is copied to wherever the Location points.
func TestClient_RedirectKeepsKey(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("X-Api-Key"))
		reply(w, http.StatusOK, categoryJSON)
	}))
	t.Cleanup(other.Close)
	// Another host name for the same loopback interface.
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/elsewhere"
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	_, _ = u.client(t).GetCategory(t.Context(), catID)
	if got, _ := leaked.Load().(string); got != "" {
		t.Errorf("redirect target on another host received X-Api-Key %q, want no key", got)
	}
}

// TestClient_UndecodableAnswerKeepsStatus: an answer arrived, so the error
// should carry its status (Status 0 is documented as "no answer arrived").
func TestClient_UndecodableAnswerKeepsStatus(t *testing.T) {
	u := newUpstream(t, sequence(answer{status: 200, body: `{"id": [1, 2`}))
	_, err := u.client(t).GetCategory(t.Context(), catID)
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("error = %T %v, want *UnavailableError", err, err)
	}
	if ue.Status != http.StatusOK {
		t.Errorf("UnavailableError.Status = %d, want 200", ue.Status)
	}
}

// TestClient_CallPathUnderEscapedBase: Call.Path is documented as the path
// and query "without the base URL", also when the base path needs escaping.
func TestClient_CallPathUnderEscapedBase(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, categoryJSON)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL + "/my sure")
	if err != nil {
		t.Fatalf("New error: %v", err)
	}
	log := &callLog{}
	if _, err := c.WithAPIKey(testKey).WithObserver(log.observe).GetCategory(t.Context(), catID); err != nil {
		t.Fatalf("GetCategory error: %v", err)
	}
	calls := log.all()
	if want := "/categories/" + catID; len(calls) != 1 || calls[0].Path != want {
		t.Errorf("observed calls = %+v, want one with Path %q", calls, want)
	}
}
