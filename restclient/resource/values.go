package resource

import (
	"fmt"
	"net/url"
)

// Values are the filter values of one read of a list, by the filter's
// Arg. An absent or empty value filters nothing.
type Values map[string][]string

// One returns the values of a filter of one value: v's string, or none
// when v is nil or empty.
func One(v *string) []string {
	if v == nil || *v == "" {
		return nil
	}
	return []string{*v}
}

// Check runs each value through its filter's Check: the first refusal,
// or nil. A value of no filter of s is a programming error, refused too.
func (s *Spec) Check(v Values) error {
	for arg, vals := range v {
		f := s.Filter(arg)
		if f == nil {
			return fmt.Errorf("resource: %s has no filter %q", s.Name, arg)
		}
		if len(vals) > 1 && !f.Many {
			return fmt.Errorf("resource: the filter %q of %s takes one value", arg, s.Name)
		}
		for _, val := range vals {
			if val == "" || f.Check == nil {
				continue
			}
			if err := f.Check(val); err != nil {
				return err
			}
		}
	}
	return nil
}

// Query returns the query parameters that send v: each non-empty value
// under its filter's Param.
func (s *Spec) Query(v Values) url.Values {
	q := url.Values{}
	for _, f := range s.Filters {
		for _, val := range v[f.Arg] {
			if val != "" {
				q.Add(f.Param, val)
			}
		}
	}
	return q
}

// ListName names the list read with v, for cursors: a cursor is valid
// only on the list (and filters) it was made for. Every filter of s is
// named, set or not ("imports?status=&type=").
func (s *Spec) ListName(v Values) string {
	q := url.Values{}
	for _, f := range s.Filters {
		q[f.Arg] = []string{""}
		var set []string
		for _, val := range v[f.Arg] {
			if val != "" {
				set = append(set, val)
			}
		}
		if len(set) > 0 {
			q[f.Arg] = set
		}
	}
	return string(s.Name) + "?" + q.Encode()
}
