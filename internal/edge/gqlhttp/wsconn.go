package gqlhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// A WebSocket speaks graphql-transport-ws (the graphql-ws library's
// protocol, github.com/enisdenjo/graphql-ws, PROTOCOL.md), served by
// gqlgen's transport.Websocket. Every message the client sends is read
// here first (wsConn.NextReader), and every message the transport sends
// passes here (wsConn.WriteJSON), for what the protocol asks and the
// transport does not do:
//
//   - connection_init: at most maxInitBytes; the API key is taken from
//     it (connectionKey) and the rest dropped, so the transport keeps
//     nothing of it for the connection's life; a second one closes the
//     socket (4429), as does a subscribe before it (4401);
//   - subscribe: an id already running closes the socket (4409
//     "Subscriber for <id> already exists"); a trusted document named by
//     documentId, doc_id or id is looked up as a POST's is (an error
//     message refuses it, before GraphQL reads anything);
//   - complete from the client: nothing more of that operation is sent
//     (the transport would still send its complete), and its id may be
//     used again at once (the transport then knows the new operation by
//     an id of its own, so the old one's end cannot cut the new one off);
//   - a message that is not of the protocol closes the socket (4400);
//   - a connection holding no operation for Options.WebSocketIdleTimeout
//     is closed (1000): a stranger's connection, which can hold no
//     subscription without a key the upstream accepts, is not kept.

// subprotocolTransportWS is the WebSocket subprotocol served. The legacy
// graphql-ws subprotocol (Apollo's subscriptions-transport-ws,
// unmaintained since 2022), which gqlgen also speaks and picks for a
// client offering none, is not offered: it has no message a client
// answers, so the server cannot tell a connection whose client never
// reads from a quiet one, while graphql-transport-ws's ping has to be
// answered within twice the keep-alive interval.
const subprotocolTransportWS = "graphql-transport-ws"

// Close codes: RFC 6455's and graphql-transport-ws's.
const (
	closeNormal           = 1000
	closeBadRequest       = 4400 // a message not of the protocol
	closeUnauthorized     = 4401 // subscribe before connection_init
	closeForbidden        = 4403 // connection_init refused
	closeSubscriberExists = 4409
	closeTooManyInits     = 4429
)

// maxInitBytes bounds the connection_init message, read before the
// connection has a key: an API key and what clients send beside it (a
// few headers) fit many times over.
const maxInitBytes = 8 << 10

// maxCloseReason is the most bytes of a close frame's reason (RFC 6455:
// 125 with the code).
const maxCloseReason = 123

// wsConnKey holds a WebSocket's *wsConn in its request's context.
type wsConnKey struct{}

// offersSubprotocol reports whether r offers the subprotocol want.
func offersSubprotocol(r *http.Request, want string) bool {
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), want) {
				return true
			}
		}
	}
	return false
}

// wsAccept accepts a WebSocket with gqlgen's coder/websocket adapter and
// hands the transport the request's wsConn around it.
type wsAccept struct {
	transport.CoderWebsocketImplementation
}

func (a wsAccept) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	inner, err := a.CoderWebsocketImplementation.Accept(w, r, opts)
	c, _ := r.Context().Value(wsConnKey{}).(*wsConn)
	if err != nil || c == nil {
		return inner, err
	}
	c.start(inner)
	return c, nil
}

// wsConn is one WebSocket as gqlgen's transport reads and writes it (see
// the comment at the top of this file).
type wsConn struct {
	transport.WebsocketConn // gqlgen's adapter of the accepted connection

	docs      *Documents
	headerKey string        // the upgrade request's X-Api-Key
	idle      time.Duration // closed after holding no operation this long; 0: never

	mu        sync.Mutex
	readLimit int64 // the transport's, applied once connection_init is read
	initRead  bool
	key       string            // the connection's API key, from connection_init
	keyErr    *wsKeyRefusal     // why connection_init's key is refused
	ops       map[string]*wsOp  // by the id the transport knows, until its last message
	byClient  map[string]string // a client's id → the transport's, while it runs
	closing   bool
	idleTimer *time.Timer
	idleGen   int // a timer armed before the last change of ops is stale
}

// wsOp is an operation the transport runs.
type wsOp struct {
	clientID string
	// completed: the client sent complete; nothing more of it is sent.
	completed bool
}

func newWSConn(docs *Documents, headerKey string, idle time.Duration) *wsConn {
	return &wsConn{
		docs: docs, headerKey: headerKey, idle: idle, ops: map[string]*wsOp{}, byClient: map[string]string{},
		readLimit: coderDefaultReadLimit,
	}
}

// coderDefaultReadLimit is coder/websocket's limit of a message, which
// stands when the transport sets none.
const coderDefaultReadLimit = 32768

// start wraps the accepted connection: connection_init is read within
// maxInitBytes, and the idle timer runs until an operation starts.
func (c *wsConn) start(inner transport.WebsocketConn) {
	c.WebsocketConn = inner
	c.setInnerReadLimit(maxInitBytes)
	c.mu.Lock()
	c.armIdleLocked()
	c.mu.Unlock()
}

// finish stops the idle timer: the transport is done with the connection.
func (c *wsConn) finish() {
	c.mu.Lock()
	c.closing = true
	c.stopIdleLocked()
	c.mu.Unlock()
}

// SetReadLimit is the transport's limit of a message: applied once
// connection_init, held to maxInitBytes, is read.
func (c *wsConn) SetReadLimit(limit int64) {
	c.mu.Lock()
	c.readLimit = limit
	initRead := c.initRead
	c.mu.Unlock()
	if initRead {
		c.setInnerReadLimit(limit)
	}
}

func (c *wsConn) setInnerReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

// SetReadDeadline passes the transport's pong deadline on.
func (c *wsConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// WriteClose closes the socket once: the first close (the transport's or
// this file's) says why.
func (c *wsConn) WriteClose(code int, reason string) error {
	c.mu.Lock()
	first := !c.closing
	c.closing = true
	c.stopIdleLocked()
	c.mu.Unlock()
	if !first {
		return nil
	}
	if len(reason) > maxCloseReason {
		reason = reason[:maxCloseReason]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	return c.WebsocketConn.WriteClose(code, reason)
}

// closeWith closes the socket with code and reason, and returns what
// ends the transport's reading.
func (c *wsConn) closeWith(code int, reason string) error {
	_ = c.WriteClose(code, reason)
	return transport.ErrWebsocketClosed
}

// wsMessage is a message of graphql-transport-ws.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// NextReader returns the transport the client's next message, as the
// protocol has it handled (see receive).
func (c *wsConn) NextReader() (int, io.Reader, error) {
	for {
		typ, r, err := c.WebsocketConn.NextReader()
		if err != nil {
			return typ, r, err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		fwd, err := c.receive(b)
		if err != nil {
			return typ, nil, err
		}
		if fwd != nil {
			return typ, bytes.NewReader(fwd), nil
		}
	}
}

// receive handles a message of the client: it returns the message the
// transport reads in its place, nil when the transport has nothing to
// read of it, or an error when the socket is closed.
func (c *wsConn) receive(b []byte) ([]byte, error) {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return nil, transport.ErrWebsocketClosed
	}
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, c.closeWith(closeBadRequest, "Invalid message received: not a graphql-transport-ws message")
	}
	switch m.Type {
	case "connection_init":
		return c.init(m.Payload)
	case "subscribe":
		return c.subscribe(m.ID, m.Payload)
	case "complete":
		return c.complete(m.ID), nil
	case "ping", "pong":
		return b, nil
	}
	return nil, c.closeWith(closeBadRequest, "Invalid message received: type "+strconv.Quote(m.Type))
}

// init reads connection_init's key and hands the transport a
// connection_init without payload: it keeps nothing of it.
func (c *wsConn) init(payload json.RawMessage) ([]byte, error) {
	c.mu.Lock()
	if c.initRead {
		c.mu.Unlock()
		return nil, c.closeWith(closeTooManyInits, "Too many initialisation requests")
	}
	c.initRead = true
	c.key, c.keyErr = connectionKey(c.headerKey, payload)
	limit := c.readLimit
	c.mu.Unlock()
	c.setInnerReadLimit(limit)
	return []byte(`{"type":"connection_init"}`), nil
}

// connectionKey is the connection's API key (InitFunc), once; its
// connection_init is refused with keyErr.
func (c *wsConn) connectionKey() (string, *wsKeyRefusal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key, refused := c.key, c.keyErr
	c.key = "" // the caller holds it from now on
	return key, refused
}

// wsKeyRefusal is why a connection_init's key is refused: the close code
// and reason.
type wsKeyRefusal struct {
	code   int
	reason string
}

// connectionKey is the API key of a WebSocket: the upgrade request's
// X-Api-Key header, then connection_init's payload's "X-Api-Key" (any
// case), "apiKey" and "headers": {"X-Api-Key"} (any case), in this order.
// An empty value is none. Two that differ are refused (4403): which one
// the client means is not for the server to guess. A payload that is not
// an object, or a key that is not a string, is refused (4400).
func connectionKey(header string, payload json.RawMessage) (string, *wsKeyRefusal) {
	var p map[string]json.RawMessage
	if len(payload) > 0 && !bytes.Equal(payload, []byte("null")) {
		if json.Unmarshal(payload, &p) != nil {
			return "", &wsKeyRefusal{closeBadRequest, "Invalid message received: connection_init's payload is not an object"}
		}
	}
	keys := []string{header}
	collect := func(m map[string]json.RawMessage, names func(string) bool, where string) *wsKeyRefusal {
		for name, v := range m {
			if !names(name) {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) != nil {
				return &wsKeyRefusal{closeBadRequest, "Invalid message received: connection_init's " + where + name + " is not a string"}
			}
			keys = append(keys, s)
		}
		return nil
	}
	isHeader := func(name string) bool { return strings.EqualFold(name, "X-Api-Key") }
	if why := collect(p, func(name string) bool { return isHeader(name) || name == "apiKey" }, ""); why != nil {
		return "", why
	}
	var headers map[string]json.RawMessage
	if json.Unmarshal(p["headers"], &headers) == nil {
		if why := collect(headers, isHeader, "headers."); why != nil {
			return "", why
		}
	}
	key := oneID(keys...)
	if key == conflictingIDs {
		return "", &wsKeyRefusal{closeForbidden, "Forbidden: the connection carries two different API keys (X-Api-Key header, connection_init's payload); send one"}
	}
	return key, nil
}

// subscribe starts an operation of the client's id: refused (4409) while
// one of that id runs; its trusted document looked up.
func (c *wsConn) subscribe(id string, payload json.RawMessage) ([]byte, error) {
	c.mu.Lock()
	_, running := c.byClient[id]
	initRead := c.initRead
	c.mu.Unlock()
	switch {
	case !initRead:
		return nil, c.closeWith(closeUnauthorized, "Unauthorized")
	case id == "":
		return nil, c.closeWith(closeBadRequest, "Invalid message received: subscribe without an id")
	case running:
		return nil, c.closeWith(closeSubscriberExists, "Subscriber for "+id+" already exists")
	}
	payload, why := c.document(payload)
	if why != nil {
		c.refuse(id, why)
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The transport's id: the client's, unless an operation the client
	// completed under it is still ending.
	own := id
	for n := 2; c.ops[own] != nil; n++ {
		own = id + "#" + strconv.Itoa(n)
	}
	c.ops[own] = &wsOp{clientID: id}
	c.byClient[id] = own
	c.stopIdleLocked()
	return encodeWSMessage(own, "subscribe", payload), nil
}

// document fills in the query of a subscribe payload from the trusted
// document it names, as readPost does a POST's (documentId, doc_id or
// id; or its persisted query's hash), or says why it is refused. A
// payload that is no GraphQL request is left to the transport.
func (c *wsConn) document(payload json.RawMessage) (json.RawMessage, *documentRefusal) {
	var p struct {
		Query      string         `json:"query"`
		Extensions map[string]any `json:"extensions"`
		DocumentID idMember       `json:"documentId"`
		DocID      idMember       `json:"doc_id"`
		ID         idMember       `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber() // extensions are written back as they came
	if dec.Decode(&p) != nil {
		return payload, nil
	}
	params := &graphql.RawParams{Query: p.Query, Extensions: p.Extensions}
	hash := persistedHash(params)
	if why := c.docs.resolve(params, oneID(string(p.DocumentID), string(p.DocID), string(p.ID))); why != nil {
		return nil, why
	}
	if params.Query == p.Query && persistedHash(params) == hash {
		return payload, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(payload, &members) != nil {
		return payload, nil
	}
	members["query"], _ = json.Marshal(params.Query)
	if persistedHash(params) != hash {
		members["extensions"], _ = json.Marshal(params.Extensions)
	}
	b, err := json.Marshal(members)
	if err != nil {
		return payload, nil
	}
	return b, nil
}

// refuse answers the client's operation id with an error message, which
// ends it.
func (c *wsConn) refuse(id string, why *documentRefusal) {
	payload, _ := json.Marshal([]map[string]any{{"message": why.msg, "extensions": map[string]any{"code": why.code}}})
	_ = c.WebsocketConn.WriteJSON(json.RawMessage(encodeWSMessage(id, "error", payload)))
}

// complete stops the client's operation id: the transport reads a
// complete of its own id for it; nothing when none of that id runs.
func (c *wsConn) complete(id string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	own, ok := c.byClient[id]
	if !ok {
		return nil
	}
	delete(c.byClient, id)
	c.ops[own].completed = true
	return encodeWSMessage(own, "complete", nil)
}

// WriteJSON sends a message of the transport: one of an operation goes
// under the client's id, and not at all once the client completed it or
// after its error or complete.
func (c *wsConn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var m struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(b, &m) == nil && m.ID != "" {
		send, clientID := c.sent(m.ID, m.Type)
		if !send {
			return nil
		}
		if clientID != m.ID {
			var full wsMessage
			if err := json.Unmarshal(b, &full); err != nil {
				return err
			}
			b = encodeWSMessage(clientID, full.Type, full.Payload)
		}
	}
	return c.WebsocketConn.WriteJSON(json.RawMessage(b))
}

// sent records a message of the operation the transport knows as id
// going out: whether it is sent, and the client's id of it.
func (c *wsConn) sent(id, typ string) (send bool, clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op := c.ops[id]
	if op == nil {
		return false, "" // ended: the transport sends a complete after an error
	}
	if typ == "complete" || typ == "error" {
		delete(c.ops, id)
		if c.byClient[op.clientID] == id {
			delete(c.byClient, op.clientID)
		}
		if len(c.ops) == 0 {
			c.armIdleLocked()
		}
	}
	return !op.completed, op.clientID
}

// armIdleLocked closes the connection once it has held no operation for
// c.idle; under c.mu.
func (c *wsConn) armIdleLocked() {
	if c.idle <= 0 || c.closing {
		return
	}
	c.stopIdleLocked()
	gen := c.idleGen
	c.idleTimer = time.AfterFunc(c.idle, func() { c.closeIfIdle(gen) })
}

// stopIdleLocked stops the idle timer; under c.mu.
func (c *wsConn) stopIdleLocked() {
	c.idleGen++
	if c.idleTimer != nil {
		c.idleTimer.Stop()
		c.idleTimer = nil
	}
}

// closeIfIdle closes the connection if it still holds no operation since
// the timer of gen was armed.
func (c *wsConn) closeIfIdle(gen int) {
	c.mu.Lock()
	idle := gen == c.idleGen && len(c.ops) == 0
	c.mu.Unlock()
	if idle {
		_ = c.closeWith(closeNormal, "no operation for "+c.idle.String())
	}
}

// encodeWSMessage encodes a message whose payload is JSON already.
func encodeWSMessage(id, typ string, payload json.RawMessage) []byte {
	b := []byte(`{`)
	if id != "" {
		quoted, _ := json.Marshal(id)
		b = append(append(append(b, `"id":`...), quoted...), ',')
	}
	b = append(append(append(b, `"type":"`...), typ...), '"')
	if len(payload) > 0 {
		b = append(append(append(b, `,"payload":`...), payload...), '}')
		return b
	}
	return append(b, '}')
}
