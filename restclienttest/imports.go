package restclienttest

import "net/http"

// importJSON is the upstream's Import. Unlike the other resources, its
// timestamps use Rails' default JSON encoding (milliseconds), and "error" is
// left out entirely when the import has none.
type importJSON struct {
	ID            string       `json:"id"`
	Type          string       `json:"type"`
	Status        string       `json:"status"`
	CreatedAt     string       `json:"created_at"`
	UpdatedAt     string       `json:"updated_at"`
	AccountID     *string      `json:"account_id"`
	Error         string       `json:"error,omitempty"`
	Configuration importConfig `json:"configuration"`
	Stats         importStats  `json:"stats"`
}

type importStats struct {
	RowsCount      int `json:"rows_count"`
	ValidRowsCount int `json:"valid_rows_count"`
}

func (imp *importRecord) toJSON() importJSON {
	return importJSON{
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
}

// showImport is GET /api/v1/imports/{id}: {"data": Import}.
func (s *Server) showImport(c *call) response {
	if id, ok := castUUID(c.id); ok {
		if imp, ok := c.key.family.load().importByID[id]; ok {
			return jsonResponse(http.StatusOK, struct {
				Data importJSON `json:"data"`
			}{imp.toJSON()})
		}
	}
	return errorResponse(http.StatusNotFound, "not_found", "Import not found")
}
