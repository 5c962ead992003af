# Build the bilingual book "Automatic Parallelism" and run its tests.
# `make` alone lists the targets. Every target sets up what it needs itself.

# Variables you may override, e.g. `make html LANGUAGES=tr`
# (comments stand above each: make would keep the spaces before a trailing comment)
# the Python that creates the virtual environment
PYTHON      ?= python3.11
# where the book's environment lives
VENV        ?= .venv
# the Python that builds; an offline GPU machine passes its own (see gpu-record)
BOOK_PYTHON ?= $(VENV)/bin/python
SPHINXOPTS  ?= --fail-on-warning --keep-going
# the books to build
LANGUAGES   ?= en tr
# examples to record, e.g. pytorch/auto_parallelism or 'mxnet/*' (default: all)
EXAMPLES    ?=
# EXECUTE=1: record the examples on this machine before building
EXECUTE     ?=
PYTESTOPTS  ?=
# the book that `make serve` previews, and its port on 127.0.0.1
SERVE_LANG  ?= tr
SERVE_PORT  ?= 8000
BUILDDIR    ?= _build

# Internal variables
HTMLDIR     := $(BUILDDIR)/html
WHEELHOUSE  := .wheelhouse
GPU_SITE    := .gpu-site
VENV_STAMP  := $(VENV)/.installed
SETUP       := $(if $(filter $(VENV)/bin/python,$(BOOK_PYTHON)),$(VENV_STAMP))
CHROMIUM    := /usr/bin/chromium
# The GPU machine's Python: 3.12 on manylinux x86_64 (wheels for `make wheelhouse`).
GPU_PLATFORM := --python-version 3.12 --implementation cp --only-binary=:all: \
	$(foreach n,17 24 27 28 31 34 35,--platform manylinux_2_$(n)_x86_64) --platform manylinux2014_x86_64

.PHONY: help html record test serve wheelhouse gpu-record clean

help:  ## list the targets
	@echo "Targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  \1\t\2/' | expand -t 14
	@echo "Variables: LANGUAGES='$(strip $(LANGUAGES))' EXAMPLES='$(strip $(EXAMPLES))' EXECUTE='$(strip $(EXECUTE))' BOOK_PYTHON=$(strip $(BOOK_PYTHON))"

$(VENV_STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -r requirements.txt
	touch $@

html: $(SETUP) $(if $(EXECUTE),record)  ## build the English and Turkish books from the recorded outputs (EXECUTE=1: record first, on a GPU machine)
	@# A failed build forgets its doctrees: Sphinx would not repeat the warnings of pages it
	@# does not read again, and the next build would pass with the broken pages.
	@for lang in $(LANGUAGES); do \
	  echo "Building the '$$lang' book"; \
	  BOOK_LANGUAGE=$$lang $(BOOK_PYTHON) -m sphinx -b html -c conf $(SPHINXOPTS) \
	    -d $(BUILDDIR)/doctrees/$$lang docs/$$lang $(HTMLDIR)/$$lang \
	  || { rm -rf $(BUILDDIR)/doctrees/$$lang; exit 1; }; \
	done
	cp conf/root-index.html $(HTMLDIR)/index.html
	@echo "The HTML book is in $(HTMLDIR)/: open $(HTMLDIR)/index.html"

record: $(SETUP)  ## run the examples through myst-nb on this machine and refresh their recordings (EXAMPLES= narrows)
	$(BOOK_PYTHON) conf/record.py --examples $(EXAMPLES)
	@echo "The recordings are in examples/recordings/: review and commit them"

test: html $(CHROMIUM)  ## build the books, then run the whole test suite (browser tests included)
	$(BOOK_PYTHON) -m pytest tests $(PYTESTOPTS)

serve: $(SETUP)  ## preview one book (SERVE_LANG=en|tr) with a live rebuild on http://127.0.0.1:8000 (SERVE_PORT=)
	BOOK_LANGUAGE=$(SERVE_LANG) $(VENV)/bin/sphinx-autobuild --port $(SERVE_PORT) -c conf --watch conf --watch examples \
	  -d $(BUILDDIR)/doctrees/serve-$(SERVE_LANG) docs/$(SERVE_LANG) $(BUILDDIR)/serve

wheelhouse:  ## download, for an offline GPU machine (Python 3.12), the wheels that recording needs into .wheelhouse/
	PIP_CONFIG_FILE=/dev/null $(PYTHON) -m pip download --quiet $(GPU_PLATFORM) -d $(WHEELHOUSE)/record -r conf/gpu-requirements.txt
	PIP_CONFIG_FILE=/dev/null $(PYTHON) -m pip download --quiet $(GPU_PLATFORM) --no-deps -d $(WHEELHOUSE)/mxnet mxnet==1.9.1
	@du -sh $(WHEELHOUSE)/*
	@echo "The wheels are in $(WHEELHOUSE)/: carry it to the GPU machine and run 'make gpu-record' there"

gpu-record:  ## on an offline GPU machine: install .wheelhouse/ into .gpu-site/ with its own python3, then record
	for part in $(wildcard $(WHEELHOUSE)/*); do \
	  python3 -m pip install --quiet --no-index --no-deps --no-compile --upgrade --target $(GPU_SITE) $$part/*.whl || exit 1; \
	done
	PYTHONPATH=$(CURDIR)/$(GPU_SITE) $(MAKE) record BOOK_PYTHON=python3

$(CHROMIUM):
	@echo "The browser tests need Debian's chromium; installing it"
	apt-get update -qq && apt-get install -y -qq chromium

clean:  ## remove the built books (keeps .venv and the recordings)
	rm -rf $(BUILDDIR)
	@echo "Removed $(BUILDDIR)/"
