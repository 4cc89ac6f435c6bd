# Entry points. Every target is a thin wrapper over scripts/, which CI runs through
# `make test` (.ci/run). See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
# ansible-playbook, molecule and ansible-lint find the dependencies and this
# collection (linked to the checkout) in .collections/, never on Galaxy.
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.collections
export PATH := $(VENV)/bin:$(PATH)

.PHONY: help deps demo lab-down test lab-test test-vm lint sanity units releases changelog argspecs galaxy molecule build clean distclean bench

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

deps: ## Install apt packages, .venv and .collections (cached; fast when nothing changed)
	@scripts/deps.sh

# The demo lab (FABRIC_LAB_INSTANCE unset or "lab") reads inventories/lab; another instance gets an inventory of
# its own from labctl (its ports, key and cache), so that `FABRIC_LAB_INSTANCE=<name> make demo` never reaches
# the demo lab. A lab node's reboot is its container restarting: the demo allows reboots.
DEMO_INSTANCE := $(filter-out lab,$(FABRIC_LAB_INSTANCE))
DEMO_INVENTORY := $(if $(DEMO_INSTANCE),$(CURDIR)/.cache/lab-$(DEMO_INSTANCE)/inventory,$(CURDIR)/inventories/lab)
demo: deps ## Start the simulated lab and run playbooks/site.yml against it, reboots allowed (container restarts)
	@echo "demo: reboots here are container restarts of the simulated lab, so the demo allows them (-e infiniband_allow_reboot=true)"
	$(if $(DEMO_INSTANCE),$(PY) lab/labctl.py inventory >/dev/null)
	FABRIC_LAB_INVENTORY=$(DEMO_INVENTORY) $(PY) lab/labctl.py up
	FABRIC_LAB_INVENTORY=$(DEMO_INVENTORY) $(VENV)/bin/ansible-playbook -i $(DEMO_INVENTORY) playbooks/site.yml \
	  -e infiniband_allow_reboot=true

lab-down: ## Stop and remove the simulated lab
	$(if $(wildcard $(PY)),$(PY),python3) lab/labctl.py down

test: ## Everything CI runs: deps, lint, sanity, units, releases, changelog, argspecs, galaxy, molecule, lab, molecule-vm
	@scripts/test.sh

lint: deps ## ruff, yamllint, ansible-lint
	@scripts/lint.sh

sanity: deps ## ansible-test sanity on a copy of the collection
	@scripts/sanity.sh

units: deps ## pytest on tests/unit and lab/tests
	@scripts/units.sh

releases: deps ## The tests of ansible-core's internals the collection uses, against every supported ansible-core release
	@scripts/releases.sh

changelog: deps ## antsibull-changelog lint
	@scripts/changelog.sh

argspecs: deps ## roles/*/defaults/main.yml and meta/argument_specs.yml name the same variables
	@$(PY) scripts/check_argument_specs.py

galaxy: deps ## The built artifact: galaxy-importer, ansible-builder introspect and create, antsibull-docs lint
	@scripts/galaxy.sh

molecule: deps ## molecule test for every scenario not ending in _vm
	@scripts/molecule.sh

lab-test: deps ## Only the lab test (tests/lab/): resets the demo lab, site.yml from fresh nodes, through ansible-runner
	@scripts/lab.sh

test-vm: deps ## Only the scenarios ending in _vm (Debian's kernel in QEMU; lab/vm/); make test runs them in the background
	@scripts/molecule.sh --vm

bench: deps ## Benchmarks on a lab instance of their own (not in make test): results/, docs/performance.md
	$(PY) scripts/bench.py $(BENCH_ARGS)

build: deps ## Build the collection artifact into .cache/build/
	$(VENV)/bin/ansible-galaxy collection build --force --output-path .cache/build

clean: ## Remove test output and caches made in the checkout (keeps .venv, .collections)
	rm -rf .cache/sanity .cache/build .cache/galaxy .cache/logs tests/output .pytest_cache .ruff_cache

distclean: clean ## Also remove .venv, .collections, the stamps and .cache/lab (run lab-down first)
	rm -rf .venv .collections .cache .ansible
