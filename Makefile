# paymentsd — see README.md. `make run` starts the service on the embedded database;
# `make test` runs every test on a fresh machine (it starts a throwaway PostgreSQL and a
# Python venv with schemathesis itself).
GO      ?= go
BIN     := bin/paymentsd
SHELL   := /bin/bash

.PHONY: build run generate lint check-generated test test-go contract clean

build:
	$(GO) build -o $(BIN) ./cmd/paymentsd

run: build
	./$(BIN) serve

generate:
	$(GO) generate ./gen/...

lint:
	$(GO) run ./cmd/speclint openapi.yaml
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Regenerates gen/ and fails if that changed anything: committed generated code must be fresh.
check-generated: generate
	@git diff --exit-code --stat -- gen/ || { echo "gen/ is stale: run 'make generate' and commit"; exit 1; }

# Go tests (unit, store on SQLite and PostgreSQL, HTTP through the full stack) then the
# schemathesis contract run, all against one throwaway PostgreSQL cluster.
test: lint check-generated build
	scripts/with-postgres.sh $(MAKE) --no-print-directory test-go contract

test-go:
	$(GO) test -count=1 -race ./...

contract: build
	SHAPES="schema guide" scripts/contract.sh

clean:
	rm -rf bin data .venv
