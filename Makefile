# kafka-specgen: every target bootstraps the local .venv it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SPECS ?= specs
OUT := generated
PACKAGE := kafka_messages

.PHONY: setup generate check test lint clean

# The venv is rebuilt when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

setup: $(VENV)/.installed ## create .venv with the generator and test tools

generate: $(VENV)/.installed ## generate generated/kafka_messages from specs/ (or SPECS=...)
	$(PY) -m generator.cli generate --specs $(SPECS) --out $(OUT) --package $(PACKAGE)

check: $(VENV)/.installed ## fail if generated/ differs from a fresh generation
	$(PY) -m generator.cli generate --specs $(SPECS) --out $(OUT) --package $(PACKAGE) --check

test: $(VENV)/.installed ## run every test
	$(PY) -m pytest -q

lint: $(VENV)/.installed ## black and mypy on the generator, mypy --strict on the generated package
	$(PY) -m black --check generator tests
	$(PY) -m mypy generator
	cd $(OUT) && ../$(PY) -m mypy --strict $(PACKAGE)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .hypothesis
