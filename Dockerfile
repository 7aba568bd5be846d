# syntax=docker/dockerfile:1
#
# One image for the three Go binaries (api, worker, scheduler): the command
# chooses which one runs, e.g. `docker run agentwallet worker`.
# The `localnet` stage is the local Solana chain used by docker-compose.yml.
#
#   docker build -t agentwallet .                       # api (with the dashboard) / worker / scheduler
#   docker build -t agentwallet-pkcs11 --target runtime-pkcs11 .   # the same, with the PKCS#11 signer
#   docker build -t agentwallet-localnet --target localnet .

ARG GO_VERSION=1.26
ARG NODE_VERSION=20

# ---------------------------------------------------------------- dashboard
# The web app the api embeds (internal/dashboard/dist/app); its types come
# from the SDK's generated schema.
FROM node:${NODE_VERSION}-bookworm-slim AS dashboard
WORKDIR /src/web/dashboard
COPY web/dashboard/package.json web/dashboard/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY sdk/typescript/src/schema.ts /src/sdk/typescript/src/schema.ts
COPY web/dashboard/ ./
RUN npm run build

# ---------------------------------------------------------------- build
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY migrations ./migrations
COPY --from=dashboard /src/internal/dashboard/dist/app ./internal/dashboard/dist/app
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags='-s -w' -o /out/ ./cmd/api ./cmd/worker ./cmd/scheduler

# ---------------------------------------------------------------- build-pkcs11
# The PKCS#11 signer loads the HSM vendor's library with dlopen: cgo, and a
# glibc image to run in. The default image stays static.
FROM build AS build-pkcs11
ENV CGO_ENABLED=1
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -tags pkcs11 -trimpath -ldflags='-s -w' -o /out/ ./cmd/api ./cmd/worker ./cmd/scheduler

# ---------------------------------------------------------------- runtime-pkcs11
# Mount the token's PKCS#11 library (and its configuration) into the
# worker's container and point PKCS11_MODULE at it.
FROM gcr.io/distroless/base-debian12:nonroot AS runtime-pkcs11
COPY --from=build-pkcs11 /out/api /out/worker /out/scheduler /usr/local/bin/
USER nonroot:nonroot
ENV HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
CMD ["api", "serve"]

# ---------------------------------------------------------------- localnet
FROM node:${NODE_VERSION}-bookworm-slim AS localnet
WORKDIR /app
ENV NODE_ENV=production
COPY localnet/package.json localnet/package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY localnet/ ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8899
CMD ["node", "server.js", "--host", "0.0.0.0", "--port", "8899", "--state", "/data/localnet-state.json"]

# ---------------------------------------------------------------- runtime
# Last stage: the default target of `docker build .`.
FROM gcr.io/distroless/static-debian12:nonroot AS runtime
COPY --from=build /out/api /out/worker /out/scheduler /usr/local/bin/
USER nonroot:nonroot
ENV HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
CMD ["api", "serve"]
