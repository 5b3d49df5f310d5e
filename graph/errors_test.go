package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/internal/state/callerkey"
	"github.com/suregql/suregql/restclient"
)

// secretKey stands for a caller's API key; upstreamURL for where the
// facade sends requests. Neither may reach a response.
const (
	secretKey   = "sk-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	upstreamURL = "http://sure.internal:3000/api/v1"
)

// presented runs err through the presenter the way gqlgen does for a
// resolver error (graphql.AddError wraps it with the field's path first)
// and returns the one error of the response and what was logged.
func presented(t *testing.T, err error) (*gqlerror.Error, string) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := graphql.WithResponseContext(t.Context(), ErrorPresenter(log), graphql.DefaultRecover)
	ctx = graphql.WithPathContext(ctx, graphql.NewPathWithField("categories"))
	graphql.AddError(ctx, err)
	errs := graphql.GetErrors(ctx)
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
	}
	return errs[0], logs.String()
}

func TestErrorPresenter(t *testing.T) {
	op := "GET " + upstreamURL + "/categories?api_key=" + secretKey
	apiErr := func(status int, code, msg string) *restclient.APIError {
		return &restclient.APIError{Op: op, StatusCode: status, Code: code, Message: msg + " " + secretKey}
	}
	urlErr := &url.Error{Op: "Get", URL: upstreamURL + "/chats", Err: errors.New("dial tcp 10.0.0.7:3000: connection refused")}
	for _, tc := range []struct {
		name    string
		err     error
		wantMsg string // "" checks only that a message is there
		wantExt map[string]any
		wantLog bool
	}{
		{
			name:    "401",
			err:     apiErr(http.StatusUnauthorized, "unauthorized", "Access token or API key is invalid, expired, or missing"),
			wantMsg: "the Sure server rejected the API key (invalid, expired or revoked)",
			wantExt: map[string]any{"code": CodeUnauthenticated},
		},
		{
			name:    "403 insufficient_scope",
			err:     apiErr(http.StatusForbidden, "insufficient_scope", "This action requires the 'write' scope"),
			wantMsg: "this API key is read-only; the action needs the write scope",
			wantExt: map[string]any{"code": CodeForbidden, "upstreamError": "insufficient_scope"},
		},
		{
			name:    "403 feature_disabled",
			err:     apiErr(http.StatusForbidden, "feature_disabled", "AI features are not enabled for this user"),
			wantMsg: "AI features are not enabled for this user",
			wantExt: map[string]any{"code": CodeForbidden, "upstreamError": "feature_disabled"},
		},
		{
			name:    "403 with another code",
			err:     apiErr(http.StatusForbidden, "forbidden", "no"),
			wantMsg: "the API key may not do this",
			wantExt: map[string]any{"code": CodeForbidden, "upstreamError": "forbidden"},
		},
		{
			name:    "404",
			err:     apiErr(http.StatusNotFound, "not_found", "Category not found"),
			wantMsg: "not found",
			wantExt: map[string]any{"code": CodeNotFound},
		},
		{
			name:    "404 named by the planner",
			err:     &planner.NotFoundError{Kind: "category", ID: validID},
			wantMsg: "category " + validID + " not found",
			wantExt: map[string]any{"code": CodeNotFound},
		},
		{
			name:    "422",
			err:     &restclient.APIError{Op: op, StatusCode: http.StatusUnprocessableEntity, Code: "Failed to create chat", Details: []string{"Title can't be blank"}},
			wantMsg: "the Sure server rejected the request (status 422)",
			wantExt: map[string]any{"code": CodeUpstreamRejected, "status": http.StatusUnprocessableEntity},
		},
		{
			name:    "wrapped 401",
			err:     fmt.Errorf("list categories: %w", apiErr(http.StatusUnauthorized, "unauthorized", "")),
			wantMsg: "the Sure server rejected the API key (invalid, expired or revoked)",
			wantExt: map[string]any{"code": CodeUnauthenticated},
		},
		{
			name:    "429, retry after rounded up",
			err:     &restclient.RateLimitError{APIError: *apiErr(http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit exceeded."), RetryAfter: 1500 * time.Millisecond},
			wantMsg: "the Sure API rate limit for this key is exhausted; retry in 2 seconds",
			wantExt: map[string]any{"code": CodeRateLimited, "retryAfter": 2},
		},
		{
			name:    "new keys over their bound, gated",
			err:     &restclient.GateError{Err: &planner.NewKeyLimitError{RetryAfter: 200 * time.Millisecond}},
			wantMsg: "the server is receiving many requests with API keys the Sure server has not accepted yet, and this key is not known here yet; retry in 1 seconds",
			wantExt: map[string]any{"code": CodeRateLimited, "retryAfter": 1, "reason": "newKeys"},
		},
		{
			name:    "429, whole seconds",
			err:     &restclient.RateLimitError{APIError: *apiErr(http.StatusTooManyRequests, "rate_limit_exceeded", ""), RetryAfter: 42 * time.Minute},
			wantMsg: "the Sure API rate limit for this key is exhausted; retry in 2520 seconds",
			wantExt: map[string]any{"code": CodeRateLimited, "retryAfter": 2520},
		},
		{
			name:    "429, just under a second",
			err:     &restclient.RateLimitError{RetryAfter: time.Nanosecond},
			wantMsg: "the Sure API rate limit for this key is exhausted; retry in 1 seconds",
			wantExt: map[string]any{"code": CodeRateLimited, "retryAfter": 1},
		},
		{
			name:    "unreachable upstream",
			err:     &restclient.UnavailableError{Op: op, Err: urlErr},
			wantMsg: "the Sure server could not be reached; try again later",
			wantExt: map[string]any{"code": CodeUpstreamUnavailable, "reason": "unreachable"},
		},
		{
			name:    "proxy 502",
			err:     &restclient.UnavailableError{Op: op, Status: http.StatusBadGateway, Err: errors.New("status 502")},
			wantMsg: "a proxy in front of the Sure server answered 502; try again later",
			wantExt: map[string]any{"code": CodeUpstreamUnavailable, "status": 502, "reason": "bad_gateway"},
		},
		{
			name:    "deadline",
			err:     fmt.Errorf("get %s: %w", upstreamURL, context.DeadlineExceeded),
			wantMsg: "the operation ran out of time before the Sure server answered",
			wantExt: map[string]any{"code": CodeUpstreamUnavailable, "reason": "timeout"},
		},
		{
			name:    "upstream attempt timed out",
			err:     &restclient.UnavailableError{Op: op, Err: fmt.Errorf("get: %w", context.DeadlineExceeded)},
			wantMsg: "the Sure server did not answer in time; try again later",
			wantExt: map[string]any{"code": CodeUpstreamUnavailable, "reason": "timeout"},
		},
		{
			name:    "write whose answer was lost",
			err:     &planner.OutcomeUnknownError{Action: "created", Checked: true},
			wantMsg: "the Sure server did not answer the write, which may still have been applied: the chat may have been created; it was not visible when checked right after. Check the chats before sending it again, or it may be applied twice",
			wantExt: map[string]any{"code": CodeUpstreamOutcomeUnknown, "checked": true},
		},
		{
			name:    "client went away",
			err:     fmt.Errorf("wait for a shared call: %w", context.Canceled),
			wantMsg: "the request was canceled before the Sure server answered",
			wantExt: map[string]any{"code": CodeUpstreamUnavailable, "reason": "canceled"},
		},
		{
			name:    "id that is not a UUID",
			err:     func() error { _, err := canonicalID("parentId", "42"); return err }(),
			wantMsg: `parentId: "42" is not a UUID`,
			wantExt: map[string]any{"code": CodeBadUserInput, "argument": "parentId"},
		},
		{
			name:    "connection argument",
			err:     func() error { _, err := planner.ParseChats(paging.Args{First: ptr(1000)}); return err }(),
			wantMsg: "first: must be at most 100",
			wantExt: map[string]any{"code": CodeBadUserInput, "argument": "first"},
		},
		{
			name:    "cursor",
			err:     func() error { _, err := planner.ParseChats(paging.Args{After: ptr("junk")}); return err }(),
			wantMsg: "after: invalid cursor: unknown format",
			wantExt: map[string]any{"code": CodeBadUserInput, "argument": "after"},
		},
		{
			name: "cursor over 1 KB",
			err: func() error {
				_, err := planner.ParseChats(paging.Args{Before: ptr(strings.Repeat("A", 1025))})
				return err
			}(),
			wantMsg: "before: invalid cursor: longer than 1024 bytes",
			wantExt: map[string]any{"code": CodeBadUserInput, "argument": "before"},
		},
		{
			name:    "cursor whose item cannot be placed",
			err:     fmt.Errorf("load chats: %w", &paging.StaleCursorError{Arg: "after", Reason: "other items share its sort key"}),
			wantMsg: "after: the cursor's item is gone and its place in the list could not be found (other items share its sort key); page again from the start",
			wantExt: map[string]any{"code": CodeCursorStale, "argument": "after"},
		},
		{
			name:    "over the call budget",
			err:     &planner.TooExpensiveError{Budget: 5, Spent: 3, Planned: 7},
			wantMsg: (&planner.TooExpensiveError{Budget: 5, Spent: 3, Planned: 7}).Error(),
			wantExt: map[string]any{"code": CodeQueryTooExpensive, "budget": 5, "planned": 7, "spent": 3},
		},
		{
			name:    "over the call budget, refused by the client's gate",
			err:     &restclient.GateError{Err: &planner.TooExpensiveError{Budget: 2, Spent: 2, Planned: 1}},
			wantMsg: (&planner.TooExpensiveError{Budget: 2, Spent: 2, Planned: 1}).Error(),
			wantExt: map[string]any{"code": CodeQueryTooExpensive, "budget": 2, "planned": 1, "spent": 2},
		},
		{
			name:    "no API key",
			err:     callerkey.ErrNoAPIKey,
			wantMsg: callerkey.ErrNoAPIKey.Error(),
			wantExt: map[string]any{"code": CodeUnauthenticated},
		},
		{
			name:    "unusable API key",
			err:     callerkey.ErrBadAPIKey,
			wantMsg: callerkey.ErrBadAPIKey.Error(),
			wantExt: map[string]any{"code": CodeUnauthenticated},
		},
		{
			name:    "unknown error",
			err:     fmt.Errorf("decode %s with key %s: %w", upstreamURL, secretKey, errors.New("unexpected EOF")),
			wantMsg: "internal error",
			wantExt: map[string]any{"code": CodeInternal},
			wantLog: true,
		},
		{
			name:    "gqlgen error with a code",
			err:     &gqlerror.Error{Message: "Cannot query field \"x\" on type \"Query\".", Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}},
			wantMsg: "Cannot query field \"x\" on type \"Query\".",
			wantExt: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"},
		},
		{
			name:    "gqlgen request error without a code",
			err:     gqlerror.Errorf("operation q not found"),
			wantMsg: "operation q not found",
			wantExt: map[string]any{"code": CodeBadRequest},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, logged := presented(t, tc.err)
			if !reflect.DeepEqual(got.Extensions, tc.wantExt) {
				t.Errorf("extensions = %v, want %v", got.Extensions, tc.wantExt)
			}
			public := got.Message + " " + fmt.Sprint(got.Extensions)
			for _, leak := range []string{"http://", "https://", secretKey, "sure.internal", "restclient:", "10.0.0.7"} {
				if strings.Contains(public, leak) {
					t.Errorf("response %q leaks %q", public, leak)
				}
			}
			if tc.wantLog != (logged != "") {
				t.Errorf("logged %q, want a log line: %t", logged, tc.wantLog)
			}
			if tc.wantLog && !strings.Contains(logged, "unexpected EOF") {
				t.Errorf("log %q lacks the original error", logged)
			}
			if got.Message != tc.wantMsg {
				t.Errorf("message = %q, want %q", got.Message, tc.wantMsg)
			}
		})
	}
}

func TestErrorPresenter_KeepsPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"known error", &restclient.APIError{StatusCode: http.StatusNotFound}},
		{"unknown error", errors.New("boom")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := presented(t, tc.err)
			if p := got.Path.String(); p != "categories" {
				t.Errorf("path = %q, want %q", p, "categories")
			}
		})
	}
}

func TestErrorPresenter_DirectCall(t *testing.T) {
	// The presenter is also called with errors gqlgen did not wrap.
	present := ErrorPresenter(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	for _, tc := range []struct {
		name     string
		err      error
		wantCode string
	}{
		{"rate limited", &restclient.RateLimitError{RetryAfter: time.Second}, CodeRateLimited},
		{"unknown", errors.New(secretKey), CodeInternal},
		{"no key", callerkey.ErrNoAPIKey, CodeUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := present(context.Background(), tc.err)
			if got.Extensions["code"] != tc.wantCode {
				t.Errorf("code = %v, want %s", got.Extensions["code"], tc.wantCode)
			}
			if strings.Contains(got.Message, secretKey) {
				t.Errorf("message %q leaks the key", got.Message)
			}
		})
	}
}
