# user-service: every command a newcomer needs. `make dev` runs the service
# locally; `make test` runs every check CI runs. Both install what they need
# into git-ignored, project-local places (.venv, .cache).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
VENV := .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(CURDIR)/.cache/cargo/bin:$(PATH)
export SAM_CLI_TELEMETRY := 0
# Clippy lints the workspace inside its one debug build: clippy-driver is the
# rustc of the workspace's own crates (dependencies keep rustc), with what
# `cargo clippy --workspace --all-targets -- -D warnings` passes it. The same
# lints as a separate `cargo clippy`, without its second compile of every crate
# (dependencies included) in check mode: 165 s of CI. Every target below
# builds with it, so none rebuilds what another built.
export RUSTC_WORKSPACE_WRAPPER := clippy-driver
export CLIPPY_ARGS := -D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__

.PHONY: help tools browser build test lint unit-and-integration suites bench-smoke fuzz-smoke fuzz sam-check dev dev-reset bench tuning reconcile-at-scale events-at-scale model-at-scale workload-at-scale org-purge-at-scale scim-pages-at-scale scim-conformance

# Every target a reader may type, with the line after its `##`.
help: ## this list
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{ printf "make %-22s %s\n", $$1, $$2 }'

$(VENV)/.installed: tools/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tools/requirements.txt
	touch $@

tools: $(VENV)/.installed ## install what the other targets need (.venv, .cache): run by them
	@scripts/ddb-local install

# Chromium and chromedriver for the browser tour (tests/e2e/browser.rs); a
# system package, so installed only with ALLOW_SYSTEM_INSTALL=1, as Java is.
browser: ## Chromium and chromedriver for the settings page's browser tour (ALLOW_SYSTEM_INSTALL=1 installs them)
	@scripts/browser install

# The workspace's one debug build: everything after it (xtask, the doctests,
# the suites, make dev's functions, the bench smoke) runs its binaries, with one
# set of features (tools/workspace-hack), so nothing compiles twice.
build: ## build the workspace once (debug), clippy's lints inside: what every check and suite runs
	cargo build --workspace --all-targets

lint: build ## fmt, the generated template blocks and docs tables (clippy's lints run in the build)
	cargo fmt --all --check
	target/debug/xtask template --check
	target/debug/xtask docs --check

# Every test suite against DynamoDB Local, on the build above. Every test
# process writes its logs, and its children's, to target/test-logs; check-logs
# then fails on any address, phone, code, token or test name in them (also
# after a failed run: a leak is worth knowing about either way).
unit-and-integration: build suites ## build once, then every test suite against DynamoDB Local and check-logs

suites: tools browser ## every test suite against DynamoDB Local, then check-logs (on the last build)
	rm -rf target/test-logs
	@# The fuzz smoke may run beside (make test): its figures stay.
	find target/reliability -mindepth 1 ! -name fuzz.json -delete 2>/dev/null || true
	cargo test --quiet --doc --workspace
	status=0; DDB_LOCAL_INSTANCES=3 scripts/ddb-local run -- cargo nextest run --workspace --no-fail-fast || status=$$?; \
	target/debug/check-logs || status=1; exit $$status

# The bench's every section once, on the debug binaries just built, a few
# iterations, no thresholds, no Python or valgrind: it keeps `make bench` working.
# The build is the one above (nothing to do after it).
bench-smoke: tools build ## every bench section once on the debug build, no thresholds
	scripts/ddb-local run -- target/debug/bench --smoke --no-build --out target/bench-smoke

sam-check: tools ## sam validate and build, cfn-lint and the policy rules
	scripts/sam-check

# Coverage-guided fuzzing of request, claims, address, phone and name parsing on
# the stable toolchain: 10,000 executions per target here (a budget of work,
# not of a loaded machine's seconds; 120 s bounds it), built with the cheaper
# fuzz-smoke profile (fuzz/Cargo.toml); FUZZ_SECONDS in `make fuzz`, fully
# optimised.
fuzz-smoke: ## 10,000 executions of coverage-guided fuzzing per target
	scripts/fuzz --runs 10000 --seconds 120 --profile fuzz-smoke

fuzz: ## 10 minutes of fuzzing per target (FUZZ_SECONDS)
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} scripts/fuzz

# scripts/test: the order of the steps, what runs beside what, and each
# step's time (printed, and kept in target/ci-steps.txt).
test: ## every check CI runs (.ci/run), each step timed
	scripts/test

$(VENV)/.bench-installed: $(VENV)/.installed tools/bench/requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tools/bench/requirements.txt
	touch $@

# Release builds of every function (x86_64 and, with cargo-lambda, arm64), then
# every section; the report and charts go to bench-report/. valgrind counts
# instructions (Debian: apt-get install valgrind).
bench: tools $(VENV)/.bench-installed ## cold start, warm latency, requests, size, memory, scale, cost and the reconcile at 20,000 users (bench-report/)
	@command -v valgrind >/dev/null || { echo "make bench: valgrind is missing (Debian: apt-get install valgrind)"; exit 1; }
	scripts/ddb-local run -- cargo run --quiet -p bench
	$(MAKE) --no-print-directory reconcile-at-scale events-at-scale model-at-scale workload-at-scale org-purge-at-scale scim-pages-at-scale scim-conformance

# Every function at the CPU share of 128, 256, 512, 1,024 and 1,769 MB (a
# cgroup CPU quota; needs a writable `cpu` controller), the floors and Python
# beside them: bench-report/tuning.json and the report's "Memory per
# function". Commit the JSON as tools/bench/tuning.json; a test then holds the
# catalog's sizes to the choice it gives.
tuning: tools $(VENV)/.bench-installed ## each function's cost and latency at every memory size, and the size to choose (bench-report/)
	scripts/ddb-local run -- cargo run --quiet -p bench -- --only tuning

# The reconcile's pass at full size against DynamoDB Local and moto's Cognito:
# 20,000 users, 1 % deleted in Cognito, runs of three ListUsers calls each,
# ListUsers at 20 a second; `make test` runs 300 at 10 a second.
# It prints users a second (stderr), never asserted.
reconcile-at-scale: tools ## the reconcile pass over 20,000 users in short runs (RECONCILE_SCALE_USERS)
	RECONCILE_SCALE_USERS=$${RECONCILE_SCALE_USERS:-20000} RECONCILE_SCALE_LIST_RPS=$${RECONCILE_SCALE_LIST_RPS:-20} scripts/ddb-local run -- \
		cargo nextest run --profile scale -p integration-tests --test integration --no-capture \
		sweep::a_pass_over_many_users_in_many_short_runs_erases_exactly_the_deleted

# The events' concurrent workload at full size: 50 users, 1,050 operations
# whose domain events must rebuild every user's final state; `make test` runs
# 20 users (420 operations).
events-at-scale: tools ## the events' concurrent workload at 50 users (EVENTS_WORKLOAD_USERS)
	EVENTS_WORKLOAD_USERS=$${EVENTS_WORKLOAD_USERS:-50} scripts/ddb-local run -- \
		cargo nextest run --profile scale -p integration-tests --test integration --no-capture \
		events::a_concurrent_workloads_events_rebuild_every_users_final_state

# The models at full size against DynamoDB Local: 1,000 random sequences of
# the store's, 300 of the organizations'; `make test` runs 300 and 50.
model-at-scale: tools ## the models' random sequences: 1,000 cases of the store's (PROPTEST_CASES), 300 of the organizations' (ORG_MODEL_CASES)
	PROPTEST_CASES=$${PROPTEST_CASES:-1000} ORG_MODEL_CASES=$${ORG_MODEL_CASES:-300} scripts/ddb-local run -- \
		cargo nextest run --profile scale -p integration-tests --test model --no-capture \
		-E 'test(=the_store_follows_the_model) | test(=organizations::organizations_follow_the_model)'

# Deleting an organization of 10,000 members against DynamoDB Local, in runs of
# 5 s; `make test` deletes one of 120. It prints members a second (stderr),
# never asserted.
org-purge-at-scale: tools ## deleting an organization of 10,000 members (ORG_PURGE_MEMBERS)
	ORG_PURGE_MEMBERS=$${ORG_PURGE_MEMBERS:-10000} ORG_PURGE_RUN_MS=$${ORG_PURGE_RUN_MS:-5000} scripts/ddb-local run -- \
		cargo nextest run --profile scale -p integration-tests --test workload --no-capture \
		purge::a_large_organization_is_deleted_in_short_runs

# The concurrent workload at full size: 50 users, 5,000 operations on shared
# addresses; `make test` runs 1,500.
workload-at-scale: tools ## the concurrent workload, 5,000 operations (WORKLOAD_OPERATIONS)
	WORKLOAD_OPERATIONS=$${WORKLOAD_OPERATIONS:-5000} scripts/ddb-local run -- \
		cargo nextest run --profile scale -p integration-tests --test workload --no-capture \
		workload::concurrent_users_on_shared_addresses_keep_every_rule

# A directory's pages of an organization of 1,000 members, then of 100,000,
# against DynamoDB Local: each page's memberships evaluated (asserted: the
# last page's as the first's), read units and times (printed); `make test`
# runs 300.
scim-pages-at-scale: tools ## a directory's list pages at 1,000 and 100,000 members (SCIM_PAGE_MEMBERS)
	for members in $${SCIM_PAGE_MEMBERS:-1000 100000}; do \
		SCIM_PAGE_MEMBERS=$$members scripts/ddb-local run -- \
			cargo nextest run --profile scale -p integration-tests --test workload --no-capture \
			scim_pages::a_page_of_a_large_organization_costs_what_it_returns || exit 1; \
	done

dev: tools ## run the whole service locally: DynamoDB Local, every function, the HTTP API on 127.0.0.1:3000
	scripts/dev

# Needs make dev running; `make test` runs it in make dev's end-to-end test.
scim-conformance: tools ## the scim2-tester RFC 7643/7644 suite against a running make dev's SCIM routes
	scripts/scim-conformance

dev-reset: ## wipe the local database (stop make dev first)
	@if curl -s -o /dev/null http://127.0.0.1:$${DDB_PORT:-8000}/; then echo "stop make dev first"; exit 1; fi
	rm -rf .local/ddb
	@echo "local database wiped"
