package restclienttest

import "net/http"

// categoryJSON is the upstream's Category. Classification is left out by
// Today's line (removed in v0.6.9, when categories lost their
// classification).
type categoryJSON struct {
	ID                 string       `json:"id"`
	Name               string       `json:"name"`
	Classification     string       `json:"classification,omitempty"`
	Color              string       `json:"color"`
	Icon               string       `json:"icon"`
	Parent             *categoryRef `json:"parent"`
	SubcategoriesCount int          `json:"subcategories_count"`
	CreatedAt          string       `json:"created_at"`
	UpdatedAt          string       `json:"updated_at"`
}

type categoryRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (c *category) toJSON(v Version) categoryJSON {
	out := categoryJSON{
		ID:                 c.id,
		Name:               c.name,
		Color:              c.color,
		Icon:               c.icon,
		SubcategoriesCount: c.subcategories,
		CreatedAt:          iso8601(c.createdAt),
		UpdatedAt:          iso8601(c.updatedAt),
	}
	if c.parent != nil {
		out.Parent = &categoryRef{ID: c.parent.id, Name: c.parent.name}
	}
	if v == Legacy {
		out.Classification = c.classification
	}
	return out
}

// listCategories is GET /api/v1/categories: the family's categories by name,
// filtered by roots_only, parent_id and (Legacy only) classification, a page
// at a time.
func (s *Server) listCategories(c *call) response {
	q := c.query
	// Each filter applies only when its parameter is present (not blank), as
	// in the upstream controller. Today's line has no classification filter:
	// the parameter is ignored and the whole list comes back.
	byClassification := s.version == Legacy && q.present("classification")
	rootsOnly := railsBoolean(q["roots_only"])
	if s.version == Legacy {
		rootsOnly = truthy(q["roots_only"])
	}
	byParent := q.present("parent_id")
	// The parent_id quirk: a value that is not a UUID is cast to NULL, and
	// "parent_id = NULL" becomes "parent_id IS NULL": the ROOT categories.
	parentID, parentIsUUID := castUUID(q["parent_id"])

	var matched []*category
	for _, cat := range c.key.family.load().categories {
		switch {
		case byClassification && cat.classification != q["classification"]:
			continue // any value but income/expense matches nothing
		case rootsOnly && cat.parent != nil:
			continue
		case byParent && !parentIsUUID && cat.parent != nil:
			continue
		case byParent && parentIsUUID && (cat.parent == nil || cat.parent.id != parentID):
			continue
		}
		matched = append(matched, cat)
	}

	page, from, to := paginate(len(matched), pageParam(q["page"]), categoriesPerPage(q["per_page"]))
	out := make([]categoryJSON, 0, to-from)
	for _, cat := range matched[from:to] {
		out = append(out, cat.toJSON(s.version))
	}
	return jsonResponse(http.StatusOK, struct {
		Categories []categoryJSON `json:"categories"`
		Pagination pagination     `json:"pagination"`
	}{out, page})
}

// showCategory is GET /api/v1/categories/{id}. An unknown id, another
// family's id or a non-UUID are all the same 404.
func (s *Server) showCategory(c *call) response {
	if id, ok := castUUID(c.id); ok {
		if cat, ok := c.key.family.load().categoryByID[id]; ok {
			return jsonResponse(http.StatusOK, cat.toJSON(s.version))
		}
	}
	return errorResponse(http.StatusNotFound, "not_found", "Category not found")
}
