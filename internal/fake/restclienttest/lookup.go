package restclienttest

import "time"

// Category is a seeded (or listed) category, for tests to look ids up.
type Category struct {
	ID, Name, Classification, Color, Icon string
	ParentID                              string // "" for a root category
	CreatedAt, UpdatedAt                  time.Time
}

// Chat is one of a user's chats, for tests to look ids up.
type Chat struct {
	ID, Title            string
	MessageCount         int
	CreatedAt, UpdatedAt time.Time
}

// Categories returns the categories of key's family, ordered by name then id
// (the list endpoint's order); nil for an unknown key.
func (s *Server) Categories(key string) []Category {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return nil
	}
	cats := k.family.load().categories
	out := make([]Category, 0, len(cats))
	for _, c := range cats {
		out = append(out, c.export())
	}
	return out
}

// CategoryByName finds a category of key's family by its (unique) name.
func (s *Server) CategoryByName(key, name string) (Category, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return Category{}, false
	}
	if c := k.family.load().categoryNamed(name); c != nil {
		return c.export(), true
	}
	return Category{}, false
}

// Chats returns the chats of key's user, newest first (the list endpoint's
// order), including chats created through the API and the assistant's
// replies due by the clock's now; nil for an unknown key.
func (s *Server) Chats(key string) []Chat {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return nil
	}
	u := k.user.load()
	s.deliverReplies(u, s.clock()) // agree with what the API would show now
	chats := u.newestFirst()
	out := make([]Chat, 0, len(chats))
	for _, ch := range chats {
		out = append(out, Chat{
			ID:           ch.id,
			Title:        ch.title,
			MessageCount: len(ch.messages),
			CreatedAt:    ch.createdAt,
			UpdatedAt:    ch.updatedAt,
		})
	}
	return out
}

// ImportIDs returns the ids of the imports of key's family, in creation order;
// nil for an unknown key.
func (s *Server) ImportIDs(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return nil
	}
	imports := k.family.load().imports
	out := make([]string, 0, len(imports))
	for _, imp := range imports {
		out = append(out, imp.id)
	}
	return out
}

// AccountIDs returns the ids of the accounts of key's family, by name; nil
// for an unknown key.
func (s *Server) AccountIDs(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return nil
	}
	var out []string
	for _, a := range k.family.load().accounts {
		out = append(out, a.id)
	}
	return out
}

func (c *category) export() Category {
	out := Category{
		ID:             c.id,
		Name:           c.name,
		Classification: c.classification,
		Color:          c.color,
		Icon:           c.icon,
		CreatedAt:      c.createdAt,
		UpdatedAt:      c.updatedAt,
	}
	if c.parent != nil {
		out.ParentID = c.parent.id
	}
	return out
}
