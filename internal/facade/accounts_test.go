package facade_test

import (
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// accountNode is an Account as the facade answers it.
type accountNode struct {
	Typename string `json:"__typename"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Balance  struct {
		Formatted  string `json:"formatted"`
		MinorUnits *int64 `json:"minorUnits"`
		Currency   string `json:"currency"`
	} `json:"balance"`
	CashBalance *struct {
		Formatted  string `json:"formatted"`
		MinorUnits *int64 `json:"minorUnits"`
	} `json:"cashBalance"`
	Currency        string  `json:"currency"`
	Classification  *string `json:"classification"`
	AccountType     *string `json:"accountType"`
	Subtype         *string `json:"subtype"`
	Status          *string `json:"status"`
	InstitutionName *string `json:"institutionName"`
	CreatedAt       *string `json:"createdAt"`
}

const accountFields = `__typename id name balance { formatted minorUnits currency } cashBalance { formatted minorUnits }
	currency classification accountType subtype status institutionName createdAt`

// The accounts list and one account, on the resource layer: each one
// call, the money as Sure formats it with its minor units from the cents
// Sure sent, the classification as the enum.
func TestAccounts_ListAndShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	var out struct {
		Accounts struct {
			TotalCount int           `json:"totalCount"`
			Nodes      []accountNode `json:"nodes"`
		} `json:"accounts"`
	}
	r := e.ok(key, `{ accounts(first: 3) { totalCount nodes { `+accountFields+` } } }`, nil, &out)
	wantCalls(t, r, 1)
	if out.Accounts.TotalCount != 5 || len(out.Accounts.Nodes) != 3 {
		t.Fatalf("accounts = %+v, want 3 of 5", out.Accounts)
	}
	var names []string
	for _, a := range out.Accounts.Nodes {
		names = append(names, a.Name)
	}
	if got := names[0] + "," + names[1] + "," + names[2]; got != "Brokerage,Checking,Compte courant" {
		t.Errorf("names = %s, want Sure's name order", got)
	}
	b := out.Accounts.Nodes[0]
	if b.Balance.Formatted != "$25,120.44" || b.Balance.MinorUnits == nil || *b.Balance.MinorUnits != 2512044 || b.Balance.Currency != "USD" ||
		b.CashBalance == nil || *b.CashBalance.MinorUnits != 120000 || b.Classification == nil || *b.Classification != "ASSET" ||
		*b.AccountType != "investment" || *b.Subtype != "brokerage" || *b.Status != "active" || b.CreatedAt == nil {
		t.Errorf("brokerage = %+v", b)
	}
	if eur := out.Accounts.Nodes[2]; eur.Currency != "EUR" || eur.Balance.Formatted != "€2,300.50" || *eur.InstitutionName != "BNP Paribas" {
		t.Errorf("the EUR account = %+v", eur)
	}

	id := e.upstream.AccountIDs(key)[4] // Visa
	var one struct{ Account *accountNode }
	r = e.ok(key, `query($id: ID!) { account(id: $id) { `+accountFields+` } }`, map[string]any{"id": id}, &one)
	wantCalls(t, r, 1)
	if a := one.Account; a == nil || a.Name != "Visa" || *a.Classification != "LIABILITY" || *a.AccountType != "credit_card" || a.Subtype != nil {
		t.Errorf("account = %+v, want Visa, a liability", one.Account)
	}

	// A non-UUID costs nothing; an id of another family is not found.
	r = e.do(key, `{ account(id: "42") { id } }`, nil)
	wantError(t, r, "BAD_USER_INPUT")
	wantCalls(t, r, 0)
	other := e.upstream.AccountIDs(restclienttest.OtherFamilyKey)[0]
	r = e.do(key, `query($id: ID!) { account(id: $id) { id } }`, map[string]any{"id": other})
	wantError(t, r, "NOT_FOUND")
	wantCalls(t, r, 1)

	// A window past 100 is refused before any call.
	r = e.do(key, `{ accounts(first: 101) { nodes { id } } }`, nil)
	wantError(t, r, "BAD_USER_INPUT")
	wantCalls(t, r, 0)
}

// node(id) finds an account: a never-seen id by the account list (its
// elements are accounts whole) beside the other kinds' lookups, a known
// one by its one lookup.
func TestAccounts_Node(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := restclienttest.DemoKey
	id := e.upstream.AccountIDs(key)[1] // Checking
	q := `query($id: ID!) { node(id: $id) { __typename ... on Account { name balance { minorUnits } } } }`
	var out struct {
		Node *struct {
			Typename string `json:"__typename"`
			Name     string `json:"name"`
			Balance  struct {
				MinorUnits *int64 `json:"minorUnits"`
			} `json:"balance"`
		}
	}
	r := e.ok(key, q, map[string]any{"id": id}, &out)
	wantCalls(t, r, 4) // the family's page, a chat and an import show, the account list
	if out.Node == nil || out.Node.Typename != "Account" || out.Node.Name != "Checking" || *out.Node.Balance.MinorUnits != 481233 {
		t.Fatalf("node = %+v, want the Checking account", out.Node)
	}
	r = e.ok(key, q, map[string]any{"id": id}, &out)
	wantCalls(t, r, 1)
	if out.Node == nil || out.Node.Name != "Checking" {
		t.Errorf("node again = %+v", out.Node)
	}
}

// A 0.6 server (v0.6.5): the list sends no cents and no cash balance
// (minorUnits and cashBalance are null, never parsed from the text), and
// there is no show: account(id) is found in the list, the router's 404
// learnt once.
func TestAccounts_Legacy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withUpstream(restclienttest.WithVersion(restclienttest.Legacy)))
	key := restclienttest.DemoKey
	var out struct {
		Accounts struct {
			Nodes []accountNode `json:"nodes"`
		} `json:"accounts"`
	}
	r := e.ok(key, `{ accounts { nodes { `+accountFields+` } } }`, nil, &out)
	wantCalls(t, r, 1)
	if len(out.Accounts.Nodes) != 5 {
		t.Fatalf("accounts = %+v, want 5", out.Accounts.Nodes)
	}
	for _, a := range out.Accounts.Nodes {
		if a.Balance.Formatted == "" || a.Balance.MinorUnits != nil || a.CashBalance != nil || a.Status != nil || a.CreatedAt != nil || a.Classification == nil {
			t.Errorf("%s = %+v, want what v0.6.5 sends and nothing more", a.Name, a)
		}
	}

	id := e.upstream.AccountIDs(key)[3] // Savings
	q := `query($id: ID!) { account(id: $id) { name balance { formatted } } }`
	var one struct {
		Account *struct {
			Name string `json:"name"`
		}
	}
	r = e.ok(key, q, map[string]any{"id": id}, &one)
	wantCalls(t, r, 2) // the show the router lacks, then the list
	if one.Account == nil || one.Account.Name != "Savings" {
		t.Errorf("account = %+v, want Savings", one.Account)
	}
	r = e.ok(key, q, map[string]any{"id": id}, &one)
	wantCalls(t, r, 1) // known: the list alone
	r = e.do(key, q, map[string]any{"id": e.upstream.AccountIDs(restclienttest.OtherFamilyKey)[0]})
	wantError(t, r, "NOT_FOUND")
	wantCalls(t, r, 1)
}
