package querylimit

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Codes of extensions.code.
const (
	// Code refuses a request that passes a limit; extensions.limit names
	// it (one of the Limit* names), extensions.max is the limit and
	// extensions.actual what the request has, when known.
	Code = "QUERY_LIMIT_EXCEEDED"
	// CodeResponseTooLarge replaces an answer whose data passes the
	// response cap; extensions.max and extensions.actual are in bytes.
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
)

func init() {
	// A refused document is a request error like a parse or validation
	// failure: gqlgen answers 400 under application/graphql-response+json
	// and 422 under application/json (which the facade answers as 200).
	errcode.RegisterErrorType(Code, errcode.KindProtocol)
}

// GQLError returns the refusal as a GraphQL error: code, limit, max and,
// when known, actual in its extensions.
func (e *Exceeded) GQLError() *gqlerror.Error {
	err := gqlerror.Errorf("%s", e.Error())
	err.Extensions = map[string]any{"code": Code, "limit": e.Limit, "max": e.Max}
	if e.Actual > 0 {
		err.Extensions["actual"] = e.Actual
	}
	return err
}

// Extension checks each query against the limits before gqlgen parses
// and validates it. Register it after extension.AutomaticPersistedQuery,
// which fills in the query of a request that sent only its hash, so that
// the limits see the real query.
type Extension struct {
	limits Limits
	cache  graphql.Cache[*ast.QueryDocument]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = (*Extension)(nil)

// NewExtension returns the extension checking limits (defaults applied).
// cache is the server's query cache (nil if none): a query found there
// was checked and validated when it was added, so it is not checked
// again.
func NewExtension(limits Limits, cache graphql.Cache[*ast.QueryDocument]) *Extension {
	return &Extension{limits: limits.WithDefaults(), cache: cache}
}

// Limits returns the limits the extension applies.
func (e *Extension) Limits() Limits { return e.limits }

// ExtensionName names the extension for gqlgen.
func (e *Extension) ExtensionName() string { return "QueryLimits" }

// Validate accepts any schema.
func (e *Extension) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters runs before gqlgen parses the query. On a
// cache miss it parses the query (with the token limit) and checks the
// document; a document within the limits is then parsed again by gqlgen,
// validated and cached. Parsing twice on a miss is the simple choice:
// a valid query misses once and hits afterwards, and validating here
// instead (to hand gqlgen a cached document) would tie this extension to
// gqlgen's rule configuration, or validate invalid documents twice so
// that gqlgen can report all their errors (this hook returns only one).
func (e *Extension) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	q := params.Query
	if q == "" {
		return nil // gqlgen reports a missing query
	}
	if len(q) > e.limits.MaxBytes {
		return (&Exceeded{Limit: LimitBytes, Max: e.limits.MaxBytes, Actual: len(q)}).GQLError()
	}
	if e.cache != nil {
		if _, ok := e.cache.Get(ctx, q); ok {
			return nil
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: q}, e.limits.MaxTokens)
	if err != nil {
		var gqlErr *gqlerror.Error
		if !errors.As(err, &gqlErr) {
			return nil // gqlgen parses again and reports it
		}
		// gqlparser's wording, pinned by TestTokenLimitMessage.
		if strings.HasPrefix(gqlErr.Message, "exceeded token limit") {
			return (&Exceeded{Limit: LimitTokens, Max: e.limits.MaxTokens}).GQLError()
		}
		// What gqlgen would answer, without parsing again.
		errcode.Set(gqlErr, errcode.ParseFailed)
		return gqlErr
	}
	if ex := e.limits.Check(doc); ex != nil {
		return ex.GQLError()
	}
	return nil
}

// ComplexityLimit refuses an operation whose complexity (the schema's
// complexity functions: list fields multiply by their page size) passes
// Max, before it runs. It replaces gqlgen's extension.ComplexityLimit to
// report with Code, limit "complexity", max and actual; it records the
// same stats (extension.GetComplexityStats).
//
// gqlgen computes complexity after validation and walks every fragment
// spread again; Extension's field limits have bounded that walk.
//
// A query whose answer is streamed in parts (WithStream, @defer) is
// refused too when its deferred parts (DeferredParts) pass
// MaxDeferredParts: each @defer counts once per item of the lists around
// it, so that a few fragments over a page of items cannot make thousands
// of parts.
type ComplexityLimit struct {
	Max int
	// MaxDeferredParts bounds the deferred parts of a streamed answer; 0
	// means DefaultMaxDeferredParts.
	MaxDeferredParts int
	es               graphql.ExecutableSchema
	known            CostMemo // by operation and variables
	parts            CostMemo // likewise, for streamed answers
}

// CostMemo remembers a cost computed from an operation and its variables,
// by a seeded hash of the query, the operation name and the variables'
// values: never the document itself, which would outlive the parsed-query
// cache's bound. Bounded: emptied when full. The zero value is ready to
// use.
type CostMemo struct {
	once  sync.Once
	seed  maphash.Seed
	mu    sync.Mutex
	known map[uint64]int
}

// hashJSON writes v, a value as encoding/json decodes it (objects with
// their keys sorted), to h, each kind tagged so that different values
// write different bytes; it reports false for anything else.
func hashJSON(h *maphash.Hash, v any) bool {
	switch v := v.(type) {
	case nil:
		_ = h.WriteByte('n')
	case bool:
		if v {
			_ = h.WriteByte('t')
		} else {
			_ = h.WriteByte('f')
		}
	case string:
		_ = h.WriteByte('s')
		maphash.WriteComparable(h, len(v))
		_, _ = h.WriteString(v)
	case json.Number:
		_ = h.WriteByte('d')
		maphash.WriteComparable(h, len(v))
		_, _ = h.WriteString(string(v))
	case float64:
		_ = h.WriteByte('F')
		maphash.WriteComparable(h, v)
	case int:
		_ = h.WriteByte('i')
		maphash.WriteComparable(h, v)
	case int64:
		_ = h.WriteByte('I')
		maphash.WriteComparable(h, v)
	case []any:
		_ = h.WriteByte('[')
		maphash.WriteComparable(h, len(v))
		for _, e := range v {
			if !hashJSON(h, e) {
				return false
			}
		}
	case map[string]any:
		_ = h.WriteByte('{')
		maphash.WriteComparable(h, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			maphash.WriteComparable(h, len(k))
			_, _ = h.WriteString(k)
			if !hashJSON(h, v[k]) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// maxKnownCosts bounds a CostMemo.
const maxKnownCosts = 4096

// Of returns compute's cost of the operation, computed once per operation
// and variables. Variables of a type JSON does not decode to are not
// remembered: compute runs each time.
func (m *CostMemo) Of(opCtx *graphql.OperationContext, compute func() int) int {
	m.once.Do(func() { m.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(m.seed)
	_, _ = h.WriteString(opCtx.RawQuery)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(opCtx.OperationName)
	_ = h.WriteByte(0)
	if len(opCtx.Operation.VariableDefinitions) > 0 && !hashJSON(&h, opCtx.Variables) {
		return compute()
	}
	key := h.Sum64()
	m.mu.Lock()
	cost, ok := m.known[key]
	m.mu.Unlock()
	if ok {
		return cost
	}
	cost = compute()
	m.mu.Lock()
	if m.known == nil || len(m.known) >= maxKnownCosts {
		m.known = make(map[uint64]int)
	}
	m.known[key] = cost
	m.mu.Unlock()
	return cost
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*ComplexityLimit)(nil)

// ExtensionName names the extension for gqlgen.
func (c *ComplexityLimit) ExtensionName() string { return "ComplexityLimit" }

// Validate keeps the schema whose complexity functions apply.
func (c *ComplexityLimit) Validate(es graphql.ExecutableSchema) error {
	if c.Max <= 0 {
		return errors.New("querylimit: ComplexityLimit.Max must be positive")
	}
	if c.MaxDeferredParts <= 0 {
		c.MaxDeferredParts = DefaultMaxDeferredParts
	}
	c.es = es
	return nil
}

// MutateOperationContext computes the operation's complexity.
func (c *ComplexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	cost := c.complexity(ctx, opCtx)
	opCtx.Stats.SetExtension("ComplexityLimit", &extension.ComplexityStats{Complexity: cost, ComplexityLimit: c.Max})
	if cost > c.Max {
		return (&Exceeded{Limit: LimitComplexity, Max: c.Max, Actual: cost}).GQLError()
	}
	if StreamOf(ctx) != nil && opCtx.Operation.Operation == ast.Query {
		parts := c.parts.Of(opCtx, func() int { return DeferredParts(ctx, c.es, opCtx.Operation, opCtx.Variables) })
		if parts > c.MaxDeferredParts {
			return (&Exceeded{Limit: LimitDeferredParts, Max: c.MaxDeferredParts, Actual: parts}).GQLError()
		}
	}
	if b := batchOf(ctx); b != nil {
		// Aliases count each: each is marshalled, though answered once.
		if total, ok := b.spend(&b.complexity, cost, c.Max); !ok {
			return (&Exceeded{Limit: LimitComplexity, Max: c.Max, Actual: total, Batch: true}).GQLError()
		}
	}
	return nil
}

// complexity computes the operation's complexity, once per operation
// and variables.
func (c *ComplexityLimit) complexity(ctx context.Context, opCtx *graphql.OperationContext) int {
	return c.known.Of(opCtx, func() int { return complexity.Calculate(ctx, c.es, opCtx.Operation, opCtx.Variables) })
}

// LimitResponse replaces an answer whose data is longer than maxBytes with
// a RESPONSE_TOO_LARGE error and no data, so that no client is sent (and
// no proxy buffers) a huge body. It runs after execution, once the data
// is built: the complexity limit has already bounded what execution may
// build, so this caps the body, not the work. The field errors of the
// dropped data go with it (they point into it, and may be many). In a
// batch (WithBatch), maxBytes bounds the data of all its answers together:
// an answer past what the earlier ones left is replaced the same way. An
// answer delivered in parts (WithStream, @defer) is bounded in every byte
// its transport writes (see Stream): here, a part whose data alone would
// pass what the earlier parts left is replaced by the refusal, in its
// place (path, label), and so is every later one.
func LimitResponse(maxBytes int) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp == nil {
			return resp
		}
		var err *gqlerror.Error
		switch s, b := StreamOf(ctx), batchOf(ctx); {
		case s != nil:
			err = s.check(len(resp.Data), maxBytes)
		case len(resp.Data) > maxBytes:
			err = tooLarge("the answer would be %d bytes of data; the limit is %d: ask for fewer items or fields", len(resp.Data), maxBytes)
		case b != nil:
			if total, ok := b.spend(&b.bytes, len(resp.Data), maxBytes); !ok {
				err = tooLarge("the batch's answers would be %d bytes of data; the limit is %d for the whole batch: ask for fewer items, fields or operations", total, maxBytes)
			}
		}
		if err == nil {
			return resp
		}
		return &graphql.Response{Errors: gqlerror.List{err}, Extensions: resp.Extensions,
			Path: resp.Path, Label: resp.Label, HasNext: resp.HasNext}
	}
}

// tooLarge is the RESPONSE_TOO_LARGE error: msg formats actual, then max,
// in bytes.
func tooLarge(msg string, actual, max int) *gqlerror.Error {
	err := gqlerror.Errorf(msg, actual, max)
	err.Extensions = map[string]any{"code": CodeResponseTooLarge, "max": max, "actual": actual}
	return err
}
