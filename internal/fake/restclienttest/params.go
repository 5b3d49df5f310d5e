package restclienttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"
	"unicode"
)

// params are the request parameters as a Rails controller sees them: the
// query string, overlaid by the body. For a repeated key Rack keeps the LAST
// value, and so do we.
type params map[string]string

// errBadJSON is a body sent as application/json that does not parse.
var errBadJSON = errors.New("malformed JSON body")

// queryParams parses a raw query string into params (last value wins).
func queryParams(rawQuery string) params {
	p := params{}
	values, _ := url.ParseQuery(rawQuery) // keeps what parsed, like Rack
	for k, vs := range values {
		p[k] = vs[len(vs)-1]
	}
	return p
}

// withBody returns p overlaid by the parameters of a request body of the given
// Content-Type. Like Rails, the body is read as JSON only when the media type
// is application/json; a form (urlencoded or multipart) is read as a form; any
// other body, a JSON one included, contributes nothing (hence the upstream's
// 422 "Title can't be blank" for JSON sent without its Content-Type).
func (p params) withBody(contentType string, body []byte) (params, error) {
	out := params{}
	for k, v := range p {
		out[k] = v
	}
	mediaType, mediaParams, _ := mime.ParseMediaType(contentType)
	switch mediaType {
	case "application/json":
		return out, mergeJSON(out, body)
	case "application/x-www-form-urlencoded":
		values, _ := url.ParseQuery(string(body))
		for k, vs := range values {
			out[k] = vs[len(vs)-1]
		}
	case "multipart/form-data":
		r := multipart.NewReader(bytes.NewReader(body), mediaParams["boundary"])
		for {
			part, err := r.NextPart()
			if err != nil {
				break // io.EOF or a broken body: keep what was read
			}
			if part.FileName() == "" {
				v, _ := io.ReadAll(part)
				out[part.FormName()] = string(v)
			}
		}
	}
	return out, nil
}

// mergeJSON adds the scalar members of a JSON object body to p, as strong
// parameters would permit them: strings as is, numbers and booleans as their
// text (Rails casts them when assigning a string attribute), null as blank.
// Objects and arrays are not permitted scalars and are dropped. A body that is
// not an object (Rails files it under "_json") adds nothing; an empty body is
// an empty object.
func mergeJSON(p params, body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errBadJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return errBadJSON // trailing data
	}
	obj, _ := v.(map[string]any)
	for k, member := range obj {
		switch m := member.(type) {
		case string:
			p[k] = m
		case json.Number:
			p[k] = m.String()
		case bool:
			if m {
				p[k] = "true"
			} else {
				p[k] = "false"
			}
		case nil:
			p[k] = ""
		}
	}
	return nil
}

// present is Rails' Object#present? on a parameter: set and not blank
// (whitespace only is blank).
func (p params) present(key string) bool {
	return !blank(p[key])
}

// has reports whether the parameter was sent at all (even blank or null).
func (p params) has(key string) bool {
	_, ok := p[key]
	return ok
}

// blank is Rails' String#blank?: empty or whitespace only.
func blank(s string) bool {
	return strings.TrimFunc(s, unicode.IsSpace) == ""
}

// truthy reads a boolean flag the way the Legacy upstream reads roots_only:
// true, 1, t and on, case-insensitive; anything else is false.
func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "true", "1", "t", "on":
		return true
	}
	return false
}

// railsFalse are the strings ActiveModel::Type::Boolean casts to false.
var railsFalse = map[string]bool{"0": true, "f": true, "F": true, "false": true, "FALSE": true, "off": true, "OFF": true}

// railsBoolean reads roots_only the way Today's upstream does (from v0.6.9):
// `present? && ActiveModel::Type::Boolean.new.cast(value)`. Blank is false,
// the seven strings of railsFalse are false, and everything else is true,
// "no", "False" and "Off" included.
func railsBoolean(s string) bool {
	return !blank(s) && !railsFalse[s]
}
