package restclienttest

import (
	"net/http"
	"strings"
)

// route dispatches an authenticated request within its rate limit. Unknown
// routes (including a known path with another method) answer 404, after
// authentication and rate limiting, so they count.
func (s *Server) route(c *call) response {
	method := c.req.Method
	if method == http.MethodHead {
		method = http.MethodGet // Rails routes HEAD to the GET action
	}
	// Rails ignores one trailing slash.
	rest, ok := strings.CutPrefix(strings.TrimSuffix(c.req.URL.Path, "/"), "/api/v1/")
	if !ok {
		return routeNotFound()
	}
	segs := strings.Split(rest, "/")
	for _, seg := range segs {
		if seg == "" {
			return routeNotFound()
		}
	}
	resource, segs := segs[0], segs[1:]
	switch {
	case resource == "categories" && method == http.MethodGet && len(segs) == 0:
		return s.listCategories(c)
	case resource == "categories" && method == http.MethodGet && len(segs) == 1:
		c.id = segs[0]
		return s.showCategory(c)
	case resource == "imports" && method == http.MethodGet && len(segs) == 1:
		c.id = segs[0]
		return s.showImport(c)
	case resource == "chats":
		return s.routeChats(c, method, segs)
	}
	return routeNotFound()
}

// routeChats dispatches the chat endpoints, which check, in this order, that
// the user's AI features are on and (for writes) that the key has the write
// scope: a read-only key of a user without AI gets feature_disabled.
func (s *Server) routeChats(c *call, method string, segs []string) response {
	var endpoint func(*call) response
	write := false
	switch {
	case len(segs) == 0 && method == http.MethodGet:
		endpoint = s.listChats
	case len(segs) == 0 && method == http.MethodPost:
		endpoint, write = s.createChat, true
	case len(segs) == 1 && method == http.MethodGet:
		endpoint = s.showChat
	case len(segs) == 1 && (method == http.MethodPatch || method == http.MethodPut):
		// Rails' resources route PUT to update as well as PATCH.
		endpoint, write = s.updateChat, true
	default:
		return routeNotFound()
	}
	if len(segs) == 1 {
		c.id = segs[0]
	}
	if !c.key.user.aiEnabled {
		return featureDisabled()
	}
	if write && !c.key.canWrite() {
		return insufficientScope()
	}
	return endpoint(c)
}
