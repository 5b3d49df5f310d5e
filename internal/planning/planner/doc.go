// Package planner decides which upstream calls a GraphQL operation makes,
// and makes them. It is the one place that does: resolvers (package graph)
// check their arguments with the Parse functions here, ask a *Planner for
// data with what their selection reads (Want, ChatWant), and map the
// answer. A *Planner is made per request by the HTTP edge (New, for the
// caller it made from the X-Api-Key header); nothing in it
// outlives the request or is shared between API keys. ARCHITECTURE.md
// puts it in the request's way and defines the words used here.
//
// # What each question costs
//
//	question                      | strategy (first that applies)                          | calls
//	------------------------------|--------------------------------------------------------|------------------------------
//	Categories (a window)         | a classification, the server known to have none       | 0 (UnsupportedError)
//	                              | empty by arithmetic                                    | 0
//	                              | family (or classification) read by this operation      | 0
//	                              | roots wanting subcategories: look-ahead reads the      | 1 (+ rest of family if it
//	                              |   family's first page, the rest only if cheaper        |   costs ≤ window+1 calls)
//	                              | a narrowed list (a classification, the roots, a        | 1 (the same call the list
//	                              |   parent's children), family likely ≤ 100: the         |   would cost; +1 the first
//	                              |   family's first page instead, answering everything    |   time a family is larger)
//	                              | otherwise the fewest pages that hold the window        | 1–2 typically (paging.Load)
//	Subcategories of a root       | leaf, or a subcategory (two levels only)               | 0
//	                              | more than 100: paged like Categories                   | as Categories
//	                              | else planned with every announced root (planParents):  |
//	                              |   in hand (family read, first page with its list)      | 0
//	                              |   a family read that failed upstream: the pages that   | 0 (no other plan: not the
//	                              |     arrived, its error (e.g. 503) for the rest         |   family again, nor per parent)
//	                              |   the family's list, when ceil(n/100) < parents left   | 1, then ceil(n/100)-1
//	                              |   one filtered list per parent left                    | 1 each, in parallel
//	Category / parent by id       | held by any answer of this operation, the operation's  | 0
//	                              |   root category lists included (planned after them)    |
//	                              | a family first page in flight: wait for it             | 0
//	                              | wants subcategories, family likely ≤ 100: first page   | 1 (not a show + a list)
//	                              | 2+ ids, family not known to be large: its first page   | 1 (answers every id it holds)
//	                              | the rest: one show each, in parallel                   | 1 each
//	Chats (a window)              | fewest fixed pages of 20                               | 1–2 typically
//	Chat by id                    | one show; page past the end when only the newest       | 1
//	                              |   messages are read (the upstream answers its last),   |
//	                              |   or the page where the window starts (after a cursor) |
//	Messages of a chat            | empty by arithmetic (the count is current)             | 0
//	                              | the page the show answer carried                       | 0
//	                              | otherwise the fewest fixed pages (20; 50 before        | 1–2 typically
//	                              |   Sure v0.6.6: the size the server's answers showed)   |
//	lastMessageAt                 | known from the answer (list, or a show holding it)     | 0
//	                              | else the last page, by number                          | 1
//	Show of a described resource  | one show (Show; an import by id)                       | 1
//	List of a described resource  | the server known to lack the list (ListSince, e.g.     | 0 (UnsupportedError)
//	  (List; e.g. imports)        |   imports before v0.6.7)                               |
//	                              | the fewest pages of its paging style (pagy pages of    | 1–2 typically
//	                              |   up to its largest per_page; fixed pages; unpaginated:|   (1 unpaginated)
//	                              |   the whole list, sliced)                              |
//	                              |   + one show per object when the selection reads what  |   + 1 each, reserved whole
//	                              |   the list does not send (the schema's hook: an        |
//	                              |   import's configuration, stats)                       |
//	Node by id (Nodes)            | every node field of the operation planned at once,     | the whole plan reserved
//	                              |   its most calls reserved before any (ExpectNodes)     |   once: all or none (0)
//	                              | held by any answer of this operation (waits for the    | 0
//	                              |   operation's category root fields)                    |
//	                              | told "not found" before (KindNone: every lookup 404;   | 0 (null)
//	                              |   per key, 10 min, forgotten by the key's writes)      |
//	                              | kind category or unknown: the family's first page      | 1 for all (0 held); a large
//	                              |   first (no other lookup for those it finds)           |   family: min(shows, pages)
//	                              | then any other kind (chats, and every described        | min(ids, list pages) per
//	                              |   resource alike), or unknown and not a category: a    |   kind: 0–1 per known id;
//	                              |   show each, or the kind's whole list (20 chats, 100   |   1 + 1 per other kind for
//	                              |   imports a page) when its pages are fewer and the     |   any number of unknown
//	                              |   selection takes a list element (no messages, only    |   ids in small lists
//	                              |   what each kind's list sends)                         |
//	CreateChat / UpdateChat       | the write, once; if its answer is lost, one read      | 1 (+1 to settle)
//	SendMessage / DeleteChat      |   settles it (ConfirmedByRead or OutcomeUnknownError)  |
//	CreateCategory                | the same; before v0.7.1 (known): UnsupportedError      | 1 (+1) · 0
//
// # What the planner learns of the server
//
// Sure has no version endpoint, and its 0.6 and 0.7 lines answer
// differently. Every answer shows something of the server (whether
// categories carry a classification, the page size of its messages,
// whether its router knows an endpoint): the planner records it in the
// shared TraitStore (per upstream, never per key) and plans with it, at no
// call of its own (upstream.go).
//
// # Planned together, at once
//
// The planner reads each operation once, when it begins (Begin, told by
// graph.Planning): the ids its category(id:) root fields look up, what
// its node fields ask, and which root fields hand out categories. A list
// hands out objects whose fields will ask for more (subcategories,
// parents): the planner announces those keys to a batcher as it answers
// the list. The first field to ask plans every announced key in one
// decision. Lookups by id wait for the operation's root category lists,
// and node lookups for its category root fields, whose answers may hold
// their ids: each root field says when it has answered
// (RootFieldAnswered), however it ends. No timer decides when planning
// happens.
//
// # Below the strategies
//
// Every GET goes through, in order: the operation's memo (nothing twice per
// operation), the shared per-key cache (when on), the coalescer (identical
// GETs of one key in flight share one call), the gate (the budget and the
// key's known quota, see budget.go), and the network with its retries. A
// write forgets the answers of its resource in the memo and the cache.
package planner
