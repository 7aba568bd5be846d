# agentwallet: `make` lists the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

GO ?= go
# Two cores: two test binaries at a time (each starts its own localnet),
# each running four of its parallel tests at once: most of a test's time is
# waiting (for the chain's slots, a sweep, a browser), not computing, and
# the default (one per core) left the long browser test holding one of two.
TEST_FLAGS ?= -race -count=1 -p 2 -parallel 4 -timeout 30m
# internal/httpapi first: its tests take the longest by far, and go test
# starts packages in the order given, so the others (and the linking of
# their test binaries) fit beside it instead of after it.
TEST_PACKAGES := ./internal/httpapi ./...
# The Go test that drives the dashboard in Chromium: it needs the built
# dashboard (make dashboard) and Chromium (make browser-deps), so make
# test-go skips it (go test -skip) and make test runs it.
BROWSER_TEST := ^TestDashboardInBrowser$$
# make bench BENCH=Send runs only the benchmarks matching Send
BENCH ?= .
BENCH_FLAGS ?= -run '^$$' -bench '$(BENCH)' -benchmem -p 1 -timeout 60m
# Only the packages that have benchmarks: compiling every package's tests
# took minutes of the bench's budget for nothing.
BENCH_PKGS ?= $(sort $(patsubst %/,./%,$(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' bench internal cmd 2>/dev/null))))
# make bench: api and worker processes of the send benchmark, and its profiles
APIS ?= 1
WORKERS ?= 1
BENCH_PPROF ?=
# make migrate ARGS=status|down|unlock
ARGS ?= up

# The PKCS#11 signer (internal/signer/pkcs11) needs cgo: it is built, vetted
# and tested with the pkcs11 tag wherever there is a C compiler, and then
# its tests need SoftHSM2 (make softhsm). Without one, or with
# CGO_ENABLED=0, the tag is left out and the binaries say they lack it.
GO_TAGS ?= $(if $(filter 0,$(CGO_ENABLED)),,$(if $(shell command -v cc 2>/dev/null),pkcs11))
SOFTHSM_DEP := $(if $(filter pkcs11,$(GO_TAGS)),softhsm)

TOOLS_BIN := $(CURDIR)/.dev/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS_BIN)/staticcheck-$(STATICCHECK_VERSION)

# Runs the rest of a recipe line with TEST_DATABASE_URL / TEST_REDIS_URL set:
# kept when already set, else from scripts/services.sh (which starts private
# servers under .dev/ when nothing answers on 5432 / 6379).
WITH_TEST_SERVICES = \
	if [ -z "$${TEST_DATABASE_URL:-}" ] || [ -z "$${TEST_REDIS_URL:-}" ]; then \
		user_db=$${TEST_DATABASE_URL:-}; user_redis=$${TEST_REDIS_URL:-}; \
		svc=$$(scripts/services.sh); eval "$$svc"; \
		export TEST_DATABASE_URL=$${user_db:-$$TEST_DATABASE_URL} TEST_REDIS_URL=$${user_redis:-$$TEST_REDIS_URL}; \
	fi;
# Same for the application's DATABASE_URL / REDIS_URL.
WITH_SERVICES = \
	if [ -z "$${DATABASE_URL:-}" ] || [ -z "$${REDIS_URL:-}" ]; then \
		user_db=$${DATABASE_URL:-}; user_redis=$${REDIS_URL:-}; \
		svc=$$(scripts/services.sh); eval "$$svc"; \
		export DATABASE_URL=$${user_db:-$$DATABASE_URL} REDIS_URL=$${user_redis:-$$REDIS_URL}; \
	fi;

.PHONY: help
help: ## list the targets
	@echo "usage: make <target>"
	@awk 'BEGIN { FS = ":.*?## " } /^[a-zA-Z0-9_-]+:.*?## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: dev
dev: ## run the whole stack locally (Postgres, Redis, localnet, api, worker, scheduler); Ctrl-C stops it
	@scripts/dev.sh

.PHONY: dev-reset
dev-reset: ## delete this checkout's development data: its database, wallet keys and API keys (make dev starts afresh)
	@scripts/dev-reset.sh

.PHONY: deps
deps: ## install the npm packages of localnet/, scripts/webhook-verify/, scripts/x402-check/, examples/x402-seller/ and examples/mpp-seller/ when missing or changed
	@scripts/localnet-deps.sh
	@scripts/localnet-deps.sh scripts/webhook-verify
	@scripts/localnet-deps.sh scripts/x402-check
	@scripts/localnet-deps.sh examples/x402-seller
	@scripts/localnet-deps.sh examples/mpp-seller

.PHONY: dashboard
dashboard: ## build the dashboard (web/dashboard) into the api binary's embed (internal/dashboard/dist/app)
	@scripts/dashboard-build.sh

.PHONY: dashboard-deps
dashboard-deps: ## install the dashboard's npm packages (web/dashboard) when missing or changed
	@scripts/localnet-deps.sh web/dashboard

.PHONY: sdk
sdk: ## install and build the TypeScript SDK and the LangChain tools (npm workspaces: sdk/*, examples)
	@scripts/sdk-build.sh

.PHONY: sdk-types
sdk-types: ## regenerate sdk/typescript/src/schema.ts from openapi/openapi.yaml
	@scripts/localnet-deps.sh .
	npm run --silent generate

.PHONY: browser-deps
browser-deps: ## install Debian's chromium for the dashboard's browser tests when missing
	@scripts/browser-deps.sh

.PHONY: softhsm
softhsm: ## install Debian's softhsm2 and opensc (pkcs11-tool) for the PKCS#11 signer's tests when missing
	@scripts/softhsm.sh

.PHONY: services
services: ## ensure Postgres and Redis (private ones under .dev/ if none answer) and print their URLs
	@scripts/services.sh

.PHONY: services-stop
services-stop: ## stop the private Postgres and Redis started under .dev/
	@scripts/services.sh stop

.PHONY: test-deps
test-deps: deps dashboard sdk browser-deps $(SOFTHSM_DEP) ## install and build what make test needs (localnet's and the SDK's packages, the dashboard, Chromium, SoftHSM)

.PHONY: test
test: test-deps ## run the Go tests (race detector, the dashboard's browser tests among them), and beside them the dashboard's unit tests, localnet's and the x402 seller's tests
	@mkdir -p .dev; scripts/test-npm.sh > .dev/test-npm.log 2>&1 & npm_pid=$$!; \
	$(WITH_TEST_SERVICES) \
	echo "go test -tags '$(GO_TAGS)' $(TEST_FLAGS) $(TEST_PACKAGES)  (TEST_DATABASE_URL=$$TEST_DATABASE_URL TEST_REDIS_URL=$$TEST_REDIS_URL)"; \
	go_rc=0; $(GO) test -tags '$(GO_TAGS)' $(TEST_FLAGS) $(TEST_PACKAGES) || go_rc=$$?; \
	npm_rc=0; wait $$npm_pid || npm_rc=$$?; \
	echo; echo "JavaScript suites (scripts/test-npm.sh):"; cat .dev/test-npm.log; \
	if [ $$go_rc -ne 0 ]; then echo "make test: the Go tests failed"; fi; \
	if [ $$npm_rc -ne 0 ]; then echo "make test: a JavaScript suite failed"; fi; \
	[ $$go_rc -eq 0 ] && [ $$npm_rc -eq 0 ]

.PHONY: test-go
test-go: deps sdk $(SOFTHSM_DEP) ## run only the Go tests (race detector), without the dashboard's build and browser test or the npm test suites: the fast loop
	@$(WITH_TEST_SERVICES) \
	echo "go test -tags '$(GO_TAGS)' $(TEST_FLAGS) -skip '$(BROWSER_TEST)' $(TEST_PACKAGES)  (TEST_DATABASE_URL=$$TEST_DATABASE_URL TEST_REDIS_URL=$$TEST_REDIS_URL)"; \
	$(GO) test -tags '$(GO_TAGS)' $(TEST_FLAGS) -skip '$(BROWSER_TEST)' $(TEST_PACKAGES)

.PHONY: build
build: dashboard ## build bin/api (with the dashboard), bin/worker and bin/scheduler
	$(GO) build -tags '$(GO_TAGS)' -o bin/ ./cmd/api ./cmd/worker ./cmd/scheduler

.PHONY: openapi
openapi: ## regenerate openapi/openapi.yaml and openapi/openapi-3.0.yaml
	$(GO) run ./cmd/api openapi --dir openapi

.PHONY: screenshots
screenshots: ## copy the browser walk's screenshots (make test, or DASHBOARD_TESTS=walk) into docs/screenshots
	@test -d web/dashboard/test/screenshots/walk || { echo "no screenshots yet: run make test (or DASHBOARD_TESTS=walk go test -run TestDashboardInBrowser ./internal/httpapi)"; exit 1; }
	@mkdir -p docs/screenshots
	cp web/dashboard/test/screenshots/walk/*.png docs/screenshots/

.PHONY: docs
docs: ## rewrite docs/permissions.md from the permission table (internal/auth)
	$(GO) test ./internal/auth -run TestPermissionsDocIsCurrent -count=1 -update

.PHONY: lint
lint: $(STATICCHECK) dashboard-deps vet ## gofmt, go vet, staticcheck, and the dashboard's ESLint and Prettier check
	@files=$$(find . -name '*.go' -not -path './.dev/*' -not -path './.git/*' -not -path '*/node_modules/*'); \
	unformatted=$$(gofmt -l $$files); \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need \`gofmt -w\`:"; echo "$$unformatted"; exit 1; fi
	GOFLAGS=-race $(STATICCHECK) -tags '$(GO_TAGS)' ./...
	cd web/dashboard && npm run --silent lint

# vet and staticcheck build with -race, as the tests do: one build of
# every package serves the three (on a fresh machine that build is most
# of the run's CPU). The PKCS#11 signer's stand-in without the tag is
# vetted on that build too (with CGO_ENABLED=0 it took a second build of
# the standard library).
.PHONY: vet
vet: ## go vet every package (with the race detector's build, which make test reuses)
	$(GO) vet -race -tags '$(GO_TAGS)' ./...
	$(GO) vet -race ./internal/signer/pkcs11/...

$(STATICCHECK):
	@mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@mv -f $(TOOLS_BIN)/staticcheck $@

.PHONY: bench
bench: deps $(SOFTHSM_DEP) ## run the benchmarks (bench/results/send.json, hotwallet.json, paylatency.json, webhooks.json, deposits.json, watch.json, scale.json; BENCH=Send, BENCH_SENDS=n, BENCH_EVENTS=n, APIS=n WORKERS=m, BENCH_PPROF=1: see bench/README.md)
	@$(WITH_TEST_SERVICES) APIS=$(APIS) WORKERS=$(WORKERS) BENCH_PPROF=$(BENCH_PPROF) $(GO) test -tags '$(GO_TAGS)' $(BENCH_FLAGS) $(BENCH_PKGS)

.PHONY: soak
soak: deps ## run the multi-process soaks of the whole stack (bench: scale-out, chaos), skipped by make test
	@$(WITH_TEST_SERVICES) SOAK=1 $(GO) test -race -count=1 -run 'TestStack_' ./bench

.PHONY: migrate
migrate: ## apply the migrations to DATABASE_URL (make migrate ARGS=status|down|unlock for the others)
	@$(WITH_SERVICES) $(GO) run ./cmd/api migrate $(ARGS)

.PHONY: clean
clean: ## remove build output and coverage files
	rm -rf bin/
	rm -f coverage.* *.out *.cover *.coverprofile *.test

.PHONY: distclean
distclean: clean ## also stop the private servers and delete .dev/ (private databases, wallet keys, credentials, logs)
	-@scripts/services.sh stop
	rm -rf .dev/
