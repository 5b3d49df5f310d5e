package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"

	"github.com/suregql/suregql/internal/limits/badinput"
	"github.com/suregql/suregql/internal/state/callerkey"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/suregql/suregql/internal/planning/live"
	"github.com/suregql/suregql/internal/planning/paging"
	"github.com/suregql/suregql/internal/planning/planner"
	"github.com/suregql/suregql/restclient"
)

// Error codes of extensions.code. They are part of the public contract.
const (
	CodeUnauthenticated     = "UNAUTHENTICATED"
	CodeForbidden           = "FORBIDDEN"
	CodeNotFound            = "NOT_FOUND"
	CodeRateLimited         = "RATE_LIMITED"
	CodeUpstreamUnavailable = "UPSTREAM_UNAVAILABLE"
	CodeBadUserInput        = "BAD_USER_INPUT"
	CodeUpstreamRejected    = "UPSTREAM_REJECTED"
	CodeInternal            = "INTERNAL"
	CodeQueryTooExpensive   = "QUERY_TOO_EXPENSIVE"
	CodeBadRequest          = "BAD_REQUEST"
	// CodeUpstreamOutcomeUnknown: a write was sent but its answer was lost;
	// it may have been applied. Never retried blindly.
	CodeUpstreamOutcomeUnknown = "UPSTREAM_OUTCOME_UNKNOWN"
	// CodeCursorStale: a cursor's item left the list and its place could
	// not be found; the client pages again from the start.
	CodeCursorStale = "CURSOR_STALE"
	// CodeUnsupportedByUpstream: the Sure server's version cannot answer
	// the field (a feature it removed, or an endpoint it does not have
	// yet). Not worth retrying against the same server.
	CodeUnsupportedByUpstream = "UNSUPPORTED_BY_UPSTREAM"
)

// Codes of refusals by package facade, before any resolver runs: by its
// HTTP layer (the method, the media type) or by an operation middleware.
const (
	CodeMethodNotAllowed      = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE"
	CodeIntrospectionDisabled = "INTROSPECTION_DISABLED"
	// CodeSubscriptionLimitExceeded: a subscription past the key's or the
	// server's limit (extensions.limit: perKey or total), refused before
	// any call.
	CodeSubscriptionLimitExceeded = live.CodeLimitExceeded
)

// ErrorPresenter returns the presenter that maps errors to GraphQL errors
// with a stable extensions.code. Messages never carry upstream URLs, bodies
// or keys; anything unexpected is logged and answered as INTERNAL.
func ErrorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var existing *gqlerror.Error
		if errors.As(err, &existing) && existing.Extensions["code"] != nil && errors.Unwrap(existing) == nil {
			return gqlErr // already presented (validation, parsing, our own)
		}
		// gqlgen wraps resolver errors in a *gqlerror.Error whose text
		// carries the field path; present the cause, with its own message.
		cause := err
		if errors.As(err, &existing) && errors.Unwrap(existing) != nil {
			cause = errors.Unwrap(existing)
		}
		msg, ext := present(cause)
		if ext == nil {
			// Validation and parse errors of gqlgen keep their own code.
			if gqlErr.Extensions["code"] != nil {
				return gqlErr
			}
			// gqlgen's own request errors (an undecodable body, a missing
			// operation) wrap no cause: they are the caller's to fix.
			if errors.As(err, &existing) && errors.Unwrap(existing) == nil {
				if gqlErr.Extensions == nil {
					gqlErr.Extensions = map[string]any{}
				}
				gqlErr.Extensions["code"] = CodeBadRequest
				return gqlErr
			}
			log.ErrorContext(ctx, "unexpected resolver error", "path", gqlErr.Path.String(), "err", err)
			msg, ext = "internal error", map[string]any{"code": CodeInternal}
		}
		gqlErr.Message = msg
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		for k, v := range ext {
			gqlErr.Extensions[k] = v
		}
		return gqlErr
	}
}

// present returns the public message and extensions of err, or a nil map
// when err is not one of ours.
func present(err error) (string, map[string]any) {
	var (
		bad     *badinput.Error
		rl      *restclient.RateLimitError
		api     *restclient.APIError
		unavail *restclient.UnavailableError
		nf      *planner.NotFoundError
		tooMuch *planner.TooExpensiveError
		unknown *planner.OutcomeUnknownError
		stale   *paging.StaleCursorError
		unsup   *planner.UnsupportedError
		subs    *live.LimitError
		newKey  *planner.NewKeyLimitError
	)
	switch {
	case errors.As(err, &subs):
		return subs.Error(), map[string]any{"code": CodeSubscriptionLimitExceeded, "limit": subs.Limit, "max": subs.Max}
	case errors.Is(err, live.ErrDraining):
		return err.Error(), map[string]any{"code": CodeUpstreamUnavailable, "reason": "shuttingDown"}
	case errors.As(err, &unsup):
		return unsup.Error(), code(CodeUnsupportedByUpstream)
	case errors.As(err, &unknown):
		return unknown.Error(), map[string]any{"code": CodeUpstreamOutcomeUnknown, "checked": unknown.Checked}
	case errors.As(err, &tooMuch):
		ext := map[string]any{
			"code": CodeQueryTooExpensive, "budget": tooMuch.Budget, "planned": tooMuch.Planned, "spent": tooMuch.Spent,
		}
		if tooMuch.Reserved > 0 {
			ext["reserved"] = tooMuch.Reserved // held for other fields' batches
		}
		return tooMuch.Error(), ext
	case errors.As(err, &nf):
		return err.Error(), code(CodeNotFound)
	case errors.Is(err, callerkey.ErrNoAPIKey), errors.Is(err, callerkey.ErrBadAPIKey), errors.Is(err, planner.ErrKeyRejected):
		return err.Error(), code(CodeUnauthenticated)
	case errors.As(err, &bad):
		return bad.Error(), map[string]any{"code": CodeBadUserInput, "argument": bad.Arg}
	case errors.As(err, &newKey):
		return newKey.Error(), map[string]any{"code": CodeRateLimited, "retryAfter": newKey.RetrySeconds(), "reason": "newKeys"}
	case errors.As(err, &rl):
		secs := int(math.Ceil(rl.RetryAfter.Seconds()))
		return fmt.Sprintf("the Sure API rate limit for this key is exhausted; retry in %d seconds", secs),
			map[string]any{"code": CodeRateLimited, "retryAfter": secs}
	case errors.As(err, &api):
		return presentAPIError(api)
	case errors.As(err, &unavail):
		return presentUnavailable(unavail)
	case errors.Is(err, context.DeadlineExceeded):
		return "the operation ran out of time before the Sure server answered", map[string]any{"code": CodeUpstreamUnavailable, "reason": "timeout"}
	case errors.Is(err, context.Canceled):
		// The client went away while a field waited (for a call another
		// request shares, say); nobody reads this, and it is no bug to log.
		return "the request was canceled before the Sure server answered",
			map[string]any{"code": CodeUpstreamUnavailable, "reason": "canceled"}
	case errors.As(err, &stale):
		return stale.Error(), map[string]any{"code": CodeCursorStale, "argument": stale.Arg}
	case errors.Is(err, paging.ErrIncomplete):
		return "the Sure server's pages did not add up (the list changed while it was read); try again", code(CodeUpstreamUnavailable)
	}
	return "", nil
}

// unavailableMessages say, per reason, what happened and what to check,
// without the upstream's address (callers must not learn internal hosts).
var unavailableMessages = map[string]string{
	restclient.ReasonTimeout:           "the Sure server did not answer in time; try again later",
	restclient.ReasonConnectionRefused: "the Sure server refused the connection: it is down, or the facade's upstream URL names the wrong port",
	restclient.ReasonDNS:               "the Sure server's host name does not resolve: check the facade's upstream URL",
	restclient.ReasonTLS:               "the TLS handshake with the Sure server failed: check its certificate and the facade's upstream URL",
	restclient.ReasonConnectionLost:    "the connection to the Sure server broke before it answered; try again later",
	restclient.ReasonUnreachable:       "the Sure server could not be reached; try again later",
	restclient.ReasonBadGateway:        "a proxy in front of the Sure server answered %d; try again later",
	restclient.ReasonServerError:       "the Sure server failed (status %d); try again later",
	restclient.ReasonNotSure:           "the upstream answered, but not as the Sure API does (status %d): check that the facade's upstream URL names a Sure server",
	restclient.ReasonCircuitOpen:       "the Sure server failed the last calls: the facade does not call it until a probe finds it back (within seconds); try again later",
}

func presentUnavailable(unavail *restclient.UnavailableError) (string, map[string]any) {
	reason := unavail.Reason()
	ext := map[string]any{"code": CodeUpstreamUnavailable, "reason": reason}
	msg := unavailableMessages[reason]
	if unavail.Status != 0 {
		ext["status"] = unavail.Status
		msg = fmt.Sprintf(msg, unavail.Status)
	}
	return msg, ext
}

func presentAPIError(api *restclient.APIError) (string, map[string]any) {
	switch api.StatusCode {
	case http.StatusUnauthorized:
		return "the Sure server rejected the API key (invalid, expired or revoked)", code(CodeUnauthenticated)
	case http.StatusForbidden:
		msg := "the API key may not do this"
		switch api.Code {
		case "insufficient_scope":
			msg = "this API key is read-only; the action needs the write scope"
		case "feature_disabled":
			msg = "AI features are not enabled for this user"
		}
		return msg, map[string]any{"code": CodeForbidden, "upstreamError": api.Code}
	case http.StatusNotFound:
		return "not found", code(CodeNotFound)
	}
	return fmt.Sprintf("the Sure server rejected the request (status %d)", api.StatusCode),
		map[string]any{"code": CodeUpstreamRejected, "status": api.StatusCode}
}

func code(c string) map[string]any { return map[string]any{"code": c} }
