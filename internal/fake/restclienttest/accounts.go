package restclienttest

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/suregql/suregql/restclient/resource"
)

// accountRecord is an account of a family (app/models/account.rb), its
// amounts in minor units.
type accountRecord struct {
	id, name, currency string
	classification     string // asset or liability
	accountType        string // accountable_type.underscore
	subtype            string // "": null
	institution        string // "": null
	balance, cash      int64
	createdAt          time.Time
}

// accountJSON is api/v1/accounts/_account.json.jbuilder, the object of both
// the list and the show (Today).
type accountJSON struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Balance           string  `json:"balance"`
	BalanceCents      int64   `json:"balance_cents"`
	CashBalance       string  `json:"cash_balance"`
	CashBalanceCents  int64   `json:"cash_balance_cents"`
	Currency          string  `json:"currency"`
	Classification    string  `json:"classification"`
	AccountType       string  `json:"account_type"`
	Subtype           *string `json:"subtype"`
	Status            string  `json:"status"`
	InstitutionName   *string `json:"institution_name"`
	InstitutionDomain *string `json:"institution_domain"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

// legacyAccountJSON is an element of v0.6.5's index: no cents, no cash
// balance, no subtype, status, institution nor times.
type legacyAccountJSON struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Balance        string `json:"balance"`
	Currency       string `json:"currency"`
	Classification string `json:"classification"`
	AccountType    string `json:"account_type"`
}

func (a *accountRecord) toJSON() accountJSON {
	return accountJSON{
		ID: a.id, Name: a.name,
		Balance: formatMoney(a.balance, a.currency), BalanceCents: a.balance,
		CashBalance: formatMoney(a.cash, a.currency), CashBalanceCents: a.cash,
		Currency: a.currency, Classification: a.classification, AccountType: a.accountType,
		Subtype: optional(a.subtype), Status: "active", InstitutionName: optional(a.institution),
		CreatedAt: iso8601(a.createdAt), UpdatedAt: iso8601(a.createdAt),
	}
}

// accountsCollection serves GET /api/v1/accounts (v0.6.0; name order, pagy
// under "accounts" and "pagination") and GET /api/v1/accounts/{id}
// (v0.6.7; the id must be a canonical UUID, any case), as
// resource.Accounts describes them; Legacy lists v0.6.5's shorter object.
func (s *Server) accountsCollection() served {
	return &collection[*accountRecord]{
		spec:    resource.Accounts,
		records: func(c *call) []*accountRecord { return c.key.family.load().accounts },
		byID: func(c *call, id string) (*accountRecord, bool) {
			for _, a := range c.key.family.load().accounts {
				if a.id == strings.ToLower(id) {
					return a, true
				}
			}
			return nil, false
		},
		listJSON: func(_ *call, a *accountRecord) any {
			if s.version == Legacy {
				return legacyAccountJSON{a.id, a.name, formatMoney(a.balance, a.currency), a.currency, a.classification, a.accountType}
			}
			return a.toJSON()
		},
		showJSON: func(_ *call, a *accountRecord) any { return a.toJSON() },
		notFound: func() response { return errorResponse(http.StatusNotFound, "not_found", "Account not found") },
	}
}

// addAccounts stores accounts and restores the list's order (by name).
func (f *family) addAccounts(accounts ...*accountRecord) {
	f.accounts = append(f.accounts, accounts...)
	sort.SliceStable(f.accounts, func(i, j int) bool { return f.accounts[i].name < f.accounts[j].name })
}

// currencySymbols are the symbols Money#format writes in the en locale.
var currencySymbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£"}

// formatMoney formats minor units of a currency of two decimals as Sure's
// Money#format does in the en locale: "$1,234.56", "-€12.00".
func formatMoney(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return sign + currencySymbols[currency] + whole + "." + strconv.FormatInt(100+cents%100, 10)[1:]
}
