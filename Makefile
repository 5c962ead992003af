# Build the bilingual book "Automatic Parallelism" and run its tests.
# `make` alone lists the targets. Every target sets up what it needs itself.

# Variables you may override, e.g. `make html LANGUAGES=tr`
# (comments stand above each: make would keep the spaces before a trailing comment)
# the Python that creates the virtual environments
PYTHON        ?= python3.11
# where the book's environment lives (CPU build of torch)
VENV          ?= .venv
# where a GPU machine's recording environment lives (PyPI's CUDA build of torch)
GPU_VENV      ?= .venv-gpu
# a small environment with numpy 2, in which `make test` runs the MXNet scripts
NUMPY2_VENV   ?= .venv-numpy2
# the Python 3.12 on which `make test` installs the MXNet zips' requirements and runs the MXNet scripts
# (the test skips, saying why, where it does not run)
PYTHON312     ?= python3.12
MXNET312_VENV ?= .venv-mxnet312
# the Python that builds the books
BOOK_PYTHON   ?= $(VENV)/bin/python
SPHINXOPTS    ?= --fail-on-warning --keep-going
# the books to build
LANGUAGES     ?= en tr
# examples to record, e.g. pytorch/auto_parallelism or 'mxnet/*' (default: all)
EXAMPLES      ?=
# SHARD=K/N: record only the K-th of N parts of the examples (split by their previous run times)
SHARD         ?=
# AS_RUN=1: keep the recordings the book shows and add this run to their other runs (a second GPU model)
AS_RUN        ?=
# EXECUTE=1: record the examples on this machine before building
EXECUTE       ?=
# RECORD_ON_CPU=1: record on a machine without an NVIDIA GPU anyway (a check; do not commit it)
RECORD_ON_CPU ?=
PYTESTOPTS    ?=
# how many processes `make test` runs the test files in (pytest-xdist; each file's tests stay in one
# process, so a file's shared runs happen once); 2 keeps a 2-core machine busy, 1 runs them in turn
TEST_WORKERS  ?= 2
# the book that `make serve` previews, and its port on 127.0.0.1
SERVE_LANG    ?= en
SERVE_PORT    ?= 8000
BUILDDIR      ?= _build

# Internal variables
HTMLDIR     := $(BUILDDIR)/html
SERVE_DIR   := $(BUILDDIR)/serve
SERVE_LANGUAGES := en tr
SERVE_OTHER  = $(filter-out $(SERVE_LANG),$(SERVE_LANGUAGES))
PDFDIR      := $(BUILDDIR)/pdf
# The HTML books link the PDF that `make pdf` printed there, and only where it exists (conf.py)
PDF_FOR_HTML := BOOK_PDF_DIR=$(abspath $(PDFDIR))
# the one-page HTML of each book that conf/print_pdf.py prints (the pdfhtml builder of conf/ext/pdf_book.py)
PDFHTMLDIR  := $(BUILDDIR)/pdfhtml
WHEELHOUSE  := .wheelhouse
GPU_SITE    := .gpu-site
VENV_STAMP  := $(VENV)/.installed
SETUP       := $(if $(filter $(VENV)/bin/python,$(BOOK_PYTHON)),$(VENV_STAMP))
CHROMIUM    := /usr/bin/chromium
FONTS       := /usr/share/fonts/truetype
# What the PDF needs from Debian, as package:file-it-installs: the browser that prints it, and the
# fonts that conf/_static/pdf.css names (the browser tests need the browser too)
DEBIAN_NEEDS := chromium:$(CHROMIUM) fonts-liberation:$(FONTS)/liberation/LiberationSerif-Regular.ttf \
	fonts-dejavu-core:$(FONTS)/dejavu/DejaVuSansMono.ttf fonts-dejavu-extra:$(FONTS)/dejavu/DejaVuMathTeXGyre.ttf
# The GPU environment gets the same torch version as requirements.txt, from PyPI, without "+cpu".
TORCH_VERSION := $(shell sed -n 's/^torch==\([0-9.]*\).*/\1/p' requirements.txt)
# The test files that hold GPU tests (marker `gpu`, see pytest.ini): only these are collected on a
# GPU machine, whose offline environment lacks what the other tests import
GPU_TESTS    = $(shell grep -lE '^ *(@pytest\.mark\.gpu|pytestmark = .*pytest\.mark\.gpu)' tests/test_*.py)
# The GPU machine's Python: 3.12 on manylinux x86_64 (wheels for `make wheelhouse`).
GPU_PLATFORM := --python-version 3.12 --implementation cp --only-binary=:all: \
	$(foreach n,17 24 27 28 31 34 35,--platform manylinux_2_$(n)_x86_64) --platform manylinux2014_x86_64
# The system libraries that MXNet's libmxnet.so loads (it finds copies beside itself, rpath $ORIGIN)
MXNET_SYSTEM_LIBS = $(foreach lib,libgomp.so.1 libquadmath.so.0,$(shell /sbin/ldconfig -p | awk '$$1 == "$(lib)" && /x86-64/ {print $$NF; exit}'))
LOADS_MXNET_SYSTEM_LIBS := import ctypes; [ctypes.CDLL(name) for name in ('libgomp.so.1', 'libquadmath.so.0')]
# Each wheel folder is carried to an offline GPU machine on its own, in at most 60 MiB.
WHEEL_FOLDER_MIB := 60

# Only the goals that record or run GPU tests look for a GPU (`nvidia-smi -L`).
RECORDS   := $(or $(filter record gpu-record,$(MAKECMDGOALS)),$(if $(EXECUTE),$(filter html test,$(MAKECMDGOALS))))
GPU_TESTING := $(filter test-gpu gpu-test,$(MAKECMDGOALS))
ifneq ($(RECORDS)$(GPU_TESTING),)
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]' && echo yes)
ifeq ($(HAVE_GPU),)
ifneq ($(GPU_TESTING),)
$(error make $(GPU_TESTING): `nvidia-smi -L` lists no NVIDIA GPU here, and the GPU tests need one. `make test` runs the others)
endif
ifneq ($(RECORDS),)
ifeq ($(RECORD_ON_CPU),)
$(error Recording needs an NVIDIA GPU, and `nvidia-smi -L` lists none here. The book's recordings come from a GPU machine: build from them with `make html` (no EXECUTE). To record on this CPU anyway, as a check that you do not commit, add RECORD_ON_CPU=1)
endif
endif
endif
endif
# The Python that records: the GPU environment on a GPU machine, else the book's
RECORD_PYTHON ?= $(if $(HAVE_GPU),$(GPU_VENV)/bin/python,$(BOOK_PYTHON))
RECORD_SETUP  := $(if $(filter $(GPU_VENV)/bin/python,$(RECORD_PYTHON)),$(GPU_VENV)/.installed,$(if $(filter $(VENV)/bin/python,$(RECORD_PYTHON)),$(VENV_STAMP)))
RECORD_ARGS    = $(strip $(if $(EXAMPLES),--examples $(foreach e,$(EXAMPLES),'$(e)')) $(if $(SHARD),--shard $(SHARD)) $(if $(AS_RUN),--as-run))
# What the offline GPU machine uses: its own python3, the wheels installed into .gpu-site/, and the
# bytecode that gpu-install writes into .gpu-site/pycache/. That python3 writes no bytecode itself
# (PYTHONDONTWRITEBYTECODE=1), so without it each of the record step's kernels compiled torch's,
# MXNet's and Jupyter's Python sources again (import torch: 4.6 s there). Inductor's compile cache
# is another matter and stays empty.
GPU_SITE_PATH := PYTHONPYCACHEPREFIX=$(abspath $(GPU_SITE))/pycache PYTHONPATH=$(abspath $(GPU_SITE))$(if $(PYTHONPATH),:$(PYTHONPATH))
# What gpu-install imports to write that bytecode: for each wheel folder, from the examples folder
# that the import runs in (the MXNet helpers first let MXNet import under numpy 2)
BYTECODE_FOR_record := pytorch:import helpers, common.plots, common.roofline, common.hybridize, matplotlib.pyplot, torch._dynamo, torch._inductor.compile_fx, sphinx.cmd.build, myst_nb, jupytext, nbclient, ipykernel.kernelapp
BYTECODE_FOR_mxnet  := mxnet:import helpers, common.plots, common.hybridize, matplotlib.pyplot

.PHONY: help html pdf debian-tools mxnet312-env record check-recordings test test-gpu serve wheelhouse gpu-install gpu-record gpu-test clean

help:  ## list the targets
	@echo "Targets:"
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## (.*)/\1\t\2/' | awk -F'\t' '{printf "  %-17s %s\n", $$1, $$2}'
	@echo "Variables: LANGUAGES='$(strip $(LANGUAGES))' EXAMPLES='$(strip $(EXAMPLES))' SHARD='$(SHARD)' AS_RUN='$(AS_RUN)' EXECUTE='$(strip $(EXECUTE))' BOOK_PYTHON=$(strip $(BOOK_PYTHON))"

# The first set-up says what it installs and shows pip's progress; later builds skip it.
$(VENV_STAMP): requirements.txt
	@echo "Setting up $(VENV)/ for the book: pip installs requirements.txt (torch's CPU build, MXNet, Sphinx and what they need, about 1.7 GB), which takes a few minutes on a fast network. Later builds skip this step."
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --retries 1 -r requirements.txt
	touch $@

# The GPU environment: requirements.txt, but torch from PyPI's default Linux wheel (CUDA), never the
# "+cpu" build, and without requirements.txt's CPU index. pip reads no configuration for torch: an
# extra CPU index would win, since "2.13.0+cpu" matches torch==2.13.0 too.
$(GPU_VENV)/requirements.txt: requirements.txt
	mkdir -p $(GPU_VENV)
	grep -v -e '^torch==' -e '^--extra-index-url ' requirements.txt > $@

$(GPU_VENV)/.installed: $(GPU_VENV)/requirements.txt
	$(PYTHON) -m venv $(GPU_VENV)
	$(GPU_VENV)/bin/python -m pip install --quiet --upgrade pip
	env -u PIP_EXTRA_INDEX_URL -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null \
	  $(GPU_VENV)/bin/python -m pip install --quiet --index-url https://pypi.org/simple torch==$(TORCH_VERSION)
	$(GPU_VENV)/bin/python -m pip install --quiet -r $(GPU_VENV)/requirements.txt
	$(GPU_VENV)/bin/python -c "import sys, torch; sys.exit(None if torch.version.cuda and torch.cuda.is_available() else \
	  f'torch {torch.__version__} in $(GPU_VENV) cannot use the GPU (CUDA {torch.version.cuda}); check the NVIDIA driver')"
	touch $@

$(NUMPY2_VENV)/.installed: conf/numpy2-requirements.txt
	rm -rf $(NUMPY2_VENV)
	$(PYTHON) -m venv $(NUMPY2_VENV)
	$(NUMPY2_VENV)/bin/python -m pip install --quiet --no-deps -r conf/numpy2-requirements.txt
	touch $@

# The MXNet zips' requirements.txt as a reader installs it on Python 3.12 (numpy 1.26.4, setuptools),
# taken from a zip that the build made; installed again only when it changes, so that a second
# `make test` installs nothing. Without a working $(PYTHON312), the folder holds only why.
MXNET312_WANTS := $(BUILDDIR)/mxnet312-requirements.txt
mxnet312-env: pdf
	@mkdir -p $(MXNET312_VENV)
	@if ! $(PYTHON312) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; then \
	  echo "'$(PYTHON312)' does not run Python 3.12 here, so the MXNet zips are not tested on it (PYTHON312= names another)" \
	    | tee $(MXNET312_VENV)/skipped; \
	  exit 0; \
	fi; \
	$(BOOK_PYTHON) -c "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('requirements.txt').decode())" \
	  $(firstword $(wildcard $(BUILDDIR)/doctrees/en/example-downloads/mxnet/*.zip)) > $(MXNET312_WANTS) || exit 1; \
	if [ -f $(MXNET312_VENV)/.installed ] && cmp -s $(MXNET312_WANTS) $(MXNET312_VENV)/requirements.txt; then exit 0; fi; \
	echo "Setting up $(MXNET312_VENV)/ with $(PYTHON312) and the MXNet zips' requirements.txt (about 400 MB)"; \
	$(PYTHON312) -m venv --clear $(MXNET312_VENV) \
	&& $(MXNET312_VENV)/bin/python -m pip install --quiet -r $(MXNET312_WANTS) \
	&& cp $(MXNET312_WANTS) $(MXNET312_VENV)/requirements.txt && touch $(MXNET312_VENV)/.installed

html: $(SETUP) $(if $(EXECUTE),record)  ## build the English and Turkish books from the recorded outputs (EXECUTE=1: record first, on a GPU machine)
	@# A failed build forgets its doctrees: Sphinx would not repeat the warnings of pages it
	@# does not read again, and the next build would pass with the broken pages.
	@for lang in $(LANGUAGES); do \
	  echo "Building the '$$lang' book"; \
	  BOOK_LANGUAGE=$$lang $(PDF_FOR_HTML) $(BOOK_PYTHON) -m sphinx -b html -c conf $(SPHINXOPTS) \
	    -d $(BUILDDIR)/doctrees/$$lang docs/$$lang $(HTMLDIR)/$$lang \
	  || { rm -rf $(BUILDDIR)/doctrees/$$lang; exit 1; }; \
	done
	cp conf/root-index.html $(HTMLDIR)/index.html
	@echo "The HTML book is in $(HTMLDIR)/: open $(HTMLDIR)/index.html"

pdf: debian-tools $(SETUP)  ## build each book as one PDF into _build/pdf/, then the HTML books, which copy it beside them and link it from the download menu
	@# The HTML books first: the PDF's page shares their doctrees, and an HTML page whose catalog or
	@# recording changed would stay stale after the PDF's build had read it again (Sphinx writes an
	@# HTML page only when it reads the page again or its source is newer than the page).
	@$(MAKE) --no-print-directory html
	@for lang in $(LANGUAGES); do \
	  echo "Building the '$$lang' book's page for the PDF"; \
	  BOOK_LANGUAGE=$$lang $(BOOK_PYTHON) -m sphinx -b pdfhtml -q -c conf $(SPHINXOPTS) \
	    -d $(BUILDDIR)/doctrees/$$lang docs/$$lang $(PDFHTMLDIR)/$$lang || exit 1; \
	done
	$(BOOK_PYTHON) conf/print_pdf.py --out $(PDFDIR) $(foreach lang,$(LANGUAGES),$(PDFHTMLDIR)/$(lang)/index.html)
	@$(MAKE) --no-print-directory html

debian-tools:  ## install, when missing, Debian's chromium and the fonts of the PDF (make pdf and make test need them)
	@missing=$$(for need in $(DEBIAN_NEEDS); do test -e $${need#*:} || echo $${need%%:*}; done | xargs); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian's $$missing"; \
	  { apt-get update -qq && apt-get install -y -qq $$missing; } >/dev/null 2>&1 \
	  || { echo "The PDF and the browser tests need Debian's $$missing: run 'apt-get install $$missing' as root" >&2; exit 1; }; \
	fi

record: $(RECORD_SETUP)  ## run every example (EXAMPLES=, SHARD=K/N narrow) through myst-nb on this GPU machine and refresh their recordings (AS_RUN=1: keep them, add the run to their other runs)
	$(RECORD_PYTHON) conf/record.py $(RECORD_ARGS)
	@echo "The recordings are in examples/recordings/: review and commit them"

check-recordings:  ## fail when an example (EXAMPLES=, SHARD=K/N narrow) changed after its recording
	python3 conf/record.py --check $(RECORD_ARGS)

test: pdf $(NUMPY2_VENV)/.installed mxnet312-env  ## build the books and their PDFs, then run the test suite (browser, PDF, numpy 2 and Python 3.12 tests included, GPU tests deselected)
	MXNET_NUMPY2_PYTHON=$(abspath $(NUMPY2_VENV))/bin/python MXNET_PY312_VENV=$(abspath $(MXNET312_VENV)) $(BOOK_PYTHON) -m pytest tests -m 'not gpu' -n $(TEST_WORKERS) --dist loadfile $(PYTESTOPTS)

test-gpu: $(GPU_VENV)/.installed  ## on a GPU machine: run the GPU tests (marker gpu)
	$(GPU_VENV)/bin/python -m pytest -m gpu $(or $(GPU_TESTS),$(error no test file has tests marked gpu)) $(PYTESTOPTS)

# The previewed book lies at the site's root and the other one, built once, in its folder beside it,
# where the language link finds it (conf.py: BOOK_AT_SITE_ROOT). `exec setpriv --pdeathsig TERM`
# makes make itself the server's parent and has the kernel stop the server when make ends, however
# it ends (Ctrl+C reaches both anyway).
serve: $(SETUP)  ## preview the English book (SERVE_LANG=tr: Turkish) on http://127.0.0.1:8000 (SERVE_PORT=), rebuilt on each change; its language link works
	@test -n "$(filter $(SERVE_LANG),$(SERVE_LANGUAGES))" || { echo "SERVE_LANG must be one of $(SERVE_LANGUAGES), not '$(SERVE_LANG)'"; exit 2; }
	@# A first preview starts from the doctrees of make html, when it has any: it then only writes pages.
	@for lang in $(SERVE_LANGUAGES); do \
	  if [ ! -d $(BUILDDIR)/doctrees/serve-$$lang ] && [ -d $(BUILDDIR)/doctrees/$$lang ]; then \
	    cp -r $(BUILDDIR)/doctrees/$$lang $(BUILDDIR)/doctrees/serve-$$lang; \
	  fi; \
	done
	@echo "Building the '$(SERVE_OTHER)' book once, for the language link"
	BOOK_LANGUAGE=$(SERVE_OTHER) BOOK_AT_SITE_ROOT=$(SERVE_LANG) $(PDF_FOR_HTML) $(BOOK_PYTHON) -m sphinx -b html -c conf -q \
	  -d $(BUILDDIR)/doctrees/serve-$(SERVE_OTHER) docs/$(SERVE_OTHER) $(SERVE_DIR)/$(SERVE_OTHER)
	BOOK_LANGUAGE=$(SERVE_LANG) BOOK_AT_SITE_ROOT=$(SERVE_LANG) $(PDF_FOR_HTML) exec setpriv --pdeathsig TERM \
	  $(BOOK_PYTHON) -m sphinx_autobuild --port $(SERVE_PORT) -c conf --watch conf --watch examples \
	  -d $(BUILDDIR)/doctrees/serve-$(SERVE_LANG) docs/$(SERVE_LANG) $(SERVE_DIR)

wheelhouse:  ## download, for an offline GPU machine (Python 3.12), the wheels that recording and the GPU tests need into .wheelhouse/
	PIP_CONFIG_FILE=/dev/null $(PYTHON) -m pip download --quiet $(GPU_PLATFORM) -d $(WHEELHOUSE)/record -r conf/gpu-requirements.txt
	PIP_CONFIG_FILE=/dev/null $(PYTHON) -m pip download --quiet $(GPU_PLATFORM) --no-deps -d $(WHEELHOUSE)/mxnet mxnet==1.9.1
	@# MXNet's libraries need the system's libgomp and libquadmath; gpu-install uses these copies
	@# only where the GPU machine lacks them.
	mkdir -p $(WHEELHOUSE)/mxnet/lib
	cp -L $(MXNET_SYSTEM_LIBS) $(WHEELHOUSE)/mxnet/lib/
	@for part in $(WHEELHOUSE)/*/; do \
	  size=$$(du -sm $$part | cut -f1); echo "$$part: $$size MiB"; \
	  test $$size -lt $(WHEEL_FOLDER_MIB) || { echo "$$part is over $(WHEEL_FOLDER_MIB) MiB"; exit 1; }; \
	done
	@echo "The wheels are in $(WHEELHOUSE)/: carry each folder to the GPU machine, run 'make gpu-install' after each, then 'make gpu-record'"

gpu-install:  ## on an offline GPU machine: install the wheel folders present in .wheelhouse/ into .gpu-site/ for its python3
	@test -n "$(wildcard $(WHEELHOUSE)/*/*.whl)" || { echo "No wheels in $(WHEELHOUSE)/: run 'make wheelhouse' on a machine with network and copy them here"; exit 1; }
	@mkdir -p $(GPU_SITE)
	@for part in $(WHEELHOUSE)/*/; do \
	  name=$$(basename $$part); \
	  if ls $$part | cmp -s - $(GPU_SITE)/.installed-$$name; then echo "$$part: installed already"; continue; fi; \
	  echo "Installing $$part into $(GPU_SITE)/"; \
	  python3 -m pip install --quiet --no-index --no-deps --no-compile --upgrade --target $(GPU_SITE) $$part*.whl || exit 1; \
	  ls $$part > $(GPU_SITE)/.installed-$$name; \
	done
	@if [ -d $(WHEELHOUSE)/mxnet/lib ] && ! python3 -c "$(LOADS_MXNET_SYSTEM_LIBS)" 2>/dev/null; then \
	  echo "This machine lacks libgomp or libquadmath, which MXNet needs: using the copies in $(WHEELHOUSE)/mxnet/lib/"; \
	  cp $(WHEELHOUSE)/mxnet/lib/* $(GPU_SITE)/mxnet/; \
	fi
	@for part in $(WHEELHOUSE)/*/; do \
	  name=$$(basename $$part); \
	  test -f $(GPU_SITE)/.bytecode-$$name && cmp -s $(GPU_SITE)/.installed-$$name $(GPU_SITE)/.bytecode-$$name && continue; \
	  echo "Writing the bytecode of what the examples import with $$part into $(GPU_SITE)/pycache/"; \
	  case $$name in \
	    record) what="$(BYTECODE_FOR_record)";; \
	    mxnet) what="$(BYTECODE_FOR_mxnet)";; \
	    *) echo "no imports are listed for $$part (BYTECODE_FOR_$$name)"; exit 1;; \
	  esac; \
	  (cd examples/$${what%%:*} && env -u PYTHONDONTWRITEBYTECODE $(GPU_SITE_PATH) python3 -c "$${what#*:}") || exit 1; \
	  cp $(GPU_SITE)/.installed-$$name $(GPU_SITE)/.bytecode-$$name; \
	done

gpu-record:  ## on an offline GPU machine: record every example with its python3 and .gpu-site/ (after gpu-install of record and mxnet)
	@for name in record $(if $(EXAMPLES),,mxnet); do \
	  test -f $(GPU_SITE)/.installed-$$name || { echo "$(GPU_SITE)/ lacks $(WHEELHOUSE)/$$name: copy it here and run 'make gpu-install' first"; exit 1; }; \
	done
	$(GPU_SITE_PATH) $(MAKE) record RECORD_PYTHON=python3

gpu-test:  ## on an offline GPU machine: run the GPU tests with its python3 and .gpu-site/
	@test -f $(GPU_SITE)/.installed-record || { echo "$(GPU_SITE)/ lacks $(WHEELHOUSE)/record: copy it here and run 'make gpu-install' first"; exit 1; }
	$(GPU_SITE_PATH) python3 -m pytest -m gpu $(or $(GPU_TESTS),$(error no test file has tests marked gpu)) $(PYTESTOPTS)

clean:  ## remove the built books (keeps the environments and the recordings)
	rm -rf $(BUILDDIR)
	@echo "Removed $(BUILDDIR)/"
