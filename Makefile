# Handoff — every target a newcomer or CI needs. `make setup` is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PORT ?= 8080
NODE_DIR := tests/node
CORPUS_DIR := $(CURDIR)/target/agui-corpus
# Crates that must run on Cloudflare Workers (wasm32-unknown-unknown).
WASM_CRATES := agui-protocol handoff-core handoff-demo handoff-http
export CARGO_TERM_COLOR ?= never

.PHONY: help setup dev test test-rust test-node lint fmt check-wasm bench corpus

help:
	@echo "make setup       install what a fresh machine lacks (rust targets, npm packages)"
	@echo "make dev         run the local dev server with the demo agent on the embedded store"
	@echo "make test        run every test (Rust, official-client conformance, end to end)"
	@echo "make lint        rustfmt --check and clippy -D warnings"
	@echo "make check-wasm  cargo check the Workers crates for wasm32-unknown-unknown"
	@echo "make bench       criterion benches (encoding) and the dev-server load test"

setup:
	@rustup show active-toolchain >/dev/null
	@rustup target list --installed | grep -q '^wasm32-unknown-unknown$$' || rustup target add wasm32-unknown-unknown
	@if [ ! -d $(NODE_DIR)/node_modules/@ag-ui/client ] || [ $(NODE_DIR)/package-lock.json -nt $(NODE_DIR)/node_modules/.package-lock.json ]; then \
		cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error; fi

dev: setup
	cargo build --release -p dev-server
	PORT=$(PORT) ./target/release/dev-server

test: setup test-rust test-node

test-rust:
	cargo test --workspace --all-targets
	cargo test --workspace --doc

corpus:
	cargo run -q -p handoff-tests --bin agui-corpus -- $(CORPUS_DIR)

test-node: corpus
	cargo build -q -p dev-server -p handoff-tests
	cd $(NODE_DIR) && AGUI_CORPUS_DIR=$(CORPUS_DIR) HANDOFF_BIN_DIR=$(CURDIR)/target/debug node --test

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt:
	cargo fmt --all

check-wasm: setup
	cargo check --target wasm32-unknown-unknown $(addprefix -p ,$(WASM_CRATES))

bench:
	cargo bench -p agui-protocol --bench encode
	cargo build --release -p dev-server -p handoff-tests --bin load
	./target/release/load --bin-dir target/release --runs 400 --concurrency 8
