# kafka-specgen: every target bootstraps the local .venv it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
KAFKAJS := $(VENV)/kafkajs
SPECGEN := $(PY) -m kafka_specgen.cli
SPECS ?= specs
OUT := generated
PACKAGE := kafka_messages

.PHONY: help setup system-deps generate check test test-layout lint clean fuzz fuzz-records regen-check capture

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

# The venv is rebuilt when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark,accel]'
	touch $@

setup: $(VENV)/.installed ## create .venv with the generator and test tools

generate: $(VENV)/.installed ## generate generated/kafka_messages from specs/ (or SPECS=...)
	$(SPECGEN) generate --specs $(SPECS) --out $(OUT) --package $(PACKAGE)

check: $(VENV)/.installed ## fail if generated/ differs from a fresh generation
	$(SPECGEN) generate --specs $(SPECS) --out $(OUT) --package $(PACKAGE) --check

# Test files run on TEST_WORKERS processes (default 2, one per core of the machines it is
# made for), each file whole on one of them.
test: $(VENV)/.installed system-deps $(KAFKAJS)/.installed ## run every test (Spark, live broker and browser tests included), on TEST_WORKERS processes (default 2)
	$(PY) -m pytest -q -n $(or $(TEST_WORKERS),2) --dist loadfile

test-layout: $(VENV)/.installed ## hold every corpus, both flavours, to black's layout (make test checks the newest corpus); ~2 min
	KAFKA_SPECGEN_LAYOUT=all $(PY) -m pytest -q tests/generator/test_layout.py

# The pipeline's tests need Java 17+ (PySpark), the report's test Debian's Chromium, the fake
# broker's client matrix kcat and Node.js: installed with apt-get where missing (as root),
# else one line says how.
system-deps:
	@java -version >/dev/null 2>&1 || $(call apt_install,openjdk-17-jre-headless default-jre-headless,java)
	@command -v chromium >/dev/null 2>&1 || $(call apt_install,chromium,chromium)
	@command -v kcat >/dev/null 2>&1 || $(call apt_install,kcat,kcat)
	@command -v npm >/dev/null 2>&1 || $(call apt_install,npm,npm)

# KafkaJS for the fake broker's client matrix, from npm at the version pinned by
# tests/support/kafkajs/package-lock.json, into .venv/kafkajs (npm ci: exactly the lock).
$(KAFKAJS)/.installed: tests/support/kafkajs/package.json tests/support/kafkajs/package-lock.json | system-deps
	mkdir -p $(KAFKAJS)
	cp tests/support/kafkajs/package.json tests/support/kafkajs/package-lock.json $(KAFKAJS)/
	cd $(KAFKAJS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# $(call apt_install,PACKAGES (first that installs wins),COMMAND)
apt_install = { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	echo "installing $(2) (Debian packages: $(1))"; apt-get update -qq && \
	for p in $(1); do apt-get install -y -qq $$p >/dev/null && break; done; \
	command -v $(2) >/dev/null 2>&1 || { echo "could not install $(2)"; exit 1; }; \
	else echo "$(2) is missing: install it, e.g. sudo apt-get install $(firstword $(1))"; exit 1; fi; }

lint: $(VENV)/.installed ## black everywhere; mypy --strict on the tool and on the generated package (whose runtime modules are the templates/runtime sources, byte for byte)
	$(PY) -m black --check generator tests bench tools templates
	$(PY) -m mypy --strict -p kafka_specgen
	cd $(OUT) && ../$(PY) -m mypy --strict $(PACKAGE)

fuzz: $(VENV)/.installed ## mutation-fuzz every decoder (FUZZ_CASES, default 1,000,000); prints counts
	$(PY) -m tests.support.fuzz --cases $(or $(FUZZ_CASES),1000000)

fuzz-records: $(VENV)/.installed ## mutation-fuzz the record-batch reader (FUZZ_CASES, default 200,000); prints counts
	$(PY) -m tests.support.fuzz_records --cases $(or $(FUZZ_CASES),200000)

regen-check: $(VENV)/.installed ## regenerate from SPECS=... into a temp folder, diff against generated/, print the changelog
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(SPECGEN) generate --specs $(SPECS) --out "$$tmp" --package $(PACKAGE) && \
	echo "== generated code: $(OUT)/$(PACKAGE) -> fresh generation from $(SPECS) ==" && \
	if diff -ruN -x __pycache__ $(OUT)/$(PACKAGE) "$$tmp/$(PACKAGE)" > "$$tmp/code.diff"; then \
		echo "no change"; \
	else \
		diff -rq -x __pycache__ $(OUT)/$(PACKAGE) "$$tmp/$(PACKAGE)" | sed \
			-e "s|^Only in $(OUT)/$(PACKAGE): |  removed  |" \
			-e "s|^Only in $(OUT)/$(PACKAGE)/\\(.*\\): |  removed  \\1/|" \
			-e "s|^Only in $$tmp/$(PACKAGE): |  added    |" \
			-e "s|^Only in $$tmp/$(PACKAGE)/\\(.*\\): |  added    \\1/|" \
			-e "s|^Files $(OUT)/$(PACKAGE)/\\(.*\\) and .* differ|  changed  \\1|" | sort -k2; \
		echo "($$(wc -l < "$$tmp/code.diff") lines of diff$(if $(REGEN_DIFF),; written to $(REGEN_DIFF),; REGEN_DIFF=FILE keeps it))"; \
		$(if $(REGEN_DIFF),cp "$$tmp/code.diff" "$(REGEN_DIFF)";) \
	fi && \
	echo "== changelog: $(or $(BASE_SPECS),specs) -> $(SPECS) ==" && \
	$(SPECGEN) diff $(or $(BASE_SPECS),specs) $(SPECS) --format $(or $(DIFF_FORMAT),text)

capture: $(VENV)/.installed ## record tests/golden/ (Tansu + real clients through `kafka-specgen capture`)
	$(PY) tools/record_golden.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis build

.PHONY: pipeline bench-pipeline
pipeline: $(VENV)/.installed ## PySpark pipeline (local mode) on tests/golden/ -> PIPELINE_OUT, with readiness for Kafka 4.0 and report.html (PIPELINE_RELEASE=X.Y or PIPELINE_SPECS=... to decode with; PIPELINE_TARGET=X.Y)
	$(SPECGEN) pipeline --input tests/golden --out $(or $(PIPELINE_OUT),build/pipeline) $(PIPELINE_DECODE) --target-release $(or $(PIPELINE_TARGET),4.0) --report

bench-pipeline: $(VENV)/.installed ## pipeline frames/s on a synthetic capture (BENCH_FRAMES, default 1,000,000) beside a plain Python loop
	$(PY) bench/pipeline_bench.py --frames $(or $(BENCH_FRAMES),1000000)

.PHONY: bench bench-codecs bench-records bench-connection bench-fake-broker compiled test-compiled

bench-connection: $(VENV)/.installed ## the connection layer per request beside bare framing and kafka-python's KafkaProtocol -> bench/CONNECTION.md
	$(PY) bench/connection_bench.py --json bench/connection_results.json --markdown bench/CONNECTION.md

bench-fake-broker: $(VENV)/.installed ## the fake broker beside Tansu on the same loads (round trips, pipelined requests, batched produce, consume with three clients, latency beside parked Fetches) -> bench/FAKE_BROKER.md; run it on a quiet machine
	$(PY) bench/fake_broker_bench.py --json bench/fake_broker_results.json --markdown bench/FAKE_BROKER.md
bench: bench-codecs bench-records bench-connection bench-fake-broker bench-pipeline ## every benchmark: codecs, record batches, the connection and the fake broker beside the peers, then the Spark pipeline

bench-codecs: $(VENV)/.installed ## codec benchmark, pure-Python and mypyc builds, beside kio and kafka-python 3 -> bench/results.json, bench/RESULTS.md (BENCH_ARGS="--quick --cases ..." or "--no-compiled")
	$(PY) bench/run.py $(BENCH_ARGS)

compiled: $(VENV)/.installed ## mypyc build of generated/kafka_messages into build/compiled (test it: make test-compiled)
	$(PY) bench/compile.py

test-compiled: compiled ## every test against the mypyc build (golden and differential included)
	KAFKA_MESSAGES_COMPILED=1 $(PY) -m pytest -q

# --- the pipeline's report and cluster test ----------------------------------------------------
.PHONY: report test-cluster
# make pipeline decodes the golden captures with every Kafka release's versions (the
# pipeline's default, --release all); PIPELINE_RELEASE=X.Y or PIPELINE_SPECS=PATH decode with
# one spec set instead.
PIPELINE_DECODE = $(if $(PIPELINE_SPECS),--specs $(PIPELINE_SPECS),$(if $(PIPELINE_RELEASE),--release $(PIPELINE_RELEASE)))

report: $(VENV)/.installed ## the HTML report of tables the pipeline wrote (PIPELINE_OUT, default build/pipeline) -> PIPELINE_OUT/report.html
	$(SPECGEN) report $(or $(PIPELINE_OUT),build/pipeline)

test-cluster: $(VENV)/.installed system-deps ## the pipeline on a Spark standalone cluster (master + 2 workers on loopback): spark-submit equals local mode, and the wheel runs there (~8 min; .ci/run runs it)
	$(PY) -m pytest -q tests/pipeline/cluster_pipeline.py

bench-records: $(VENV)/.installed ## record batches: records/s decode and build, pure, with accelerators and mypyc, beside kafka-python and aiokafka; CRC-32C MB/s -> bench/records_results.json, bench/RECORDS.md (RECORDS_BENCH_ARGS="--quick")
	$(PY) bench/records_bench.py $(RECORDS_BENCH_ARGS)
