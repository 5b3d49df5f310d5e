#!/usr/bin/env bash
# Refreshes assets/ from npm: the versions gqlgen's playground uses by
# default. Run by hand when gqlgen moves to newer ones; not part of CI.
set -euo pipefail
cd "$(dirname "$0")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent graphiql@4.1.2 react@18.2.0 react-dom@18.2.0 @graphiql/plugin-explorer@4.0.6 >/dev/null)
for f in "$tmp"/*.tgz; do mkdir -p "${f%.tgz}" && tar xzf "$f" -C "${f%.tgz}"; done
cp "$tmp"/graphiql-4.1.2/package/graphiql.min.js "$tmp"/graphiql-4.1.2/package/graphiql.min.css assets/
cp "$tmp"/react-18.2.0/package/umd/react.production.min.js assets/
cp "$tmp"/react-dom-18.2.0/package/umd/react-dom.production.min.js assets/
cp "$tmp"/graphiql-plugin-explorer-4.0.6/package/dist/index.umd.js assets/plugin-explorer.umd.js
cp "$tmp"/graphiql-plugin-explorer-4.0.6/package/dist/style.css assets/plugin-explorer.css
