package restclienttest

import (
	"net/http"

	"github.com/suregql/suregql/restclient/resource"
)

// importJSON is the upstream's Import (GET /imports/{id}). Unlike the other
// resources, its timestamps use Rails' default JSON encoding (milliseconds),
// and "error" is left out entirely when the import has none. Today's line
// (v0.7.1) adds status_detail and more stats.
type importJSON struct {
	ID            string            `json:"id"`
	Type          string            `json:"type"`
	Status        string            `json:"status"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	AccountID     *string           `json:"account_id"`
	Error         string            `json:"error,omitempty"`
	StatusDetail  *statusDetailJSON `json:"status_detail,omitempty"`
	Configuration importConfig      `json:"configuration"`
	Stats         importStats       `json:"stats"`
}

// importStats are an import's counts. The pointers are Today's additions,
// left out by Legacy.
type importStats struct {
	RowsCount               int  `json:"rows_count"`
	ValidRowsCount          int  `json:"valid_rows_count"`
	InvalidRowsCount        *int `json:"invalid_rows_count,omitempty"`
	MappingsCount           *int `json:"mappings_count,omitempty"`
	UnassignedMappingsCount *int `json:"unassigned_mappings_count,omitempty"`
}

// statusDetailJSON is api/v1/imports/_status_detail.json.jbuilder: the list
// renders the first three members only (include_validation_stats: false),
// the show all six.
type statusDetailJSON struct {
	Uploaded    bool  `json:"uploaded"`
	Configured  bool  `json:"configured"`
	Terminal    bool  `json:"terminal"`
	Cleaned     *bool `json:"cleaned,omitempty"`
	Publishable *bool `json:"publishable,omitempty"`
	Revertable  *bool `json:"revertable,omitempty"`
}

// importItemJSON is an element of GET /imports (api/v1/imports/index.json.jbuilder).
type importItemJSON struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Status       string           `json:"status"`
	CreatedAt    string           `json:"created_at"`
	UpdatedAt    string           `json:"updated_at"`
	AccountID    *string          `json:"account_id"`
	RowsCount    int              `json:"rows_count"`
	Error        string           `json:"error,omitempty"`
	StatusDetail statusDetailJSON `json:"status_detail"`
}

// statusDetail derives the status detail as Sure's Import model does
// (app/models/import.rb): uploaded is "a file was uploaded"; configured is
// uploaded with rows; terminal is complete, failed or revert_failed. With
// the validation stats: cleaned is configured without invalid rows;
// publishable is cleaned with every mapping valid (here: none unassigned);
// revertable is complete or revert_failed. Sure's publishable does not look
// at the status.
func (imp *importRecord) statusDetail(withValidation bool) statusDetailJSON {
	configured := imp.uploaded && imp.rowsCount > 0
	out := statusDetailJSON{
		Uploaded:   imp.uploaded,
		Configured: configured,
		Terminal:   imp.status == "complete" || imp.status == "failed" || imp.status == "revert_failed",
	}
	if withValidation {
		cleaned := configured && imp.invalidRowsCount == 0
		publishable := cleaned && imp.unassignedCount == 0
		revertable := imp.status == "complete" || imp.status == "revert_failed"
		out.Cleaned, out.Publishable, out.Revertable = &cleaned, &publishable, &revertable
	}
	return out
}

func (imp *importRecord) toJSON(v Version) importJSON {
	out := importJSON{
		ID:            imp.id,
		Type:          imp.kind,
		Status:        imp.status,
		CreatedAt:     railsJSONTime(imp.createdAt),
		UpdatedAt:     railsJSONTime(imp.updatedAt),
		AccountID:     optional(imp.accountID),
		Error:         imp.errMsg,
		Configuration: imp.config,
		Stats:         importStats{RowsCount: imp.rowsCount, ValidRowsCount: imp.validRowsCount},
	}
	if v == Today {
		detail := imp.statusDetail(true)
		out.StatusDetail = &detail
		invalid, mappings, unassigned := imp.invalidRowsCount, imp.mappingsCount, imp.unassignedCount
		out.Stats.InvalidRowsCount = &invalid
		out.Stats.MappingsCount = &mappings
		out.Stats.UnassignedMappingsCount = &unassigned
	}
	return out
}

func (imp *importRecord) itemJSON() importItemJSON {
	return importItemJSON{
		ID:           imp.id,
		Type:         imp.kind,
		Status:       imp.status,
		CreatedAt:    railsJSONTime(imp.createdAt),
		UpdatedAt:    railsJSONTime(imp.updatedAt),
		AccountID:    optional(imp.accountID),
		RowsCount:    imp.rowsCount,
		Error:        imp.errMsg,
		StatusDetail: imp.statusDetail(false),
	}
}

// importsCollection serves GET /api/v1/imports (from v0.6.7: the
// family's imports newest first, filtered by status and type, per_page
// 1..100 else 25, under "data" and "meta") and GET /api/v1/imports/{id}
// ({"data": Import}), as resource.Imports describes them; either read
// first moves the imports whose status changes are due.
func (s *Server) importsCollection() served {
	family := func(c *call) *family {
		f := c.key.family.load()
		s.progressImports(f, c.now)
		return f
	}
	return &collection[*importRecord]{
		spec:    resource.Imports,
		records: func(c *call) []*importRecord { return family(c).newestImports() },
		byID: func(c *call, id string) (*importRecord, bool) {
			u, ok := castUUID(id)
			if !ok {
				return nil, false
			}
			imp, ok := family(c).importByID[u]
			return imp, ok
		},
		field: func(imp *importRecord, arg string) string {
			if arg == "status" {
				return imp.status
			}
			return imp.kind // "type"
		},
		listJSON: func(_ *call, imp *importRecord) any { return imp.itemJSON() },
		showJSON: func(_ *call, imp *importRecord) any { return imp.toJSON(s.version) },
		notFound: func() response { return errorResponse(http.StatusNotFound, "not_found", "Import not found") },
	}
}
