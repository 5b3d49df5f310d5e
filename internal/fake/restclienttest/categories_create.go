package restclienttest

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"regexp"
	"strings"
)

// Defaults of a created category: the categories table's column defaults
// (Sure's db/schema.rb). Sure's controller first tries
// Category.suggested_icon, a keyword match on the name that falls back to
// "shapes"; UPSTREAM.md only promises "shapes", so the fake always uses it.
const (
	defaultCategoryColor = "#6172F3"
	defaultCategoryIcon  = "shapes"
	// defaultClassification is the column Sure kept, unused, when categories
	// lost their classification (classification_unused, default "expense").
	defaultClassification = "expense"
)

// hexColor is Category's color format validation.
var hexColor = regexp.MustCompile(`\A#[0-9A-Fa-f]{6}\z`)

// permittedCategoryKeys is category_params: permit(:name, :color, :icon, :parent_id).
var permittedCategoryKeys = []string{"name", "color", "icon", "parent_id"}

// createCategory is POST /api/v1/categories (Today only, from v0.7.1):
// {"category":{"name","color","icon","parent_id"}} → 201 with the Category.
// Sure's Api::V1::CategoriesController#create: a parent_id outside the
// family is refused first, then the model's validations run, and their
// messages are joined into one.
func (s *Server) createCategory(c *call) response {
	attrs, refusal, ok := requireCategory(c)
	if !ok {
		return refusal
	}
	f := c.key.family.load()

	var parent *category
	if attrs.present("parent_id") {
		// exists?(id: ...) casts a non-UUID to NULL: never found.
		if id, ok := castUUID(attrs["parent_id"]); ok {
			parent = f.categoryByID[id]
		}
		if parent == nil {
			return unprocessable("Parent must be a category in your family")
		}
	}

	color := defaultCategoryColor
	if attrs.has("color") {
		color = attrs["color"]
	}
	var errs []string
	// In the order Category declares its validations.
	if blank(attrs["name"]) {
		errs = append(errs, "Name can't be blank")
	}
	if blank(color) {
		errs = append(errs, "Color can't be blank")
	}
	if !hexColor.MatchString(color) {
		errs = append(errs, "Color is invalid")
	}
	if f.categoryNamed(attrs["name"]) != nil {
		errs = append(errs, "Name has already been taken")
	}
	if parent != nil && parent.parent != nil {
		errs = append(errs, "Parent can't have more than 2 levels of subcategories")
	}
	if len(errs) > 0 {
		return unprocessable(strings.Join(errs, ", "))
	}

	cat := &category{
		id:             s.mint("category"),
		name:           attrs["name"],
		classification: defaultClassification,
		color:          color,
		icon:           defaultCategoryIcon,
		parent:         parent,
		createdAt:      c.now,
		updatedAt:      c.now,
	}
	if attrs.present("icon") {
		cat.icon = attrs["icon"]
	}
	if parent != nil {
		// A subcategory takes its parent's color (inherit_color_from_parent,
		// a before_save: after the validations) and, internally, its
		// classification.
		cat.color, cat.classification = parent.color, parent.classification
	}
	f.addCategories(cat)
	return jsonResponse(http.StatusCreated, cat.toJSON(s.version))
}

// categoryNamed finds a category by its exact name (names are unique per
// family, case-sensitively).
func (f *family) categoryNamed(name string) *category {
	for _, c := range f.categories {
		if c.name == name {
			return c
		}
	}
	return nil
}

// unprocessable is the categories controller's 422.
func unprocessable(message string) response {
	return errorResponse(http.StatusUnprocessableEntity, "unprocessable_entity", message)
}

// categoryParamMissing is the base controller's answer to
// ActionController::ParameterMissing (rescue_from ... handle_bad_request).
func categoryParamMissing() response {
	return errorResponse(http.StatusBadRequest, "bad_request", "Required parameters are missing or invalid")
}

// requireCategory reads params.require(:category).permit(...): from a JSON
// body (with its Content-Type) or from form or query keys such as
// category[name]. A missing or blank category is ParameterMissing (400); a
// category that is a scalar or an array makes .permit raise NoMethodError,
// which nothing rescues (Rails' 500). Permitted members are read as strong
// parameters read scalars; objects and arrays are dropped.
func requireCategory(c *call) (attrs params, refusal response, ok bool) {
	contentType := c.req.Header.Get("Content-Type")
	flat, err := c.query.withBody(contentType, c.body)
	if err != nil {
		return nil, badRequest(), false
	}
	var raw any
	found := false
	if mediaType, _, _ := mime.ParseMediaType(contentType); mediaType == "application/json" {
		// withBody has already checked that the body parses.
		dec := json.NewDecoder(bytes.NewReader(c.body))
		dec.UseNumber()
		var body any
		_ = dec.Decode(&body)
		if obj, isObj := body.(map[string]any); isObj {
			raw, found = obj["category"]
		}
	}
	if !found {
		nested := map[string]any{}
		for k, v := range flat {
			if name, isNested := strings.CutPrefix(k, "category["); isNested && strings.HasSuffix(name, "]") {
				nested[strings.TrimSuffix(name, "]")] = v
			}
		}
		switch {
		case len(nested) > 0:
			raw, found = nested, true
		case flat.has("category"):
			raw, found = flat["category"], true
		}
	}
	if !found || rubyBlank(raw) {
		return nil, categoryParamMissing(), false
	}
	obj, isObj := raw.(map[string]any)
	if !isObj {
		return nil, railsException(http.StatusInternalServerError, "Internal Server Error"), false
	}
	attrs = params{}
	for _, k := range permittedCategoryKeys {
		switch v := obj[k].(type) {
		case string:
			attrs[k] = v
		case json.Number:
			attrs[k] = v.String()
		case bool:
			attrs[k] = map[bool]string{true: "true", false: "false"}[v]
		case nil:
			if _, sent := obj[k]; sent {
				attrs[k] = "" // null: sent, and blank
			}
		}
	}
	return attrs, response{}, true
}

// rubyBlank is Object#blank? on a decoded parameter: nil, false, a blank
// string, an empty object or array.
func rubyBlank(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return blank(v)
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
