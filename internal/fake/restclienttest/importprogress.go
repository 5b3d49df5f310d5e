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
	return s.addProgressing(key, step, false)
}

// AddRepeatingImports is AddProgressingImport, and once the import is
// complete, the next read of the family's imports adds a new one that
// progresses the same way: the demo always has an import that moves.
func (s *Server) AddRepeatingImports(key string, step time.Duration) string {
	return s.addProgressing(key, step, true)
}

func (s *Server) addProgressing(key string, step time.Duration, repeat bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[key]
	if !ok {
		return ""
	}
	return s.progressing(k.family.load(), step, repeat, s.clock().UTC()).id
}

// progressing adds to f a pending import booked to progress by step from
// now. s.mu is held.
func (s *Server) progressing(f *family, step time.Duration, repeat bool, now time.Time) *importRecord {
	imp := &importRecord{
		id: s.mint("import"), kind: "TransactionImport", status: "pending",
		uploaded: true, rowsCount: 12, validRowsCount: 12,
		config:    importConfig{DateColLabel: str("Date"), AmountColLabel: str("Amount"), NameColLabel: str("Name")},
		createdAt: now, updatedAt: now,
		steps:  []importStep{{at: now.Add(step), status: "importing"}, {at: now.Add(2 * step), status: "complete"}},
		step:   step,
		repeat: repeat,
	}
	f.addImport(imp)
	return imp
}

// progressImports applies to f's imports every step due at or before
// now, and adds the next of a repeating import that completed. s.mu is
// held.
func (s *Server) progressImports(f *family, now time.Time) {
	var again []*importRecord
	for _, imp := range f.imports {
		for len(imp.steps) > 0 && !imp.steps[0].at.After(now) {
			imp.status, imp.updatedAt = imp.steps[0].status, imp.steps[0].at
			imp.steps = imp.steps[1:]
			if len(imp.steps) == 0 && imp.repeat {
				imp.repeat = false
				again = append(again, imp)
			}
		}
	}
	for _, imp := range again {
		s.progressing(f, imp.step, true, now)
	}
}
