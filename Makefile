# HealthETL — every target installs the Debian packages it needs first (as root, or via sudo).
#
#   make run      [EXPORT=path] [OUT=dir] [TZ_NAME=zone] [ARGS="--recover …"]   the default pipeline (the bundled sample by default)
#   make sleep | workouts | stats | samples [EXPORT=…] [OUT=…]   one pipeline of Pipelines/
#   make nightly  [INBOX=dir] [OUT=dir] [DELIVERY_CONFIG=f] process new exports of an inbox (cron)
#   make test                                              build and run the whole test suite
#   make inspect  [EXPORT=path]                            say what an export holds
#   make bench    [BENCH_MB=1000]                          throughput vs the libxml2 floor, peak memory
#   make sample                                            regenerate SampleData/export.zip
#   make lint / make format                                layer and docs checks + swift format
#   make test-e2e                                          the Python end-to-end tests (Tests/EndToEnd)
#   make serve    [OUT=dir] [PORT=8001]                    Datasette + MCP (/-/mcp) over OUT/health.sqlite, on 127.0.0.1
#   make gallery                                           screenshots of the report of every sample profile and real export
#   make cohort   COHORT=dir|manifest.csv OUT=dir [EXECUTOR=local|slurm] [JOBS=n] [CONFIG="key=value ..."]
#                 [PENDING_TIMEOUT=minutes] [SNAKEMAKE="--any-snakemake-or-profile-option ..."]
#   make fuzz     [FUZZ_SECONDS=60] [FUZZ_HARNESSES="xml …"]  libFuzzer + ASan on every reader of input
#   make fuzz-smoke                                        replay the fuzz corpus and fuzz briefly (CI)
#   make influxdb                                          Debian's influxd for the InfluxDB test, unpacked into .build

EXPORT   ?= SampleData/export.zip
OUT      ?= out
TZ_NAME  ?= auto
INBOX    ?= inbox
BENCH_MB ?= 1000
BENCH_DIR := .build/bench
SWIFT    ?= swift
PACKAGES := libxml2-dev libarchive-dev libssl-dev libxlsxwriter-dev libcurl4-openssl-dev libsqlite3-dev sqlite3 openssl pkg-config tzdata python3 strace libjs-chart.js
RELEASE_BIN := .build/release/healthetl

.PHONY: docs deps build release run sleep workouts stats samples nightly inspect validate test bench sample lint format \
	clean cohort cohort-venv e2e-venv serve serve-venv test-cohort slurm-packages fuzz fuzz-build fuzz-smoke

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
	$(RELEASE_BIN) run --out $(OUT) --tz $(TZ_NAME) $(ARGS) $(EXPORT)
	@echo "Outputs in $(OUT)/ — open $(OUT)/report.html in a browser (xdg-open $(OUT)/report.html); what ran: $(OUT)/run.json"

sleep workouts stats samples: release
	$(RELEASE_BIN) run --pipeline Pipelines/$@.json --out $(OUT) --tz $(TZ_NAME) $(ARGS) $(EXPORT)

nightly: release
	@mkdir -p $(INBOX)
	$(RELEASE_BIN) nightly --inbox $(INBOX) --out $(OUT) --tz $(TZ_NAME) \
	  $(if $(DELIVERY_CONFIG),--delivery-config $(DELIVERY_CONFIG))

inspect: release
	$(RELEASE_BIN) inspect --tz $(TZ_NAME) $(ARGS) $(EXPORT)

validate: release
	$(RELEASE_BIN) validate $(EXPORT)

# The end-to-end tests run the real binary, so it is built first.
test: deps
	$(SWIFT) build
	$(SWIFT) test
	$(MAKE) test-e2e

sample: release
	$(RELEASE_BIN) sample --days 28 --seed 1 --zip --out SampleData/export.zip

# Same export, same run: the libxml2 floor, `inspect` and the default pipeline on the XML, then the
# floor (through `unzip -p`) and the pipeline on the same export zipped, interleaved, best of
# three; one table (Tests/Benchmarks/bench.sh). Generated exports are cached in .build/bench.
bench: release
	@$(MAKE) --no-print-directory deps PACKAGES="jq unzip time procps"
	$(SWIFT) build -c release --product xmlfloor
	@mkdir -p $(BENCH_DIR)
	@test -f $(BENCH_DIR)/export-$(BENCH_MB)mb.xml || \
	  $(RELEASE_BIN) sample --target-mb $(BENCH_MB) --seed 7 --out $(BENCH_DIR)/export-$(BENCH_MB)mb.xml
	@test -f $(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml || \
	  $(RELEASE_BIN) sample --target-mb $$(($(BENCH_MB) / 10)) --seed 7 --out $(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml
	@BIN=$(RELEASE_BIN) FLOOR=.build/release/xmlfloor FILE=$(BENCH_DIR)/export-$(BENCH_MB)mb.xml \
	  ZIP=$(BENCH_DIR)/export-$(BENCH_MB)mb.zip \
	  SMALL=$(BENCH_DIR)/export-$$(($(BENCH_MB) / 10))mb.xml OUTDIR=$(BENCH_DIR)/out sh Tests/Benchmarks/bench.sh

# The column tables of the reference (Pipelines/README.md, Pipelines/docs/*.md), from the tables'
# declarations.
docs: build
	python3 Tests/Tools/update_column_docs.py .build/debug/healthetl Pipelines/README.md $(wildcard Pipelines/docs/*.md)

# The layer and docs checks are pure Python and take about a second, so they run first: no
# backward reference between folders, no citation of a doc section that does not exist, no
# relative link that does not resolve.
lint:
	python3 Tests/Tools/check_layers.py Sources/HealthETL
	python3 Tests/Tools/check_docs.py
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

# --- Fuzzing (Tests/Fuzz/README.md) --------------------------------------------------------
# A separate package builds the harnesses with -sanitize=fuzzer,address; found inputs are kept in
# .build/fuzz-corpus/, crashes in .build/fuzz-artifacts/. The smoke exits non-zero on any crash.
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 10
# Empty: every harness Tests/Fuzz/fuzz.sh lists (its ALL), so a new harness is named in one place.
FUZZ_HARNESSES     ?=

fuzz-build: deps
	SWIFT=$(SWIFT) bash Tests/Fuzz/fuzz.sh build

fuzz: fuzz-build
	bash Tests/Fuzz/fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

fuzz-smoke: fuzz-build
	bash Tests/Fuzz/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_HARNESSES)
# --- end of fuzzing ---------------------------------------------------------------------------

clean:
	rm -rf .build $(OUT)

# ---- Cohorts (Pipelines/cohort) and what the end-to-end tests need ----------------------------
# `make cohort` runs the Snakemake workflow of Pipelines/cohort over every export of COHORT (a
# folder, or a manifest CSV `participant,export`) into OUT; EXECUTOR=slurm submits the jobs to
# Slurm. The workflow's pinned environment lives in .build/cohort-venv, the tests' in .build/venv.
EXECUTOR ?= local
JOBS     ?= 0
COHORT_VENV := .build/cohort-venv
E2E_VENV    := .build/venv
SERVE_VENV  := .build/serve-venv
VENV_PACKAGES  := python3-venv

$(COHORT_VENV)/.installed: Pipelines/cohort/requirements.txt
	@python3 -c "import ensurepip" 2>/dev/null || $(MAKE) deps PACKAGES="$(VENV_PACKAGES)"
	python3 -m venv $(COHORT_VENV)
	$(COHORT_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	@touch $@

# Tests/EndToEnd/requirements.txt includes Pipelines/serve/requirements.txt (the serving test).
$(E2E_VENV)/.installed: Tests/EndToEnd/requirements.txt Pipelines/serve/requirements.txt
	@python3 -c "import ensurepip" 2>/dev/null || $(MAKE) deps PACKAGES="$(VENV_PACKAGES)"
	python3 -m venv $(E2E_VENV)
	$(E2E_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	@touch $@

$(SERVE_VENV)/.installed: Pipelines/serve/requirements.txt
	@python3 -c "import ensurepip" 2>/dev/null || $(MAKE) deps PACKAGES="$(VENV_PACKAGES)"
	python3 -m venv $(SERVE_VENV)
	$(SERVE_VENV)/bin/pip install --quiet --disable-pip-version-check -r $<
	@touch $@

cohort-venv: $(COHORT_VENV)/.installed
e2e-venv: $(E2E_VENV)/.installed
serve-venv: $(SERVE_VENV)/.installed

# Datasette over the last run's database, read-only, on loopback, with the MCP endpoint /-/mcp
# and the canned queries of Pipelines/serve/queries.yaml (Pipelines/serve/README.md). It serves
# what OUT holds when it starts: run `make run` first, and restart after a new run.
PORT ?= 8001
serve: serve-venv
	DATASETTE=$(SERVE_VENV)/bin/datasette sh Pipelines/serve/serve.sh $(OUT) --port $(PORT)

cohort: release cohort-venv
	@test -n "$(COHORT)" || { echo "make cohort: set COHORT=folder-or-manifest.csv and OUT=folder"; exit 64; }
	@test "$(origin OUT)" = "command line" || test "$(origin OUT)" = environment || \
	  { echo "make cohort: set OUT=folder (the output of many participants, not ./out)"; exit 64; }
	$(COHORT_VENV)/bin/python Pipelines/cohort/launch.py --cohort "$(COHORT)" --out "$(OUT)" \
	  --executor $(EXECUTOR) --jobs $(JOBS) $(if $(PENDING_TIMEOUT),--pending-timeout-min $(PENDING_TIMEOUT)) \
	  $(if $(CONFIG),--config $(CONFIG)) $(if $(SNAKEMAKE),-- $(SNAKEMAKE))

# Slurm and munge for the cohort test's one-node cluster, only where no Slurm is configured.
slurm-packages:
	@sh Tests/EndToEnd/install-slurm.sh

test-cohort: release cohort-venv e2e-venv slurm-packages
	HEALTHETL_BIN=$(RELEASE_BIN) COHORT_PYTHON=$(COHORT_VENV)/bin/python \
	  timeout -k 30 900 $(E2E_VENV)/bin/python -m unittest -v Tests/EndToEnd/test_cohort.py

# Debian's InfluxDB 1.x for Tests/EndToEnd/test_influx.py: the package is unpacked into .build rather
# than installed, since installing it starts a system service with the configuration in /etc; the
# test runs its own influxd on loopback. An influxd already on the PATH is used as it is.
INFLUXDB_DIR := .build/influxdb
.PHONY: influxdb test-influx
influxdb:
	@command -v influxd >/dev/null 2>&1 || test -x $(INFLUXDB_DIR)/usr/bin/influxd || { \
	  echo "Unpacking Debian's influxdb into $(INFLUXDB_DIR)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  apt-cache show influxdb >/dev/null 2>&1 || $$SUDO apt-get update -qq; \
	  rm -rf $(INFLUXDB_DIR).download && mkdir -p $(INFLUXDB_DIR).download && \
	  (cd $(INFLUXDB_DIR).download && apt-get download -qq influxdb) && \
	  dpkg-deb -x $(INFLUXDB_DIR).download/influxdb_*.deb $(INFLUXDB_DIR) && rm -rf $(INFLUXDB_DIR).download; }

test-influx: release e2e-venv influxdb
	HEALTHETL_BIN=$(RELEASE_BIN) timeout -k 30 300 $(E2E_VENV)/bin/python -m unittest -v Tests/EndToEnd/test_influx.py

# --- end-to-end tests (Python, stdlib unittest) ---------------------------------------------
# Run by .build/venv's python: the standard library plus Tests/EndToEnd/requirements.txt. The
# cohort test also needs the release binary, the workflow's venv and, for its Slurm part, Slurm.
.PHONY: test-e2e
test-e2e: release e2e-venv cohort-venv slurm-packages report-page-deps workbook-deps influxdb
	HEALTHETL_BIN=$(RELEASE_BIN) COHORT_PYTHON=$(COHORT_VENV)/bin/python \
	  timeout -k 30 1800 $(E2E_VENV)/bin/python -m unittest discover -s Tests/EndToEnd -v

# --- report page in a real browser (headless Chromium; stdlib Python only) -------------------
#   make test-report-page      report.html with the example and a 10-year synthetic data file
#   make report-screenshot     regenerate Pipelines/report/screenshot.png from example-data.json
REPORT_PAGE_PACKAGES := chromium libjs-chart.js python3

.PHONY: report-page-deps test-report-page report-screenshot
report-page-deps:
	@missing=""; for p in $(REPORT_PAGE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

test-report-page: report-page-deps
	python3 -m unittest discover -s Tests/EndToEnd -p 'test_report_page.py' -v

report-screenshot: report-page-deps
	@mkdir -p .build
	python3 Tests/EndToEnd/report_fixture.py --data Pipelines/report/example-data.json \
	  --out .build/report-example.html --screenshot Pipelines/report/screenshot.png

# The default pipeline on every `sample --profile` and every real export of ../shared/fixtures/real
# (when present), and each report.html at desktop (1280 px) and phone (390 px) width:
# .build/gallery/<export>-desktop.png and -phone.png, the outputs in .build/gallery/outputs/.
.PHONY: gallery readme-picture
gallery: release report-page-deps
	HEALTHETL_BIN=$(RELEASE_BIN) python3 Tests/EndToEnd/gallery.py --out .build/gallery

# The README's picture: the first screen of the bundled sample's report from `make gallery`,
# 900 px wide in 128 colours (ImageMagick's convert, installed when missing).
readme-picture: gallery
	@command -v convert >/dev/null || $(MAKE) deps PACKAGES=imagemagick
	convert .build/gallery/sample-desktop.png -crop 1280x1240+0+0 -resize 900x -colors 128 SampleData/report.png

# --- Workbook round trip (libxlsxwriter) --------------------------------------------------------
# Opens a workbook written through libxlsxwriter in a real spreadsheet program. Gnumeric's
# ssconvert is installed when missing (without recommends: 19 MB download, 53 MB on disk, against
# 90 MB / 276 MB for libreoffice-calc-nogui); WORKBOOK_TOOL=soffice uses LibreOffice instead.
.PHONY: test-workbook workbook-deps
workbook-deps:
	@command -v ssconvert >/dev/null 2>&1 || { \
	  echo "Installing Debian package: gnumeric"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends gnumeric; }

test-workbook: deps workbook-deps
	SWIFT=$(SWIFT) python3 -m unittest -v Tests/EndToEnd/test_workbook_roundtrip.py
