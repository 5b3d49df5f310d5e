package graph

import (
	"strings"

	"github.com/suregql/suregql/graph/model"
)

// moneyOf maps an amount as Sure sent it: formatted and currency as sent,
// minorUnits from the *_cents Sure sent with the sign of formatted (Sure
// writes "-" before the format of a negative amount), never parsed from
// the localized text; nil when Sure sent none (v0.6.5).
func moneyOf(formatted string, cents *int64, currency string) *model.Money {
	m := &model.Money{Formatted: formatted, Currency: currency}
	if cents != nil {
		n := *cents
		if n < 0 {
			n = -n
		}
		if strings.HasPrefix(strings.TrimSpace(formatted), "-") {
			n = -n
		}
		m.MinorUnits = &n
	}
	return m
}

// nonEmpty is s, or nil when it is empty (not sent).
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
