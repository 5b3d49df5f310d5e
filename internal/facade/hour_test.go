package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/suregql/suregql/internal/facade"
	"github.com/suregql/suregql/internal/fake/restclienttest"
	"github.com/suregql/suregql/restclient"
)

// The frontend hour: one hour of a busy user of a chat and budgeting app,
// replayed in a synctest bubble (fake time) against the fake Sure on a
// cloud key of 100 requests an hour, one clock-hour window. Ten visits,
// six minutes apart, of twenty page views 1.5 s apart (five each of the
// category tree, the chats list, a chat and an import screen that follows
// an import uploaded just before the hour), ten writes (chats created,
// renamed and deleted, categories created), five messages whose replies the
// chat screen waits for, and two changes made by another client of the same
// user at known minutes (a chat renamed at minute 20, a category created at
// minute 40). What a user would notice is checked as it happens: no
// RATE_LIMITED, every own write shown by the next view, every out-of-band
// change shown once its resource's freshness has passed, every reply
// delivered, the import followed to its end.
//
// Three ways of running it: the facade's defaults with a client that
// subscribes (chatMessageAdded, importUpdated), held to those bounds; the
// same client with the answer cache off (-cache-ttl 0); and a client that
// polls the facade at every view tick instead of subscribing. The last two
// report their figures (BENCHMARKS.md, "The frontend hour"). HOUR_TRACE=1
// logs every upstream call with its time.

const (
	hourVisits        = 10
	hourViewsPerVisit = 20
	hourVisitEvery    = 6 * time.Minute
	hourViewEvery     = 1500 * time.Millisecond
	hourImportStep    = 90 * time.Second // pending, then importing, then complete
	hourReplyDelay    = 8 * time.Second
	hourKeyPerHour    = 100
	hourOtherClient   = "other-client-key"
)

type hourMode struct {
	name     string
	cacheOff bool
	polls    bool // the client polls the facade instead of subscribing
}

// hourFigures is what one run of the hour cost and showed.
type hourFigures struct {
	calls, rateLimited, views, writes, replies int
	stale                                      int
	noticed                                    int     // what a user noticed going wrong (modes other than the defaults)
	firstRefused                               float64 // the minute of the first RATE_LIMITED, 0 for none
	callsByPath                                map[string]int
}

// hourRun drives one replay.
type hourRun struct {
	t    *testing.T
	mode hourMode
	up   *restclienttest.Server
	h    http.Handler
	sse  *http.Client // to h, over in-memory connections: for the streams
	fig  hourFigures

	start time.Time
	// the conversations the user had before the hour, which its chat
	// screens show and its messages go to.
	ownChats []string
	// own writes a view must show: the next view of the resource checks
	// them.
	mustShowChat     map[string]string // chat id -> title
	mustNotShowChat  map[string]bool
	mustShowCategory map[string]bool // category name
	// out-of-band changes: what must be shown from when on.
	outOfBand []outOfBandChange

	// the import the user uploaded in the web app just before the hour,
	// which its import screen follows, and the statuses pushed of it.
	importID     string
	importPushes chan []string
	importSub    bool // the subscribing client has subscribed to it
}

type outOfBandChange struct {
	what      string
	visibleBy time.Time
	shownBy   func(view string, body []byte) bool // view: "chats" or "tree"
	view      string
}

// hourModes are the ways the hour is replayed; the first, the facade's
// defaults with a subscribing client, is the one held to the issue's
// bounds.
var hourModes = []hourMode{{name: "defaults, subscribing"}, {name: "cache off", cacheOff: true}, {name: "polling client", polls: true}}

func TestFrontendHour(t *testing.T) {
	for _, m := range hourModes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fig := runHour(t, m)
				t.Logf("%s: %d upstream calls (%v), %d RATE_LIMITED (the first at minute %.1f), %d stale answers; %d views, %d writes, %d replies delivered; %d things a user noticed",
					m.name, fig.calls, fig.callsByPath, fig.rateLimited, fig.firstRefused, fig.stale, fig.views, fig.writes, fig.replies, fig.noticed)
				if m != hourModes[0] {
					return // figures for the note
				}
				if fig.rateLimited != 0 {
					t.Errorf("with the defaults %d fields were refused RATE_LIMITED, want 0", fig.rateLimited)
				}
				if fig.calls > hourKeyPerHour {
					t.Errorf("with the defaults the hour cost %d upstream calls, want at most %d", fig.calls, hourKeyPerHour)
				}
			})
		})
	}
}

func runHour(t *testing.T, m hourMode) hourFigures {
	up := restclienttest.New()
	up.SetClock(time.Now) // the bubble's clock
	up.SetAssistant(hourReplyDelay)
	up.SetRateLimit(restclienttest.DemoKey, hourKeyPerHour)
	up.AddKey(hourOtherClient, restclienttest.DemoKey)
	client, err := restclient.New("http://sure.test", restclient.WithHTTPClient(&http.Client{
		Transport: facade.HandlerTransport{Handler: http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
			if os.Getenv("HOUR_TRACE") != "" && q.Header.Get("X-Api-Key") == restclienttest.DemoKey {
				t.Logf("upstream %s %s %s?%s", time.Now().Format("15:04:05"), q.Method, q.URL.Path, q.URL.RawQuery)
			}
			up.ServeHTTP(w, q)
		})},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cfg := facade.Config{Upstream: client, DisablePlayground: true, Log: slog.New(slog.DiscardHandler)}
	if m.cacheOff {
		cfg.CacheTTL = facade.CacheOff
	}
	h := facade.New(cfg)
	ln := newPipeListener()
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	tr := &http.Transport{DialContext: ln.dial}
	defer func() {
		tr.CloseIdleConnections()
		_ = srv.Close()
	}()
	r := &hourRun{
		t: t, mode: m, up: up, h: h, sse: &http.Client{Transport: tr},
		mustShowChat:    map[string]string{},
		mustNotShowChat: map[string]bool{}, mustShowCategory: map[string]bool{},
		fig: hourFigures{callsByPath: map[string]int{}},
	}
	r.setUp()
	r.replay()
	r.checkImport()
	for _, req := range up.Requests() {
		if req.APIKey == restclienttest.DemoKey {
			r.fig.calls++
			r.fig.callsByPath[restclient.Endpoint(req.Method, strings.TrimPrefix(req.Path, "/api/v1"))]++
		}
	}
	return r.fig
}

// setUp is what the user did in the web app before the hour, through
// another key of theirs: three conversations (the demo's chats are dated
// 2026, after the bubble's clock, and would always look just written), and
// an import uploaded just before the hour, which the import screen follows.
// The hour then starts with the key's next rate-limit window (a clock hour,
// as Sure's cloud counts).
func (r *hourRun) setUp() {
	for _, title := range []string{"Groceries", "Holidays", "Taxes"} {
		body := r.upstreamAs(hourOtherClient, http.MethodPost, "/api/v1/chats", `{"title":"`+title+`","message":"Hello"}`)
		var created struct{ ID string }
		if err := json.Unmarshal(body, &created); err != nil || created.ID == "" {
			r.t.Fatalf("creating the chat %q: %v %s", title, err, body)
		}
		r.ownChats = append(r.ownChats, created.ID)
	}
	r.start = time.Now().Truncate(time.Hour).Add(time.Hour)
	time.Sleep(time.Until(r.start) - hourImportStep/2)
	r.importID = r.up.AddProgressingImport(restclienttest.DemoKey, hourImportStep)
	r.importPushes = make(chan []string, 1)
	time.Sleep(time.Until(r.start))
}

// replay runs the hour's visits, writes and out-of-band changes in order
// of their time.
func (r *hourRun) replay() {
	for v := range hourVisits {
		r.waitUntil(r.start.Add(time.Duration(v) * hourVisitEvery))
		r.visit(v)
		if v == 3 {
			r.waitUntil(r.start.Add(20 * time.Minute))
			r.renameByOtherClient()
		}
		if v == 6 {
			r.waitUntil(r.start.Add(40 * time.Minute))
			r.createCategoryByOtherClient()
		}
	}
}

func (r *hourRun) waitUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		time.Sleep(d) // fake time: the bubble's clock jumps
	}
}

// visit is one visit of twenty views, with its writes and message.
func (r *hourRun) visit(v int) {
	base := time.Now()
	var reply *pendingReply
	for i := range hourViewsPerVisit {
		r.waitUntil(base.Add(time.Duration(i) * hourViewEvery))
		if i == 6 {
			r.write(v) // then back to the screen, this view
		}
		switch i % 4 { // five views of each screen a visit
		case 0:
			r.viewTree()
		case 1:
			r.viewChats()
		case 2:
			// The visit's conversation. A subscribing client shows a chat
			// it awaits a reply in from its own cache and the pushes.
			if reply == nil || r.mode.polls || reply.done {
				r.viewChat(r.conversation(v))
			} else {
				r.fig.views++
			}
		case 3:
			r.viewImport()
		}
		if i == 10 && v%2 == 1 && reply == nil {
			reply = r.sendMessage(r.conversation(v))
		}
		if reply != nil && r.mode.polls && !reply.done {
			r.pollForReply(reply)
		}
	}
	if reply != nil {
		r.finishReply(reply)
	}
}

// conversation is one of the user's conversations.
func (r *hourRun) conversation(n int) string { return r.ownChats[n%len(r.ownChats)] }

// post runs one operation as the user and returns its data, counting the
// fields refused RATE_LIMITED and the answers served stale. A refused
// view shows nothing: the checks of what it shows skip it (the refusal
// is counted).
func (r *hourRun) post(query string, vars map[string]any) json.RawMessage {
	data, _ := r.try(query, vars)
	return data
}

func (r *hourRun) try(query string, vars map[string]any) (data json.RawMessage, refused bool) {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	rec := postIn(r.h, string(body))
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
		Extensions struct {
			Upstream struct {
				Stale json.RawMessage `json:"stale"`
			} `json:"upstream"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		r.t.Fatalf("%s: %v: %s", query, err, rec.Body)
	}
	for _, e := range resp.Errors {
		if e.Extensions["code"] == "RATE_LIMITED" {
			if r.fig.rateLimited == 0 {
				r.fig.firstRefused = r.minute()
			}
			r.fig.rateLimited++
			refused = true
			continue
		}
		r.fail("at minute %.1f, %s: unexpected error %s %v", r.minute(), firstLine(query), e.Message, e.Extensions)
	}
	if len(resp.Extensions.Upstream.Stale) > 0 && string(resp.Extensions.Upstream.Stale) != "null" {
		r.fig.stale++
	}
	return resp.Data, refused || len(resp.Errors) > 0
}

// fail reports what the user would notice: an error of the test with the
// defaults; with the other modes, a figure of the note (what that mode
// costs the user), the first few of them logged.
func (r *hourRun) fail(format string, args ...any) {
	r.t.Helper()
	if r.mode == hourModes[0] {
		r.t.Errorf(format, args...)
		return
	}
	if r.fig.noticed++; r.fig.noticed <= 3 {
		r.t.Logf("noticed: "+format, args...)
	}
}

func (r *hourRun) minute() float64 { return time.Since(r.start).Minutes() }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

const hourTreeQuery = `{ categories(rootsOnly: true, first: 50) { edges { node { id name subcategories(first: 50) { edges { node { id name } } } } } } }`

func (r *hourRun) viewTree() {
	r.fig.views++
	data, refused := r.try(hourTreeQuery, nil)
	if refused {
		return
	}
	for name := range r.mustShowCategory {
		if !strings.Contains(string(data), `"name":"`+name+`"`) {
			r.fail("at minute %.1f the tree does not show the category %q the user created", r.minute(), name)
		}
	}
	r.checkOutOfBand("tree", data)
}

const hourChatsQuery = `{ chats(first: 20) { edges { node { id title messageCount } } } }`

func (r *hourRun) viewChats() {
	r.fig.views++
	data, refused := r.try(hourChatsQuery, nil)
	if refused {
		return
	}
	var got struct {
		Chats struct {
			Edges []struct {
				Node struct{ ID, Title string }
			}
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		r.t.Fatalf("chats: %v", err)
	}
	if got.Chats.Edges == nil {
		return // refused: nothing shown, nothing learnt
	}
	shown := map[string]string{}
	for _, e := range got.Chats.Edges {
		shown[e.Node.ID] = e.Node.Title
	}
	for id, title := range r.mustShowChat {
		if shown[id] != title {
			r.fail("at minute %.1f the chats list shows chat %s as %q, want the user's own %q", r.minute(), id, shown[id], title)
		}
	}
	for id := range r.mustNotShowChat {
		if _, ok := shown[id]; ok {
			r.fail("at minute %.1f the chats list still shows chat %s the user deleted", r.minute(), id)
		}
	}
	r.checkOutOfBand("chats", data)
}

const hourChatQuery = `query($id: ID!) { chat(id: $id) { id title messages(last: 10) { edges { node { id role content model } } } } }`

func (r *hourRun) viewChat(id string) {
	r.fig.views++
	data, refused := r.try(hourChatQuery, map[string]any{"id": id})
	if refused {
		return
	}
	if title, ok := r.mustShowChat[id]; ok && !strings.Contains(string(data), `"title":`+jsonString(title)) {
		r.fail("at minute %.1f chat %s does not show the user's own title %q: %s", r.minute(), id, title, data)
	}
}

// viewImport is the import screen. The subscribing client subscribes to
// importUpdated while the import is not settled and shows what is pushed
// (no query past the first); the polling client reads it on every view.
func (r *hourRun) viewImport() {
	r.fig.views++
	if r.importSub && !r.mode.polls {
		return // shown from the pushes
	}
	data, refused := r.try(`query($id: ID!) { import(id: $id) { id status statusDetail { terminal } } }`, map[string]any{"id": r.importID})
	if refused || r.mode.polls || strings.Contains(string(data), `"status":"complete"`) {
		return
	}
	r.importSub = true
	events, cancel := r.subscribe(`subscription($id: ID!) { importUpdated(id: $id) { id status } }`, map[string]any{"id": r.importID})
	go func() {
		defer cancel()
		var statuses []string
		for ev := range events {
			if ev.event == "complete" {
				break
			}
			status, _ := pushed(ev, "importUpdated")["status"].(string)
			statuses = append(statuses, status)
		}
		r.importPushes <- statuses
	}()
}

// checkImport checks the import screen's subscription followed the import
// to its end.
func (r *hourRun) checkImport() {
	if r.mode.polls {
		return
	}
	if !r.importSub {
		r.t.Error("the import screen never subscribed to the pending import")
		return
	}
	var statuses []string
	select {
	case statuses = <-r.importPushes:
	case <-time.After(time.Hour): // fake time; the import completed in minute 3
		r.t.Error("the import subscription never ended")
	}
	if len(statuses) == 0 || statuses[len(statuses)-1] != "complete" {
		r.fail("importUpdated pushed %v, want the import's statuses up to complete, then the end", statuses)
	}
}

// write is the visit's write: ten in the hour, of every kind.
func (r *hourRun) write(v int) {
	r.fig.writes++
	switch v % 5 {
	case 0, 3:
		title := fmt.Sprintf("Plan %d", v)
		data := r.post(`mutation($t: String!) { createChat(input: {title: $t}) { chat { id title } } }`, map[string]any{"t": title})
		var got struct {
			CreateChat struct{ Chat struct{ ID string } }
		}
		_ = json.Unmarshal(data, &got)
		if got.CreateChat.Chat.ID != "" { // else refused, and counted
			r.mustShowChat[got.CreateChat.Chat.ID] = title
		}
	case 1:
		id := r.conversation(v + 1)
		title := fmt.Sprintf("Renamed at visit %d", v)
		data := r.post(`mutation($id: ID!, $t: String!) { updateChat(input: {id: $id, title: $t}) { chat { id } } }`, map[string]any{"id": id, "t": title})
		if strings.Contains(string(data), id) {
			r.mustShowChat[id] = title
		}
	case 2:
		name := fmt.Sprintf("Hobby %d", v)
		data := r.post(`mutation($n: String!) { createCategory(input: {name: $n}) { category { id } } }`, map[string]any{"n": name})
		if strings.Contains(string(data), `"id"`) {
			r.mustShowCategory[name] = true
		}
	case 4:
		for id := range r.mustShowChat {
			data := r.post(`mutation($id: ID!) { deleteChat(input: {id: $id}) { deletedChatId } }`, map[string]any{"id": id})
			if strings.Contains(string(data), id) {
				delete(r.mustShowChat, id)
				r.mustNotShowChat[id] = true
			}
			break
		}
	}
}

// pendingReply is a message sent whose reply the chat screen waits for.
type pendingReply struct {
	chatID, messageID string
	events            <-chan sseEvent
	cancel            context.CancelFunc
	done              bool
}

func (r *hourRun) sendMessage(chatID string) *pendingReply {
	p := &pendingReply{chatID: chatID}
	if !r.mode.polls {
		p.events, p.cancel = r.subscribe(`subscription($id: ID!) { chatMessageAdded(chatId: $id) { id role content model } }`, map[string]any{"id": chatID})
	}
	data := r.post(`mutation($id: ID!) { sendChatMessage(input: {chatId: $id, content: "How much did I spend on food?"}) { message { id } } }`, map[string]any{"id": chatID})
	var got struct {
		SendChatMessage struct{ Message struct{ ID string } }
	}
	_ = json.Unmarshal(data, &got)
	p.messageID = got.SendChatMessage.Message.ID
	r.fig.writes++
	return p
}

// pollForReply is the polling client's chat screen waiting for the reply:
// it reads the chat again at every tick of the visit (every hourViewEvery)
// until the reply shows.
func (r *hourRun) pollForReply(p *pendingReply) {
	data := r.post(hourChatQuery, map[string]any{"id": p.chatID})
	if strings.Contains(string(data), `"role":"assistant","content":"You asked: \"How much`) {
		p.done = true
		r.fig.replies++
	}
}

// finishReply waits for the subscriber to receive the assistant's reply.
func (r *hourRun) finishReply(p *pendingReply) {
	if r.mode.polls {
		if !p.done {
			r.fail("the polling client never saw the reply in chat %s", p.chatID)
		}
		return
	}
	defer p.cancel()
	// The visit's end is at least 10 s after the message; the reply is
	// due 8 s after it. A subscriber that has it a minute of (fake) time
	// later still had it late: the guard only ends a wait that fails.
	giveUp := time.After(time.Minute)
	for {
		var ev sseEvent
		var ok bool
		select {
		case ev, ok = <-p.events:
		case <-giveUp:
		}
		if !ok || ev.event == "complete" {
			break
		}
		m := pushed(ev, "chatMessageAdded")
		content, _ := m["content"].(string)
		if m["role"] == "assistant" && m["model"] != nil && strings.Contains(content, "How much did I spend on food?") {
			r.fig.replies++
			return
		}
		if ev.data["errors"] != nil {
			r.fail("chatMessageAdded(%s) sent an error: %v", p.chatID, ev.data["errors"])
		}
	}
	r.fail("the subscriber of chat %s never received the assistant's reply", p.chatID)
}

// subscribe starts a graphql-sse subscription as the user, over an
// in-memory connection of the bubble; cancel ends it as a closed tab would.
func (r *hourRun) subscribe(query string, vars map[string]any) (<-chan sseEvent, context.CancelFunc) {
	s := openSSE(r.t, r.sse, "http://suregql.test/graphql", restclienttest.DemoKey, query, vars)
	return s.events, s.cancel
}

// pushed returns the object an event of a subscription's field pushed.
func pushed(ev sseEvent, field string) map[string]any {
	data, _ := ev.data["data"].(map[string]any)
	obj, _ := data[field].(map[string]any)
	return obj
}

// renameByOtherClient renames a chat through another key of the same
// user, as the web app would: the facade learns of it only by reading.
func (r *hourRun) renameByOtherClient() {
	id := r.conversation(2)
	title := "Renamed in the web app"
	r.upstreamAs(hourOtherClient, http.MethodPatch, "/api/v1/chats/"+id, `{"title":"`+title+`"}`)
	delete(r.mustShowChat, id)
	r.outOfBand = append(r.outOfBand, outOfBandChange{
		what: "chat renamed elsewhere", view: "chats", visibleBy: time.Now().Add(30 * time.Second),
		shownBy: func(_ string, body []byte) bool { return strings.Contains(string(body), `"title":"`+title+`"`) },
	})
}

func (r *hourRun) createCategoryByOtherClient() {
	name := "Created in the web app"
	r.upstreamAs(hourOtherClient, http.MethodPost, "/api/v1/categories", `{"category":{"name":"`+name+`"}}`)
	r.outOfBand = append(r.outOfBand, outOfBandChange{
		what: "category created elsewhere", view: "tree", visibleBy: time.Now().Add(5 * time.Minute),
		shownBy: func(_ string, body []byte) bool { return strings.Contains(string(body), `"name":"`+name+`"`) },
	})
}

func (r *hourRun) upstreamAs(key, method, path, body string) []byte {
	req := httptest.NewRequest(method, "http://sure.test"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	rec := httptest.NewRecorder()
	r.up.ServeHTTP(rec, req)
	if rec.Code >= 300 {
		r.t.Fatalf("%s %s as another client: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

func (r *hourRun) checkOutOfBand(view string, body []byte) {
	for _, c := range r.outOfBand {
		if c.view == view && !time.Now().Before(c.visibleBy) && !c.shownBy(view, body) {
			r.fail("at minute %.1f the %s view does not show the %s %s ago", r.minute(), view, c.what,
				time.Since(c.visibleBy.Add(-freshnessOf(view))).Round(time.Second))
		}
	}
}

func freshnessOf(view string) time.Duration {
	if view == "tree" {
		return 5 * time.Minute
	}
	return 30 * time.Second
}
