package restclient

import "github.com/suregql/suregql/restclient/resource"

// Imports is the family's bulk imports (resource.Imports): the list sends
// ImportSummary, the show Import.
var Imports = &Collection[ImportSummary, Import]{
	Spec:        resource.Imports,
	ID:          func(i *ImportSummary) string { return i.ID },
	ShowID:      func(i *Import) string { return i.ID },
	Key:         func(i *ImportSummary) string { return TimeKey(i.CreatedAt) },
	Settled:     func(i *ImportSummary) bool { return ImportSettled(i.Status) },
	ShowSettled: func(i *Import) bool { return ImportSettled(i.Status) },
}

// ImportSettled reports whether status is one an import stays in by
// itself: complete, failed or revert_failed. Any other (pending,
// importing, reverting, or one this client does not know) may change
// without a write.
func ImportSettled(status string) bool {
	switch status {
	case "complete", "failed", "revert_failed":
		return true
	}
	return false
}

// validate checks a listed import (its id is checked by the collection).
func (im *ImportSummary) validate() error {
	if im.RowsCount != nil && *im.RowsCount < 0 {
		return notSure("import %s: negative rows_count %d", im.ID, *im.RowsCount)
	}
	return nil
}

// validate checks a shown import's counts.
func (im *Import) validate() error {
	s := &im.Stats
	if s.RowsCount < 0 {
		return notSure("import %s: negative stats.rows_count %d", im.ID, s.RowsCount)
	}
	for _, n := range []*int{s.ValidRowsCount, s.InvalidRowsCount, s.MappingsCount, s.UnassignedMappingsCount} {
		if n != nil && *n < 0 {
			return notSure("import %s: a negative count in stats (%d)", im.ID, *n)
		}
	}
	return nil
}
