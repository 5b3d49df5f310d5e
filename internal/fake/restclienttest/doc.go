// Package restclienttest is an in-memory fake of the REST API (/api/v1) of
// Sure, the open-source personal-finance app. The tests and the server's demo
// mode run against it instead of a real Sure.
//
// It follows the team's notes on the real server (UPSTREAM.md), quirks
// included, because a fake kinder than the real server hides client bugs.
//
// # Release lines
//
// Self-hosted servers lag behind the cloud, so several shapes of the API are
// live at once. New plays Today's line (v0.7.1 and later);
// New(WithVersion(Legacy)) plays a server from before v0.6.6, the shape
// UPSTREAM.md's first sections describe. Where they differ:
//
//   - categories: Today has no "classification" key and ignores the
//     classification filter (the whole list comes back); roots_only is
//     Rails' boolean cast (true unless blank, 0, f, F, false, FALSE, off or
//     OFF). Legacy renders the classification, filters on it, and reads
//     roots_only as true/1/t/on, case-insensitive;
//   - chats: Today pages both the chat list and a chat's messages 20 at a
//     time and reports "per_page": null; Legacy reports 20 for chats and
//     pages messages 50 at a time (per_page 50);
//   - POST /chats and PATCH /chats/{id}: Today answers "messages": [] and no
//     "pagination", even when a first message was just created; Legacy
//     answers the first page of messages with its pagination;
//   - POST /categories and GET /imports exist Today only; Legacy answers
//     them with a routing 404;
//   - GET /imports/{id}: Today adds "status_detail" and the validation and
//     mapping counts to "stats".
//
// Both lines have DELETE /chats/{id}, POST /chats/{id}/messages and POST
// /chats/{id}/messages/retry (which is broken upstream: 500 whenever it would
// retry). The assistant answers a sent message asynchronously: see
// SetAssistant; by default it never answers.
//
// # Quirks kept in both lines
//
//   - a path and method no route matches answer Rails' routing error, 404
//     {"status":404,"error":"Not Found"}, before authentication: whatever the
//     key, with no X-RateLimit-* header and not counted against the rate
//     limit (still recorded in Requests);
//   - an Authorization header makes every routed request 401, even with a
//     valid key (the upstream tries OAuth first);
//   - the rate limit counts every authenticated request, 4xx included; an
//     Unlimited key (a self-hosted server, WithUnlimited) is never refused
//     and answers X-RateLimit-Limit and -Remaining "Infinity", -Reset "0";
//   - pagy answers an overflowing page with the last page (and reports it);
//   - categories and imports silently replace a per_page outside 1..100 with
//     25; the chat list ignores per_page;
//   - a parent_id that is not a UUID is cast to NULL and lists the ROOT
//     categories;
//   - request bodies are read as JSON only with Content-Type application/json;
//   - an import without error has no "error" key at all.
//
// Data is seeded deterministically (same ids every run); see seed.go and
// seed_large.go for what each API key sees.
package restclienttest
