package restclienttest

import "time"

// An import moves on its own on the upstream: a background job takes it
// from pending to importing to complete. The fake has no goroutine for
// that: an import added with AddProgressingImport books its steps on the
// fake's clock, and every request that reads the family's imports first
// applies the steps due by its clock's now (progressImports). A test
// moves the clock with SetClock; nothing sleeps.

// importStep is a booked change of an import's status.
type importStep struct {
	at     time.Time
	status string
}

// AddProgressingImport adds to key's family a TransactionImport of 12
// rows, pending now (on the fake's clock), importing after step and
// complete after twice step, and returns its id ("" for an unknown key).
func (s *Server) AddProgressingImport(key string, step time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return ""
	}
	now := s.clock().UTC()
	imp := &importRecord{
		id: s.mint("import"), kind: "TransactionImport", status: "pending",
		uploaded: true, rowsCount: 12, validRowsCount: 12,
		config:    importConfig{DateColLabel: str("Date"), AmountColLabel: str("Amount"), NameColLabel: str("Name")},
		createdAt: now, updatedAt: now,
		steps: []importStep{{at: now.Add(step), status: "importing"}, {at: now.Add(2 * step), status: "complete"}},
	}
	k.family.load().addImport(imp)
	return imp.id
}

// progressImports applies to f's imports every step due at or before
// now. s.mu is held.
func progressImports(f *family, now time.Time) {
	for _, imp := range f.imports {
		for len(imp.steps) > 0 && !imp.steps[0].at.After(now) {
			imp.status, imp.updatedAt = imp.steps[0].status, imp.steps[0].at
			imp.steps = imp.steps[1:]
		}
	}
}
