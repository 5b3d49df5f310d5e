package restclienttest

import (
	"net/http"
	"strings"
)

// Scopes a write endpoint asks authorize_scope! for. Both need a read_write
// key; they differ only in the refusal's message.
const (
	needWrite     = "write"      // chats and messages controllers
	needReadWrite = "read_write" // categories controller
)

// endpoint is a routed request: its action and the before_actions its
// controller runs first.
type endpoint struct {
	serve func(*call) response
	id    string // the {id} (or {chat_id}) path segment, as sent
	ai    bool   // require_ai_enabled: the chat controllers
	scope string // "" when read is enough, else needWrite or needReadWrite
}

// resolve is Rails' router: it finds the action for a method and path, or
// reports that none matches (a routing error, answered before any
// controller, so before authentication). Which actions exist depends on the
// release line played.
func (s *Server) resolve(method, path string) (endpoint, bool) {
	if method == http.MethodHead {
		method = http.MethodGet // Rails routes HEAD to the GET action
	}
	// Rails ignores one trailing slash.
	rest, ok := strings.CutPrefix(strings.TrimSuffix(path, "/"), "/api/v1/")
	if !ok {
		return endpoint{}, false
	}
	segs := strings.Split(rest, "/")
	for _, seg := range segs {
		if seg == "" {
			return endpoint{}, false
		}
	}
	resource, segs := segs[0], segs[1:]
	for _, col := range s.collections {
		if ep, ok := col.route(s.version, resource, method, segs); ok {
			return ep, true
		}
	}
	get := method == http.MethodGet
	switch {
	case resource == "categories" && get && len(segs) == 0:
		return endpoint{serve: s.listCategories}, true
	case resource == "categories" && method == http.MethodPost && len(segs) == 0 && s.version.hasTodayEndpoints():
		return endpoint{serve: s.createCategory, scope: needReadWrite}, true
	case resource == "categories" && get && len(segs) == 1:
		return endpoint{serve: s.showCategory, id: segs[0]}, true
	case resource == "chats":
		return s.resolveChats(method, segs)
	}
	return endpoint{}, false
}

// resolveChats routes `resources :chats` (index, show, create, update,
// destroy) and its nested `resources :messages, only: :create` with `post
// :retry, on: :collection`, all there since v0.6.0.
func (s *Server) resolveChats(method string, segs []string) (endpoint, bool) {
	ep := endpoint{ai: true}
	switch {
	case len(segs) == 0 && method == http.MethodGet:
		ep.serve = s.listChats
	case len(segs) == 0 && method == http.MethodPost:
		ep.serve, ep.scope = s.createChat, needWrite
	case len(segs) == 1 && method == http.MethodGet:
		ep.serve = s.showChat
	case len(segs) == 1 && (method == http.MethodPatch || method == http.MethodPut):
		// Rails' resources route PUT to update as well as PATCH.
		ep.serve, ep.scope = s.updateChat, needWrite
	case len(segs) == 1 && method == http.MethodDelete:
		ep.serve, ep.scope = s.deleteChat, needWrite
	case len(segs) == 2 && segs[1] == "messages" && method == http.MethodPost:
		ep.serve, ep.scope = s.createMessage, needWrite
	case len(segs) == 3 && segs[1] == "messages" && segs[2] == "retry" && method == http.MethodPost:
		ep.serve, ep.scope = s.retryMessage, needWrite
	default:
		return endpoint{}, false
	}
	if len(segs) > 0 {
		ep.id = segs[0]
	}
	return ep, true
}

// dispatch runs an authenticated request within its rate limit: the
// controller's checks in the upstream's order (AI features, then scope: a
// read-only key of a user without AI gets feature_disabled), then the action.
// Every request that reaches a chat action first brings the user's chats up
// to the clock: the assistant's replies due by now are appended.
func (s *Server) dispatch(ep endpoint, c *call) response {
	if ep.ai && !c.key.user.aiEnabled {
		return featureDisabled()
	}
	if ep.scope != "" && !c.key.canWrite() {
		return insufficientScope(ep.scope)
	}
	c.id = ep.id
	if ep.ai {
		s.deliverReplies(c.key.user.load(), c.now)
	}
	return ep.serve(c)
}
