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
)

// largeColors is Sure's Category::COLORS palette.
var largeColors = []string{"#e99537", "#4da568", "#6471eb", "#db5a54", "#df4e92", "#c44fe9", "#eb5429", "#61c9ea", "#805dee", "#6ad28a"}

var largeIcons = []string{"tag", "wallet", "shopping-bag", "utensils", "car", "home", "heart", "plane", "gift", "zap"}

// seedLargeFamily: roots "Root 0001".."Root 1000", every third one income
// (i%3 == 0); root i has i%9 subcategories ("Root 0001 / Sub 01"), except the
// last root, which takes what is left to reach exactly 4,000 (4, where i%9
// alone would give 3,997 in all).
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
