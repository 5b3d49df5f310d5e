package restclient

import (
	"time"

	"github.com/suregql/suregql/restclient/resource"
)

// Account is a financial account as GET /accounts and GET /accounts/{id}
// answer it (the same object); what v0.6.5's list does not send (cents,
// cash balance, subtype, status, institution, times) is nil.
type Account struct {
	ID                string     `json:"id"`
	Name              string     `json:"name"`
	Balance           string     `json:"balance"` // formatted, e.g. "$1,234.56"
	BalanceCents      *int64     `json:"balance_cents"`
	CashBalance       *string    `json:"cash_balance"`
	CashBalanceCents  *int64     `json:"cash_balance_cents"`
	Currency          string     `json:"currency"`
	Classification    string     `json:"classification"` // asset or liability
	AccountType       string     `json:"account_type"`   // e.g. depository, credit_card
	Subtype           *string    `json:"subtype"`
	Status            *string    `json:"status"`
	InstitutionName   *string    `json:"institution_name"`
	InstitutionDomain *string    `json:"institution_domain"`
	CreatedAt         *time.Time `json:"created_at"`
	UpdatedAt         *time.Time `json:"updated_at"`
}

// Accounts is the family's accounts (resource.Accounts). An element of
// the list is the show's object: a server without the show (before
// v0.6.7) is answered from the list.
var Accounts = &Collection[Account, Account]{
	Spec:     resource.Accounts,
	ID:       func(a *Account) string { return a.ID },
	ShowID:   func(a *Account) string { return a.ID },
	Key:      func(a *Account) string { return a.Name },
	FromList: func(a *Account) *Account { return a },
}
