package restclienttest

import (
	"fmt"
	"time"
)

// demoRoots are Sure's 22 default categories (Category.default_categories),
// with their colors, lucide icons and classifications: Income is the only
// income root.
var demoRoots = []struct{ name, color, icon, classification string }{
	{"Income", "#22c55e", "circle-dollar-sign", "income"},
	{"Food & Drink", "#f97316", "utensils", "expense"},
	{"Groceries", "#407706", "shopping-bag", "expense"},
	{"Shopping", "#3b82f6", "shopping-cart", "expense"},
	{"Transportation", "#0ea5e9", "bus", "expense"},
	{"Travel", "#2563eb", "plane", "expense"},
	{"Entertainment", "#a855f7", "drama", "expense"},
	{"Healthcare", "#4da568", "pill", "expense"},
	{"Personal Care", "#14b8a6", "scissors", "expense"},
	{"Home Improvement", "#d97706", "hammer", "expense"},
	{"Mortgage / Rent", "#b45309", "home", "expense"},
	{"Utilities", "#eab308", "lightbulb", "expense"},
	{"Subscriptions", "#6366f1", "wifi", "expense"},
	{"Insurance", "#0284c7", "shield", "expense"},
	{"Sports & Fitness", "#10b981", "dumbbell", "expense"},
	{"Gifts & Donations", "#61c9ea", "hand-helping", "expense"},
	{"Taxes", "#dc2626", "landmark", "expense"},
	{"Loan Payments", "#e11d48", "credit-card", "expense"},
	{"Services", "#7c3aed", "briefcase", "expense"},
	{"Fees", "#6b7280", "receipt", "expense"},
	{"Savings & Investments", "#059669", "piggy-bank", "expense"},
	{"Investment Contributions", "#0d9488", "trending-up", "expense"},
}

// demoSubcategories are the subcategories the demo user added, by parent
// ({name, icon}). "Groceries" is a default root, so it is no subcategory here:
// names are unique per family.
var demoSubcategories = []struct {
	parent string
	subs   [][2]string
}{
	{"Income", [][2]string{{"Salary", "wallet"}, {"Bonus", "award"}, {"Interest & Dividends", "coins"}}},
	{"Food & Drink", [][2]string{{"Restaurants", "cooking-pot"}, {"Coffee Shops", "coffee"}, {"Fast Food", "pizza"}}},
	{"Transportation", [][2]string{{"Gas & Fuel", "fuel"}, {"Parking", "circle-parking"}, {"Public Transit", "train"}, {"Rideshare", "car"}}},
	{"Utilities", [][2]string{{"Electricity", "zap"}, {"Internet", "wifi"}, {"Water", "droplet"}, {"Mobile Phone", "smartphone"}}},
	{"Healthcare", [][2]string{{"Pharmacy", "pill"}, {"Doctor", "stethoscope"}, {"Dental", "shield-plus"}}},
	{"Mortgage / Rent", [][2]string{{"Rent", "key"}, {"Mortgage", "house"}}},
	{"Entertainment", [][2]string{{"Movies & Events", "film"}, {"Games", "gamepad-2"}}},
	{"Travel", [][2]string{{"Flights", "plane"}, {"Hotels", "hotel"}}},
}

// seedDemoFamily: the 22 default roots (bootstrapped one second apart when the
// family was created) and 23 subcategories added the next day: 45 categories.
// Three imports: complete (clean, revertable), failed (3 invalid rows) and
// pending (every row invalid, mappings unassigned).
func seedDemoFamily(f *family) {
	cs := &categorySeeder{prefix: "demo"}
	bootstrap := at("2025-12-17T15:00:01Z")
	roots := map[string]*category{}
	for i, r := range demoRoots {
		roots[r.name] = cs.root(r.name, r.classification, r.color, r.icon, bootstrap.Add(time.Duration(i)*time.Second))
	}
	added := at("2025-12-18T09:30:00Z")
	for _, group := range demoSubcategories {
		for _, s := range group.subs {
			cs.sub(roots[group.parent], s[0], s[1], added)
			added = added.Add(time.Minute)
		}
	}
	cs.into(f)

	f.addImport(&importRecord{
		id:        seedID("demo/import/1"),
		kind:      "TransactionImport",
		status:    "complete",
		accountID: seedID("demo/account/Checking"),
		config: importConfig{
			DateColLabel:      str("Date"),
			AmountColLabel:    str("Amount"),
			NameColLabel:      str("Name"),
			CategoryColLabel:  str("Category"),
			TagsColLabel:      str("Tags"),
			NotesColLabel:     str("Notes"),
			AccountColLabel:   str("Account"),
			DateFormat:        str("%Y-%m-%d"),
			NumberFormat:      str("1,234.56"),
			SignageConvention: str("inflows_positive"),
		},
		uploaded:       true,
		rowsCount:      120,
		validRowsCount: 120,
		mappingsCount:  9, // its categories, tags and account, all mapped
		createdAt:      at("2026-01-10T11:39:18.123Z"),
		updatedAt:      at("2026-01-10T11:39:22.481Z"),
	})
	f.addImport(&importRecord{
		id:        seedID("demo/import/2"),
		kind:      "TradeImport",
		status:    "failed",
		accountID: seedID("demo/account/Brokerage"),
		errMsg:    "Row 14: Price can't be blank",
		config: importConfig{
			DateColLabel:      str("Trade Date"),
			AmountColLabel:    str("Price"),
			NameColLabel:      str("Ticker"),
			AccountColLabel:   str("Account"),
			DateFormat:        str("%m/%d/%Y"),
			NumberFormat:      str("1.234,56"),
			SignageConvention: str("inflows_negative"),
		},
		uploaded:         true,
		rowsCount:        42,
		validRowsCount:   39,
		invalidRowsCount: 3,
		mappingsCount:    2,
		createdAt:        at("2026-01-11T08:02:45.007Z"),
		updatedAt:        at("2026-01-11T08:03:10.950Z"),
	})
	f.addImport(&importRecord{
		id:     seedID("demo/import/3"),
		kind:   "TransactionImport",
		status: "pending",
		// Uploaded and split into rows, but most columns are not mapped yet:
		// no account, every row invalid, no category mapped to a record.
		config: importConfig{
			DateColLabel:   str("Date"),
			AmountColLabel: str("Amount"),
			DateFormat:     str("%d/%m/%Y"),
			NumberFormat:   str("1 234,56"),
		},
		uploaded:         true,
		rowsCount:        18,
		validRowsCount:   0,
		invalidRowsCount: 18,
		mappingsCount:    4,
		unassignedCount:  4,
		createdAt:        at("2026-01-12T17:20:05.310Z"),
		updatedAt:        at("2026-01-12T17:20:05.310Z"),
	})
	opened := at("2025-12-17T15:00:01Z")
	f.addAccounts(
		&accountRecord{id: seedID("demo/account/checking"), name: "Checking", currency: "USD", classification: "asset", accountType: "depository", subtype: "checking", institution: "Chase", balance: 481233, createdAt: opened},
		&accountRecord{id: seedID("demo/account/savings"), name: "Savings", currency: "USD", classification: "asset", accountType: "depository", subtype: "savings", institution: "Chase", balance: 1520000, createdAt: opened},
		&accountRecord{id: seedID("demo/account/visa"), name: "Visa", currency: "USD", classification: "liability", accountType: "credit_card", institution: "Chase", balance: 61209, createdAt: opened},
		&accountRecord{id: seedID("demo/account/brokerage"), name: "Brokerage", currency: "USD", classification: "asset", accountType: "investment", subtype: "brokerage", balance: 2512044, cash: 120000, createdAt: opened.Add(time.Hour)},
		&accountRecord{id: seedID("demo/account/compte"), name: "Compte courant", currency: "EUR", classification: "asset", accountType: "depository", subtype: "checking", institution: "BNP Paribas", balance: 230050, createdAt: opened.Add(2 * time.Hour)},
	)
}

// Function calls as Sure's assistant makes them.
var (
	januaryTransactions = tool{
		name: "get_transactions",
		args: `{"page":1,"order":"desc","start_date":"2026-01-01","end_date":"2026-01-31"}`,
		result: `{"transactions":[` +
			`{"date":"2026-01-09","name":"Whole Foods Market","amount":"-$84.12","classification":"expense","category":"Groceries","account":"Checking"},` +
			`{"date":"2026-01-05","name":"Acme Corp Payroll","amount":"$3,250.00","classification":"income","category":"Salary","account":"Checking"}` +
			`],"total_results":2,"page":1,"page_size":50,"total_pages":1}`,
	}
	accounts = tool{
		name:   "get_accounts",
		args:   `{}`,
		result: `{"as_of_date":"2026-01-12","accounts":[{"name":"Checking","balance":"$4,812.33","currency":"USD","classification":"asset","type":"Depository"},{"name":"Visa","balance":"$612.09","currency":"USD","classification":"liability","type":"CreditCard"}]}`,
	}
	balanceSheet = tool{
		name:   "get_balance_sheet",
		args:   `{}`,
		result: `{"as_of_date":"2026-01-12","currency":"USD","net_worth":{"current":"$41,200.24","monthly_history":{"start_date":"2025-02-01","end_date":"2026-01-12","trend":{"current":"$41,200.24","previous":"$38,950.10","value":"$2,250.14","percent_change":"5.8%"}}}}`,
	}
	// The tool failed: its result is null.
	groceryTransactions = tool{
		name: "get_transactions",
		args: `{"page":1,"order":"desc","categories":["Groceries"],"start_date":"2025-12-01","end_date":"2025-12-31"}`,
	}
	yearIncomeStatement = tool{
		name:   "get_income_statement",
		args:   `{"start_date":"2025-01-01","end_date":"2025-12-31"}`,
		result: `{"currency":"USD","period":{"start_date":"2025-01-01","end_date":"2025-12-31"},"income":{"total":"$48,100.00"},"expense":{"total":"$39,274.61"},"net_income":"$8,825.39","savings_rate":"18.3%"}`,
	}
)

// seedDemoUser: four chats (newest first: 6, 4, 3 and 120 messages); "Net
// worth trend" ended with an error, "A year of spending, month by month" spans
// three pages of messages.
func seedDemoUser(u *user) {
	newChat("demo", "A year of spending, month by month", at("2025-12-20T10:00:00Z"), time.Minute).
		yearOfQuestions().into(u)

	newChat("demo", "Net worth trend", at("2026-01-08T08:05:00Z"), 30*time.Second).
		user("Is my net worth going up?").
		assistant("Yes: your net worth grew 5.8% over the last twelve months, to $41,200.24.", balanceSheet).
		user("Which account grew the most?").
		failed("Failed to generate response: the AI provider did not answer in time").
		into(u)

	newChat("demo", "Where did my grocery money go?", at("2026-01-10T18:40:00Z"), 20*time.Second).
		user("Where did my grocery money go in December?").
		assistant("I could not load your December transactions just now.", groceryTransactions).
		user("Can you try again?").
		assistant("From what I can see, most of it went to weekly runs at Whole Foods Market.").
		into(u)

	newChat("demo", "Budget check for January", at("2026-01-12T09:15:00Z"), 15*time.Second).
		user("How am I doing on my January budget?").
		assistant("So far in January you earned $3,250.00 and spent $84.12 on groceries.", januaryTransactions).
		user("And what are my balances?").
		assistant("Checking holds $4,812.33, your Visa card owes $612.09, and your net worth is $41,200.24.", accounts, balanceSheet).
		user("Thanks!").
		assistant("You're welcome. Ask me again at the end of the month for a full review.").
		into(u)
}

// yearOfQuestions adds 60 question/answer pairs (120 messages): one per month
// from January 2021 to December 2025; every twelfth answer calls a function.
func (b *chatBuilder) yearOfQuestions() *chatBuilder {
	month := at("2021-01-01T00:00:00Z")
	for i := range 60 {
		label := month.Format("January 2006")
		b.user(fmt.Sprintf("What did I spend in %s?", label))
		answer := fmt.Sprintf("In %s you spent $%d.%02d across %d transactions.", label, 2000+(i*137)%900, (i*29)%100, 40+i%17)
		if i%12 == 11 {
			b.assistant(answer, yearIncomeStatement)
		} else {
			b.assistant(answer)
		}
		month = month.AddDate(0, 1, 0)
	}
	return b
}

// seedOtherFamily: another family's categories (all names differ from the
// demo family's) and one import.
func seedOtherFamily(f *family) {
	cs := &categorySeeder{prefix: "other"}
	t := at("2025-11-02T07:45:10Z")
	cs.root("Other Family Groceries", "expense", "#407706", "shopping-basket", t)
	cs.root("Other Family Salary", "income", "#22c55e", "wallet", t.Add(time.Second))
	cs.root("Other Family Rent", "expense", "#b45309", "home", t.Add(2*time.Second))
	kids := cs.root("Other Family Kids", "expense", "#df4e92", "baby", t.Add(3*time.Second))
	cs.sub(kids, "Other Family School Supplies", "book-open", t.Add(time.Hour))
	cs.into(f)

	f.addImport(&importRecord{
		id:     seedID("other/import/1"),
		kind:   "AccountImport",
		status: "complete",
		config: importConfig{
			NameColLabel:    str("Name"),
			AmountColLabel:  str("Balance"),
			AccountColLabel: str("Type"),
			NumberFormat:    str("1,234.56"),
		},
		uploaded:       true,
		rowsCount:      3,
		validRowsCount: 3,
		mappingsCount:  3,
		createdAt:      at("2025-11-02T08:00:00.500Z"),
		updatedAt:      at("2025-11-02T08:00:02.250Z"),
	})
	f.addAccounts(&accountRecord{id: seedID("other/account/checking"), name: "Other Family Checking", currency: "USD", classification: "asset", accountType: "depository", balance: 12000, createdAt: t})
}

// seedOtherUser: two chats, one of them without messages.
func seedOtherUser(u *user) {
	newChat("other", "Vacation fund planning", at("2026-01-05T20:00:00Z"), time.Minute).
		user("How much should I save each month for a trip in July?").
		assistant("Saving $350 a month from now gets you to $2,100 by July.").
		into(u)
	newChat("other", "Empty savings chat", at("2026-01-09T12:00:00Z"), time.Minute).into(u)
}
