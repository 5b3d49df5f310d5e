// GraphQL-over-HTTP audit of a running facade: graphql-http's serverAudits
// (the reference implementation's checks of the spec). MUST failures fail
// CI; SHOULD/MAY misses are printed as warnings.
// Usage: node audit.mjs http://127.0.0.1:8080/graphql [api-key]
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
const key = process.argv[3] ?? 'demo-key';
const fetchFn = (input, init = {}) =>
  fetch(input, { ...init, headers: { ...(init.headers ?? {}), 'X-Api-Key': key } });

let ok = 0, warnings = 0, errors = 0;
for (const audit of serverAudits({ url, fetchFn })) {
  const result = await audit.fn();
  if (result.status === 'ok') {
    ok++;
  } else if (result.status === 'warn') {
    warnings++;
    console.log(`warn: ${audit.name}: ${result.reason}`);
  } else {
    errors++;
    console.log(`error: ${audit.name}: ${result.reason}`);
  }
}
console.log(`graphql-http audit: ${ok} ok, ${warnings} warnings, ${errors} errors`);
process.exit(errors > 0 ? 1 : 0);
