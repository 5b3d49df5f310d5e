package gqlhttp

import (
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Fragments are set in place, in the order of the initial payload's
// fields, whatever order they come in: a fragment nested in another one
// may arrive first; one whose object was nulled is dropped.
func TestMergeFragments(t *testing.T) {
	data := json.RawMessage(`{"chats":{"nodes":[{"title":"a","messages":null,"n":1},null]}}`)
	frags := []*graphql.Response{
		{Path: ast.Path{ast.PathName("chats"), ast.PathName("nodes"), ast.PathIndex(0), ast.PathName("messages"), ast.PathName("nodes"), ast.PathIndex(0)}, Data: json.RawMessage(`{"content":"hi"}`)},
		{Path: ast.Path{ast.PathName("chats"), ast.PathName("nodes"), ast.PathIndex(0)}, Data: json.RawMessage(`{"messages":{"nodes":[{"id":"m","content":null}]}}`)},
		{Path: ast.Path{ast.PathName("chats"), ast.PathName("nodes"), ast.PathIndex(1)}, Data: json.RawMessage(`{"messages":{"nodes":[]}}`)},
	}
	got := string(mergeFragments(data, frags))
	want := `{"chats":{"nodes":[{"title":"a","messages":{"nodes":[{"id":"m","content":"hi"}]},"n":1},null]}}`
	if got != want {
		t.Errorf("merged\n%s\nwant\n%s", got, want)
	}
}
