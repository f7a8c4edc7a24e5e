# HealthETL — every target installs the Debian packages it needs first (as root, or via sudo).
#
#   make run      [EXPORT=path] [OUT=dir] [TZ_NAME=zone]   the default pipeline (the bundled sample by default)
#   make sleep | workouts | stats | samples [EXPORT=…] [OUT=…]   one pipeline of Pipelines/
#   make nightly  [INBOX=dir] [OUT=dir]                    process new exports of an inbox (cron)
#   make test                                              build and run the whole test suite
#   make inspect  [EXPORT=path]                            say what an export holds
#   make bench    [BENCH_MB=1000]                          throughput vs the libxml2 floor, peak memory
#   make sample                                            regenerate SampleData/export.zip
#   make lint / make format                                swift format
#   make fuzz     [FUZZ_SECONDS=60] [FUZZ_HARNESSES="xml …"]  libFuzzer + ASan on every reader of input
#   make fuzz-smoke                                        replay the fuzz corpus and fuzz briefly (CI)

EXPORT   ?= SampleData/export.zip
OUT      ?= out
TZ_NAME  ?= auto
INBOX    ?= inbox
BENCH_MB ?= 1000
BENCH_DIR := .build/bench
SWIFT    ?= swift
PACKAGES := libxml2-dev libarchive-dev libssl-dev pkg-config tzdata python3
RELEASE_BIN := .build/release/healthetl

.PHONY: deps build release run sleep workouts stats samples nightly inspect validate test bench sample lint format \
	clean fuzz fuzz-build fuzz-smoke

# Installs only what is missing, so a provisioned machine pays nothing.
deps:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product healthetl

run: release
	$(RELEASE_BIN) run --out $(OUT) --tz $(TZ_NAME) $(EXPORT)
	@echo "Outputs in $(OUT)/ — see $(OUT)/run.json"

sleep workouts stats samples: release
	$(RELEASE_BIN) run --pipeline Pipelines/$@.json --out $(OUT) --tz $(TZ_NAME) $(EXPORT)

nightly: release
	@mkdir -p $(INBOX)
	$(RELEASE_BIN) nightly --inbox $(INBOX) --out $(OUT) --tz $(TZ_NAME)

inspect: release
	$(RELEASE_BIN) inspect --tz $(TZ_NAME) $(EXPORT)

validate: release
	$(RELEASE_BIN) validate $(EXPORT)

# The end-to-end tests run the real binary, so it is built first.
test: deps
	$(SWIFT) build
	$(SWIFT) test

sample: release
	$(RELEASE_BIN) sample --days 28 --seed 1 --zip --out SampleData/export.zip

# Same file, same run: the libxml2 floor, `inspect` and the default pipeline, best of three each,
# interleaved; generated exports are cached in .build/bench.
bench: release
	$(SWIFT) build -c release --product xmlfloor
	@mkdir -p $(BENCH_DIR)
	@test -f $(BENCH_DIR)/export-$(BENCH_MB)mb.xml || \
	  $(RELEASE_BIN) sample --target-mb $(BENCH_MB) --seed 7 --out $(BENCH_DIR)/export-$(BENCH_MB)mb.xml
	@test -f $(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml || \
	  $(RELEASE_BIN) sample --target-mb $$(($(BENCH_MB) / 10)) --seed 7 --out $(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml
	@BIN=$(RELEASE_BIN) FLOOR=.build/release/xmlfloor FILE=$(BENCH_DIR)/export-$(BENCH_MB)mb.xml \
	  SMALL=$(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml OUTDIR=$(BENCH_DIR)/out sh Tests/Benchmarks/bench.sh

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

# --- Fuzzing (Tests/Fuzz/README.md) --------------------------------------------------------
# A separate package builds the harnesses with -sanitize=fuzzer,address; found inputs are kept in
# .build/fuzz-corpus/, crashes in .build/fuzz-artifacts/. The smoke exits non-zero on any crash.
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_HARNESSES     ?= xml run zip pipeline codes state

fuzz-build: deps
	SWIFT=$(SWIFT) bash Tests/Fuzz/fuzz.sh build

fuzz: fuzz-build
	bash Tests/Fuzz/fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-smoke: fuzz-build
	bash Tests/Fuzz/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_HARNESSES)
# --- end of fuzzing ---------------------------------------------------------------------------

clean:
	rm -rf .build $(OUT)
