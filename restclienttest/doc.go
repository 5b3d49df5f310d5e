// Package restclienttest is an in-memory fake of the REST API (/api/v1) of
// Sure, the open-source personal-finance app. The tests and the server's demo
// mode run against it instead of a real Sure.
//
// It follows the team's notes on the real server (UPSTREAM.md), quirks
// included, because a fake kinder than the real server hides client bugs.
// Among them:
//
//   - an Authorization header makes every request 401, even with a valid key
//     (the upstream tries OAuth first);
//   - the rate limit counts every authenticated request, 4xx included;
//   - pagy answers an overflowing page with the last page (and reports it);
//   - categories silently replace a per_page outside 1..100 with 25, the chat
//     list ignores per_page (20 a page), chat messages come 50 a page;
//   - a parent_id that is not a UUID is cast to NULL and lists the ROOT
//     categories;
//   - request bodies are read as JSON only with Content-Type application/json;
//   - an import without error has no "error" key at all.
//
// Data is seeded deterministically (same ids every run); see seed.go and
// seed_large.go for what each API key sees.
package restclienttest
