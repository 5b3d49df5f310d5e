package gqlhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// fakeWS is the transport's side of a WebSocket: the client's messages
// to read, and what was written.
type fakeWS struct {
	in      [][]byte
	written []string
	closed  []int
}

func (f *fakeWS) NextReader() (int, io.Reader, error) {
	if len(f.in) == 0 {
		return 0, nil, io.EOF
	}
	m := f.in[0]
	f.in = f.in[1:]
	return 1, bytes.NewReader(m), nil
}

func (f *fakeWS) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	f.written = append(f.written, string(b))
	return err
}

func (f *fakeWS) WriteClose(code int, _ string) error {
	f.closed = append(f.closed, code)
	return nil
}

func (f *fakeWS) Close() error        { return nil }
func (f *fakeWS) Subprotocol() string { return subprotocolTransportWS }

// read returns what the transport reads next, "" at the end.
func read(t *testing.T, c *wsConn) string {
	t.Helper()
	_, r, err := c.NextReader()
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// The transport reads connection_init without its payload (it would keep
// it decoded for the connection's life): the key is taken from it first.
func TestWSConn_InitReachesTheTransportWithoutPayload(t *testing.T) {
	f := &fakeWS{in: [][]byte{[]byte(`{"type":"connection_init","payload":{"apiKey":"k","pad":"` + string(bytes.Repeat([]byte("x"), 7000)) + `"}}`)}}
	c := newWSConn(nil, "", 0)
	c.start(f)
	if got := read(t, c); got != `{"type":"connection_init"}` {
		t.Errorf("the transport read %.100s, want connection_init without payload", got)
	}
	if key, refused := c.connectionKey(); key != "k" || refused != nil {
		t.Errorf("key %q (%v), want k", key, refused)
	}
}

// An id the client completed may be used again at once: the transport
// runs the new operation under an id of its own, its messages reach the
// client under the client's id, and nothing more of the old one does.
func TestWSConn_IDUsedAgainAfterComplete(t *testing.T) {
	f := &fakeWS{in: [][]byte{
		[]byte(`{"type":"connection_init"}`),
		[]byte(`{"id":"1","type":"subscribe","payload":{"query":"subscription { a }"}}`),
		[]byte(`{"id":"1","type":"complete"}`),
		[]byte(`{"id":"1","type":"subscribe","payload":{"query":"subscription { b }"}}`),
	}}
	c := newWSConn(nil, "", 0)
	c.start(f)
	var ids []string
	for m := read(t, c); m != ""; m = read(t, c) {
		var msg wsMessage
		if err := json.Unmarshal([]byte(m), &msg); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, msg.Type+" "+msg.ID)
	}
	want := []string{"connection_init ", "subscribe 1", "complete 1", "subscribe 1#2"}
	if len(ids) != len(want) {
		t.Fatalf("the transport read %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("the transport read %v, want %v", ids, want)
		}
	}
	// The transport's answers: the old operation's complete, then the new
	// one's next.
	for _, m := range []wsMessage{
		{ID: "1", Type: "complete"},
		{ID: "1#2", Type: "next", Payload: json.RawMessage(`{"data":{"b":1}}`)},
	} {
		if err := c.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.written) != 1 || f.written[0] != `{"id":"1","type":"next","payload":{"data":{"b":1}}}` {
		t.Errorf("the client got %q, want only the new operation's next, under its id 1", f.written)
	}
}
