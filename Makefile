# paymentsd — see README.md. `make run` starts the service on the embedded database;
# `make test` runs every test on a fresh machine (it starts a throwaway PostgreSQL and a
# Python venv with schemathesis itself).
GO      ?= go
BIN     := bin/paymentsd
SHELL   := /bin/bash

.PHONY: build run generate lint check-generated test test-go contract contract-deep ts-check ts-example web web-check wallet wallet-check fuzz bench clean

build:
	$(GO) build -o $(BIN) ./cmd/paymentsd

run: build
	./$(BIN) serve

generate:
	$(GO) generate ./gen/...

lint:
	bash scripts/check-sizes.sh
	$(GO) run ./cmd/speclint openapi.yaml gen/guide-openapi.yaml
	bash scripts/lint-spec.sh
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit"; exit 1; }
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Regenerates gen/ and the devnet's contract artifacts, and fails if that changed anything:
# committed generated code and bytecode must be fresh.
check-generated: generate
	@git diff --exit-code --stat -- gen/ || { echo "gen/ is stale: run 'make generate' and commit"; exit 1; }
	@bash devnet/contracts/compile.sh >/dev/null
	@git diff --exit-code --stat -- devnet/contracts/ || { echo "devnet/contracts artifacts are stale: run devnet/contracts/compile.sh and commit"; exit 1; }

# Go tests (unit, store on SQLite and PostgreSQL, HTTP through the full stack) then the
# schemathesis contract run, all against one throwaway PostgreSQL cluster.
test: lint check-generated ts-check web-check wallet-check build
	scripts/ensure-chromium.sh
	scripts/ensure-browser-deps.sh
	scripts/with-postgres.sh $(MAKE) --no-print-directory test-go contract ts-example

test-go:
	GO=$(GO) scripts/test-go.sh

# CI budget: a fixed seed and ~50 examples per operation and phase, about 30 s per shape.
contract: build
	SHAPES="schema guide" scripts/contract.sh

# Local bug hunts: ten times the budget and a fresh random seed (printed by schemathesis, so a
# failure can be replayed with CONTRACT_SEED=<seed> make contract). Starts its own PostgreSQL.
contract-deep: build
	scripts/with-postgres.sh env SHAPES="schema guide" CONTRACT_MAX_EXAMPLES=$${CONTRACT_MAX_EXAMPLES:-500} \
		CONTRACT_SEED=$${CONTRACT_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')} CONTRACT_TIMEOUT=3600 scripts/contract.sh

# TypeScript client: pinned deps (npm ci), src/schema.d.ts fresh against openapi.yaml, strict type-check.
ts-check:
	scripts/ts-client.sh check

# The dashboard web app (webapp/): pinned deps (npm ci), strict type-check, vite build into
# webapp/dist — committed and embedded in the binary, so `make build`/`make run` need no Node.
web:
	scripts/web.sh build

# Fails when a fresh build of webapp/ differs from the committed webapp/dist.
web-check:
	scripts/web.sh check

# The checkout page's wallet payment (checkout/wallet/): pinned viem + esbuild (npm ci), bundled
# into checkout/page/assets/wallet.js — committed and embedded like the rest of the page.
wallet:
	scripts/checkout-wallet.sh build

# Fails when a fresh bundle of checkout/wallet/ differs from the committed checkout/page/assets/wallet.js.
wallet-check:
	scripts/checkout-wallet.sh check

# The TypeScript example against bin/paymentsd (schema shape) on $$DATABASE_URL, or a temp SQLite file.
ts-example: build
	scripts/ts-client.sh e2e

# Bounded run of every Go fuzz target, one after another (scripts/fuzz.sh); FUZZTIME per target.
fuzz:
	FUZZTIME=$(or $(FUZZTIME),10s) GO=$(GO) scripts/fuzz.sh

# The API under wrk against the SQL it cannot avoid under pgbench, same run, same throwaway
# PostgreSQL (scripts/bench.sh); then the sweeper's gas per collected payment on the devnet, per
# method at 1, 20 and 100 payments a sweep, from the receipts (payouts.BenchmarkSweepGas).
# Results go in docs/benchmarks.md. Not part of make test.
bench: build
	scripts/with-postgres.sh scripts/bench.sh
	$(GO) test -run '^$$' -bench BenchmarkSweepGas -benchtime 1x -timeout 30m ./payouts/

clean:
	rm -rf bin data .venv
