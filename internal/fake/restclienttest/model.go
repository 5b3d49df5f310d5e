package restclienttest

import (
	"encoding/json"
	"sort"
	"time"
)

// family owns categories and imports: the upstream scopes both to the API
// key's family.
type family struct {
	categories   []*category // ordered by name then id: the list endpoint's order
	categoryByID map[string]*category
	imports      []*importRecord // in creation order
	importByID   map[string]*importRecord
	accounts     []*accountRecord // by name: the list endpoint's order

	// seed, when set, fills the family on first use and is then cleared: it
	// keeps New() fast for the large family most tests never touch.
	seed func(*family)
}

// user owns chats: the upstream scopes them to the API key's user.
type user struct {
	aiEnabled bool
	chats     []*chat // in creation order; the list endpoint sorts them
	chatByID  map[string]*chat
	nextSeq   int            // the seq of the next chat: chats can be deleted, so not len(chats)
	pending   []pendingReply // the assistant's replies not delivered yet, in send order

	seed func(*user) // as family.seed
}

// pendingReply is an assistant reply the upstream's background job has not
// written yet: it appears in the chat once the clock reaches due.
type pendingReply struct {
	chat     *chat
	question *message
	due      time.Time
}

type category struct {
	id, name       string
	classification string // "income" or "expense"; a subcategory has its parent's. Rendered by Legacy only (Sure dropped it in v0.6.9)
	color, icon    string // a subcategory has its parent's color (Sure's inherit_color_from_parent)
	parent         *category
	subcategories  int
	createdAt      time.Time
	updatedAt      time.Time
}

type chat struct {
	id, title string
	errMsg    string // "" when the chat has no error: rendered as null
	seq       int    // creation order, to break created_at ties deterministically
	createdAt time.Time
	updatedAt time.Time
	messages  []*message // oldest first
}

type message struct {
	id        string
	assistant bool // AssistantMessage when true, UserMessage otherwise
	content   string
	model     string // stored for every message, rendered for assistant messages only
	toolCalls []toolCall
	createdAt time.Time
	updatedAt time.Time
}

type toolCall struct {
	id           string
	functionName string
	arguments    json.RawMessage // a JSON object
	result       json.RawMessage // any JSON; nil renders as null
	createdAt    time.Time
}

type importRecord struct {
	id, kind, status string
	accountID        string // "" renders as null
	errMsg           string // "" means the "error" key is absent
	config           importConfig
	uploaded         bool // a file was uploaded (Sure's raw_file_str.present?)
	rowsCount        int  // the import's rows_count column
	validRowsCount   int
	invalidRowsCount int
	mappingsCount    int          // category, tag and account mappings the rows need
	unassignedCount  int          // mappings still without a record to map to
	seq              int          // creation order, to break created_at ties deterministically
	steps            []importStep // booked status changes, earliest first (AddProgressingImport)
	step             time.Duration
	repeat           bool // once complete, a new one follows (AddRepeatingImports)
	createdAt        time.Time
	updatedAt        time.Time
}

// importConfig is the column mapping of an import; every field may be null,
// so it doubles as its own JSON shape.
type importConfig struct {
	DateColLabel      *string `json:"date_col_label"`
	AmountColLabel    *string `json:"amount_col_label"`
	NameColLabel      *string `json:"name_col_label"`
	CategoryColLabel  *string `json:"category_col_label"`
	TagsColLabel      *string `json:"tags_col_label"`
	NotesColLabel     *string `json:"notes_col_label"`
	AccountColLabel   *string `json:"account_col_label"`
	DateFormat        *string `json:"date_format"`
	NumberFormat      *string `json:"number_format"`
	SignageConvention *string `json:"signage_convention"`
}

func newFamily(seed func(*family)) *family {
	return &family{
		categoryByID: map[string]*category{},
		importByID:   map[string]*importRecord{},
		seed:         seed,
	}
}

func newUser(aiEnabled bool, seed func(*user)) *user {
	return &user{aiEnabled: aiEnabled, chatByID: map[string]*chat{}, seed: seed}
}

// load runs the pending seed, if any. Callers hold Server.mu.
func (f *family) load() *family {
	if seed := f.seed; seed != nil {
		f.seed = nil
		seed(f)
	}
	return f
}

// load runs the pending seed, if any. Callers hold Server.mu.
func (u *user) load() *user {
	if seed := u.seed; seed != nil {
		u.seed = nil
		seed(u)
	}
	return u
}

// addCategories stores cats, counts subcategories and restores the list order.
func (f *family) addCategories(cats ...*category) {
	for _, c := range cats {
		f.categories = append(f.categories, c)
		f.categoryByID[c.id] = c
		if c.parent != nil {
			c.parent.subcategories++
		}
	}
	// Byte order, like a PostgreSQL "C" collation; id breaks ties so that
	// pages never overlap.
	sort.Slice(f.categories, func(i, j int) bool {
		a, b := f.categories[i], f.categories[j]
		if a.name != b.name {
			return a.name < b.name
		}
		return a.id < b.id
	})
}

func (f *family) addImport(imp *importRecord) {
	imp.seq = len(f.imports)
	f.imports = append(f.imports, imp)
	f.importByID[imp.id] = imp
}

// newestImports returns the family's imports as the upstream lists them
// (Import.ordered): created_at descending, the later-created first on a tie.
func (f *family) newestImports() []*importRecord {
	out := make([]*importRecord, len(f.imports))
	copy(out, f.imports)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].createdAt.Equal(out[j].createdAt) {
			return out[i].createdAt.After(out[j].createdAt)
		}
		return out[i].seq > out[j].seq
	})
	return out
}

func (u *user) addChat(c *chat) {
	c.seq = u.nextSeq
	u.nextSeq++
	u.chats = append(u.chats, c)
	u.chatByID[c.id] = c
}

// removeChat deletes a chat with its messages (and any reply still due).
func (u *user) removeChat(c *chat) {
	delete(u.chatByID, c.id)
	for i, ch := range u.chats {
		if ch == c {
			u.chats = append(u.chats[:i], u.chats[i+1:]...)
			break
		}
	}
}

// newestFirst returns the user's chats as the upstream lists them:
// created_at descending (the later-created first on a tie).
func (u *user) newestFirst() []*chat {
	out := make([]*chat, len(u.chats))
	copy(out, u.chats)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].createdAt.Equal(out[j].createdAt) {
			return out[i].createdAt.After(out[j].createdAt)
		}
		return out[i].seq > out[j].seq
	})
	return out
}
