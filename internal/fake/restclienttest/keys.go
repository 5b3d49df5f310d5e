package restclienttest

// API keys known to the fake.
const (
	// DemoKey: demo family, read_write, AI enabled, premium tier (1,000
	// requests an hour, so the playground stays usable).
	DemoKey = "demo-key"
	// ReadOnlyKey: same family and same user as DemoKey, scope read, AI
	// enabled, standard tier (100).
	ReadOnlyKey = "demo-readonly-key"
	// NoAIKey: same family as DemoKey, a different user whose AI features are
	// off (every chat endpoint answers 403), read_write, standard tier.
	NoAIKey = "demo-noai-key"
	// OtherFamilyKey: another family and user, read_write, AI on, standard
	// tier; its categories, chats and imports are all different.
	OtherFamilyKey = "other-family-key"
	// LargeFamilyKey: 1,000 root categories + 4,000 subcategories, 250
	// chats and 130 imports; read_write, AI on, enterprise tier (10,000).
	LargeFamilyKey = "large-family-key"
)

// Scopes of an API key.
const (
	scopeRead      = "read"
	scopeReadWrite = "read_write"
)

// Requests per hour of the upstream's tiers.
const (
	limitStandard   = 100
	limitPremium    = 1000
	limitEnterprise = 10000
)

// apiKey is what the upstream knows about a key: whose data it opens, what it
// may do and how often.
type apiKey struct {
	family *family
	user   *user
	scope  string
	limit  int // requests per hour; SetRateLimit overrides it
}

// canWrite reports whether the key has the write scope.
func (k *apiKey) canWrite() bool { return k.scope == scopeReadWrite }

// newKeys builds the key table over freshly seeded data.
func newKeys() map[string]*apiKey {
	demoFamily := newFamily(seedDemoFamily)
	demoUser := newUser(true, seedDemoUser)
	noAIUser := newUser(false, nil)
	otherFamily := newFamily(seedOtherFamily)
	otherUser := newUser(true, seedOtherUser)
	largeFamily := newFamily(seedLargeFamily)
	largeUser := newUser(true, seedLargeUser)

	return map[string]*apiKey{
		DemoKey:        {family: demoFamily, user: demoUser, scope: scopeReadWrite, limit: limitPremium},
		ReadOnlyKey:    {family: demoFamily, user: demoUser, scope: scopeRead, limit: limitStandard},
		NoAIKey:        {family: demoFamily, user: noAIUser, scope: scopeReadWrite, limit: limitStandard},
		OtherFamilyKey: {family: otherFamily, user: otherUser, scope: scopeReadWrite, limit: limitStandard},
		LargeFamilyKey: {family: largeFamily, user: largeUser, scope: scopeReadWrite, limit: limitEnterprise},
	}
}
