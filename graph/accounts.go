package graph

import (
	"strings"

	"github.com/suregql/suregql/graph/model"
	"github.com/suregql/suregql/restclient"
)

// accounts is Sure's accounts on the resource layer (restclient.Accounts):
// Query.accounts and Query.account, and node(id) of an Account. The list
// sends the whole account: no lookup hooks.
var accounts = describe(&described[restclient.Account, restclient.Account, model.Account, model.AccountEdge, model.AccountConnection]{
	coll:     restclient.Accounts,
	fromList: accountFromREST,
	fromShow: accountFromREST,
	edge: func(cursor string, n *model.Account) *model.AccountEdge {
		return &model.AccountEdge{Cursor: cursor, Node: n}
	},
	conn: func(w window[*model.Account, *model.AccountEdge]) *model.AccountConnection {
		return &model.AccountConnection{Nodes: w.nodes, Edges: w.edges, PageInfo: w.info, TotalCount: w.total}
	},
})

func accountFromREST(a *restclient.Account) *model.Account {
	out := &model.Account{
		ID:              a.ID,
		Name:            a.Name,
		Balance:         moneyOf(a.Balance, a.BalanceCents, a.Currency),
		Currency:        a.Currency,
		AccountType:     nonEmpty(a.AccountType),
		Subtype:         a.Subtype,
		Status:          a.Status,
		InstitutionName: a.InstitutionName,
		CreatedAt:       a.CreatedAt,
		UpdatedAt:       a.UpdatedAt,
	}
	if a.CashBalance != nil {
		out.CashBalance = moneyOf(*a.CashBalance, a.CashBalanceCents, a.Currency)
	}
	if c := model.AccountClassification(strings.ToUpper(a.Classification)); c.IsValid() {
		out.Classification = &c
	}
	return out
}
