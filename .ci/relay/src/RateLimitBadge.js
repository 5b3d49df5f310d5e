// The key's request budget, as the Sure server reported it: a self-hosted
// server is unlimited (the numbers are then null).
import { graphql } from 'relay-runtime';

export const rateLimitBadgeFragment = graphql`
  fragment RateLimitBadge_query on Query {
    rateLimit {
      unlimited
      limit
      remaining
      resetAt
    }
  }
`;
