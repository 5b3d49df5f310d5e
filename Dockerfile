# syntax=docker/dockerfile:1

# suregql's container image: a static Go binary on distroless, run as the
# non-root user 65532. It writes nothing to disk, so it runs with a
# read-only root filesystem (deploy/deployment.yaml). With no UPSTREAM_URL
# it serves the built-in demo upstream.
#
#   docker build -t suregql --build-arg VERSION=1.2.3 --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker run --rm -p 8080:8080 -e UPSTREAM_URL=https://sure.example.com suregql
#
# Docker is not on CI: .ci/run runs the build command below on the build
# context this file and .dockerignore describe, checks that the binary is
# static, and runs it as user 65532; deploy_test.go checks that GO_VERSION
# is go.mod's and that USER and EXPOSE match the Kubernetes manifests.

ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
# The version -version, /readyz, the start line, suregql_build_info and the
# spans' service.version say, and the VCS revision: the context has no .git,
# so Go stamps none; unset, the binary says "devel".
ARG VERSION=
ARG REVISION=
# No cgo (a static binary, no libc in the final image), no local paths and
# no symbol tables in the binary; the version stamped.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS="$TARGETOS" GOARCH="$TARGETARCH" \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" -o /out/suregql .

# distroless/static: CA certificates (for an https UPSTREAM_URL), tzdata and
# an /etc/passwd with nonroot (65532); no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/suregql /suregql
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/suregql"]
