package restclienttest

import (
	"fmt"
	"time"
)

// Shape of the large family, which exists to exercise paging and fan-out.
const (
	largeRoots         = 1000
	largeSubcategories = 4000
	largeChats         = 250
	largeImports       = 130
)

// Statuses and types the large family's imports cycle through; the lengths
// (8 and 7) are coprime, so every pairing occurs.
var (
	largeImportStatuses = []string{"complete", "pending", "failed", "complete", "importing", "revert_failed", "complete", "reverting"}
	largeImportTypes    = []string{"TransactionImport", "TradeImport", "AccountImport", "MintImport", "CategoryImport", "RuleImport", "PdfImport"}
)

// largeColors is Sure's Category::COLORS palette.
var largeColors = []string{"#e99537", "#4da568", "#6471eb", "#db5a54", "#df4e92", "#c44fe9", "#eb5429", "#61c9ea", "#805dee", "#6ad28a"}

var largeIcons = []string{"tag", "wallet", "shopping-bag", "utensils", "car", "home", "heart", "plane", "gift", "zap"}

// seedLargeFamily: roots "Root 0001".."Root 1000", every third one income
// (i%3 == 0); root i has i%9 subcategories ("Root 0001 / Sub 01"), except the
// last root, which takes what is left to reach exactly 4,000 (4, where i%9
// alone would give 3,997 in all); and 130 imports.
func seedLargeFamily(f *family) {
	cs := &categorySeeder{prefix: "large"}
	base := at("2025-06-01T00:00:00Z")
	remaining := largeSubcategories
	for i := 1; i <= largeRoots; i++ {
		classification := "expense"
		if i%3 == 0 {
			classification = "income"
		}
		name := fmt.Sprintf("Root %04d", i)
		created := base.Add(time.Duration(i) * time.Minute)
		root := cs.root(name, classification, largeColors[i%len(largeColors)], largeIcons[i%len(largeIcons)], created)
		n := i % 9
		if i == largeRoots {
			n = remaining
		}
		for j := 1; j <= n; j++ {
			cs.sub(root, fmt.Sprintf("%s / Sub %02d", name, j), largeIcons[j%len(largeIcons)], created.Add(time.Duration(j)*time.Second))
		}
		remaining -= n
	}
	cs.into(f)
	seedLargeImports(f)
}

// seedLargeImports: 130 imports "large/import/001".."130", created one hour
// apart from 2025-09-01 08:00:00.250 UTC, statuses and types cycling (see
// above). Every 13th was never uploaded, every 5th is uploaded without rows
// (not configured), failed ones have an error and two invalid rows, every
// 4th has an unassigned mapping, and every other one belongs to an account.
func seedLargeImports(f *family) {
	base := at("2025-09-01T08:00:00.250Z")
	for i := 1; i <= largeImports; i++ {
		created := base.Add(time.Duration(i-1) * time.Hour)
		imp := &importRecord{
			id:        seedID(fmt.Sprintf("large/import/%03d", i)),
			kind:      largeImportTypes[i%len(largeImportTypes)],
			status:    largeImportStatuses[i%len(largeImportStatuses)],
			uploaded:  i%13 != 0,
			config:    importConfig{DateColLabel: str("Date"), AmountColLabel: str("Amount"), NumberFormat: str("1,234.56")},
			createdAt: created,
			updatedAt: created.Add(time.Duration(1+i%7)*time.Second + time.Duration(i)*time.Millisecond),
		}
		if i%2 == 0 {
			imp.accountID = seedID(fmt.Sprintf("large/account/%d", i%5))
		}
		if imp.uploaded && i%5 != 0 {
			imp.rowsCount = 10 + i%40
			imp.validRowsCount = imp.rowsCount
			imp.mappingsCount = 1 + i%6
		}
		if imp.status == "failed" {
			imp.errMsg = fmt.Sprintf("Row %d: Amount can't be blank", 1+i%9)
			if imp.rowsCount > 0 {
				imp.validRowsCount -= 2
				imp.invalidRowsCount = 2
			}
		}
		if i%4 == 0 && imp.mappingsCount > 0 {
			imp.unassignedCount = 1
		}
		f.addImport(imp)
	}
}

// seedLargeUser: 250 chats, one a day from 2025-05-01, with 2 to 4 messages.
func seedLargeUser(u *user) {
	base := at("2025-05-01T12:00:00Z")
	for i := 1; i <= largeChats; i++ {
		b := newChat("large", fmt.Sprintf("Large chat %03d", i), base.AddDate(0, 0, i-1), time.Minute)
		for m := range 2 + i%3 {
			if m%2 == 0 {
				b.user(fmt.Sprintf("Question %d of chat %03d", m/2+1, i))
			} else {
				b.assistant(fmt.Sprintf("Answer %d of chat %03d", m/2+1, i))
			}
		}
		b.into(u)
	}
}
