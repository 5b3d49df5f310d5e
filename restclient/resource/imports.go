package resource

import (
	"slices"
	"strings"

	"github.com/suregql/suregql/internal/limits/badinput"
)

// Imports are the family's bulk imports (GET /imports, v0.6.7; the show since
// v0.6.0), newest first, under "data" with a "meta" block. An import moves
// by itself (pending, importing) until complete or failed: the list is
// moving, a settled import never changes.
var Imports = &Spec{
	Name: "imports", Kind: "import",
	List: "imports", Show: "imports/{id}",
	Envelope: Envelope{Items: "data", Block: "meta", Shape: MetaBlock, Object: "data"},
	Paging:   Paging{Style: Pagy, PerPage: 25, MaxPerPage: 100},
	Filters: []Filter{
		{Arg: "status", Param: "status", Check: importStatus},
		{Arg: "type", Param: "type", Check: importType},
	},
	Order:     Order{By: "created_at", Desc: true},
	Fresh:     Freshness{List: Moving, Show: Settled, Settles: true},
	ListSince: "v0.6.7",
}

// ImportStatuses are the states of an import (Sure's Import#status).
var ImportStatuses = []string{"pending", "importing", "complete", "failed", "reverting", "revert_failed"}

// importStatus refuses a status Sure does not have: it would match no
// import.
func importStatus(s string) error {
	if !slices.Contains(ImportStatuses, s) {
		return badinput.New("status", badinput.Quote(s)+" is not an import status: one of "+strings.Join(ImportStatuses, ", "))
	}
	return nil
}

// maxImportType bounds the type filter: a Ruby class name such as
// TransactionImport.
const maxImportType = 64

// importType refuses a type that cannot name a Ruby class (Sure's import
// types are its Import subclasses: letters, digits, "::").
func importType(s string) error {
	if !className(s) {
		return badinput.New("type", badinput.Quote(s)+" is not an import type such as TransactionImport")
	}
	return nil
}

func className(s string) bool {
	if len(s) > maxImportType || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (c < '0' || c > '9') && c != '_' && c != ':' {
			return false
		}
	}
	return true
}
