package facade

import (
	"net/http"
	"net/http/httptest"
)

// HandlerTransport is an http.RoundTripper that answers with Handler in
// this process, without a network: the upstream of the benchmarks, and of
// tests whose synctest bubble must hold the upstream too.
type HandlerTransport struct{ Handler http.Handler }

func (t HandlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.Handler.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		// As a network transport: a request whose context ended (the
		// client's timeout, a deadline) has no answer, whatever the
		// handler wrote meanwhile.
		return nil, err
	}
	return rec.Result(), nil
}
