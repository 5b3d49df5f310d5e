package restclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// probePath is what Probe asks for: the cheapest list of the API.
const probePath = "categories"

// Probe tells whether the base URL names a Sure server that answers,
// without spending any key's quota: it sends one GET
// /api/v1/categories?per_page=1 without X-Api-Key (whatever key c was
// given), with no retry, observer, gate or fetcher. Sure answers such a
// request 401 {"error":"unauthorized",…} and counts it against no key:
// Probe then returns nil.
//
// Any other outcome is an *UnavailableError whose Reason says why: no
// answer (timeout, connection_refused, dns, tls, connection_lost,
// unreachable), a 5xx (bad_gateway, server_error), or an answer that is not
// that 401 (not_sure: a web page, a redirect, a 404, a 200 for anybody).
func (c *Client) Probe(ctx context.Context) error {
	u := c.baseURL.JoinPath(probePath)
	u.RawQuery = url.Values{"per_page": {"1"}}.Encode()
	op := http.MethodGet + " /" + probePath + "?" + u.RawQuery
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("restclient: build %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return &UnavailableError{Op: op, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return &UnavailableError{Op: op, Err: fmt.Errorf("read answer (status %d): %w", resp.StatusCode, err)}
	}
	if resp.StatusCode >= 500 {
		return &UnavailableError{Op: op, Status: resp.StatusCode, Err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	var eb errorBody
	if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(body, &eb) != nil || eb.Error != "unauthorized" {
		return &UnavailableError{Op: op, Status: resp.StatusCode, NotSure: true,
			Err: fmt.Errorf("status %d is not the 401 unauthorized of the Sure API", resp.StatusCode)}
	}
	return nil
}

// ProbeReason returns the Reason of an error of Probe: one of the Reason
// constants, or ReasonUnreachable for an error of another kind.
func ProbeReason(err error) string {
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return ue.Reason()
	}
	return ReasonUnreachable
}
