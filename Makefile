# SPDX-License-Identifier: MIT
# bftools - Bloom-filter tools for huge line streams.
#
#   make            build the programs into cmd/
#   make demo       build, then run a small pipeline end to end
#   make check      C unit tests + every bats file; ends "tests: N passed, N failed"
#   make asan       the whole suite again under AddressSanitizer + UBSan
#   make lint       man pages through mandoc -Tlint and groff -ww, and the
#                   layers of lib/ (tests/layers.sh: no include upward, no circle)
#   make bench      speed and memory against sort, gawk, grep -F (tests/bench/);
#                   Python's contains_many against pure Python and bfgrep
#   make bench-scaleout  the Dask de-duplication pipeline on one machine
#                   against one bfuniq (the dedup job of tests/bench/run.sh)
#   make bench-threads  lines per second for -j 1, 2, 4, 8, 16 (up to the
#                   CPUs) and the ratio to -j 1 (tests/bench/threads.sh)
#   make fuzz       libFuzzer harnesses for FUZZ_SECONDS each (default 60)
#   make fuzz-long  every harness for FUZZ_SECONDS (default 3600), then the
#                   committed corpora minimised with what was found
#   make valgrind   the whole suite with every program under valgrind memcheck
#   make coverage   the whole suite with gcov counters (build/coverage/), then
#                   lines and branches covered in lib/ and cmd/ (gcovr)
#   make analyze    clang's analyser (scan-build) and cppcheck over lib/ and
#                   cmd/, failing on any finding
#   make accuracy   false-positive rates at capacity, every layout, 1e-2..1e-6,
#                   against target and model, and bftop's bounds on Zipf
#                   streams of 1e8 lines (long: about an hour)
#   make tsan       the threaded paths under ThreadSanitizer (clang)
#   make install    programs, man pages, completions, and the library for C
#                   users (libbftools.so.1, libbftools.a, headers, bftools.pc);
#                   PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR, MANDIR,
#                   PKGCONFIGDIR and the completion directories honoured;
#                   make uninstall removes exactly that
#   make deb        Debian packages bftools, libbftools1 and libbftools-dev
#                   (debian/, its build runs make check) in build/deb/, then
#                   lintian on them, failing on any error
#   make check-deb  make deb, then the packages unpacked into a scratch root
#                   and used from there (tests/deb.sh)
#   make python     the Python package (python/) against this library in
#                   build/python/ (PYTHONPATH=build/python); make check runs
#                   its pytest suite; make install-python installs it
#   make check-scaleout  the README's scale-out recipe on Dask distributed:
#                   a scheduler and workers on 127.0.0.1 (tests/scaleout_dask.bats)
#
# The standard and the warnings live in their own variable so that a
# packager's CFLAGS= replaces optimisation flags but never drops them.

VERSION   = 1.0.0
SOVERSION = 1
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR  ?=

CFLAGS   ?= -O2 -g
STDFLAGS  = -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
DEFS      = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DBFTOOLS_VERSION='"$(VERSION)"'
# -fPIC: the same objects make the static and the shared library.
# -pthread: lib/io/pipeline.c reads input on a second thread.
# lib/ is in layers, a folder each (ARCHITECTURE.md); headers are included
# by their bare names, as they are installed (one bftools/ directory).
LIB_LAYERS = base hash io sets files
LIB_INCLUDES = -Ilib $(LIB_LAYERS:%=-Ilib/%)
ALLFLAGS  = $(STDFLAGS) $(DEFS) $(LIB_INCLUDES) -fPIC -pthread $(CPPFLAGS) $(CFLAGS)
# the decoders of compressed inputs: lib/io/instream_*.c, one library each;
# libdeflate inflates a filter file's pieces whole (lib/io/gzindex.c)
LDLIBS    = -lz -ldeflate -lzstd -llzma -lbz2 -llz4 -lm -pthread

# O is the build directory: "." for the normal build, build/asan for make asan.
O        ?= .
PROGRAMS  = bfbuild bfgrep bfuniq bfcount bfmerge bfinfo bftop bfsplit
LIB_SRC   = $(wildcard $(LIB_LAYERS:%=lib/%/*.c))
LIB_OBJ   = $(LIB_SRC:%.c=$(O)/%.o)
CLI_SRC   = $(wildcard cmd/cli/*.c)
CLI_OBJ   = $(CLI_SRC:%.c=$(O)/%.o)
UNIT_SRC  = $(wildcard tests/unit/*.c)
UNIT_OBJ  = $(UNIT_SRC:%.c=$(O)/%.o)
BINS      = $(PROGRAMS:%=$(O)/cmd/%)
SHLIB     = $(O)/lib/libbftools.so.$(SOVERSION)
# The library's public headers, installed under INCLUDEDIR/bftools/.
PUBLIC_HEADERS = lib/bftools.h lib/base/line.h lib/hash/siphash.h lib/hash/partition.h lib/sets/filter_types.h \
	lib/sets/filter.h lib/sets/layout.h lib/sets/layout_dcso.h lib/sets/sizing.h \
	lib/sets/cascade.h lib/files/format.h lib/sets/merge.h lib/files/merge_stream.h \
	lib/io/lines.h lib/io/keys.h lib/io/fieldlist.h lib/io/json.h lib/io/json_out.h lib/io/writer.h lib/sets/hll.h lib/base/numparse.h \
	lib/base/atomic.h lib/files/keyfile.h lib/files/dcso.h lib/io/pipeline.h lib/base/lock.h \
	lib/sets/window.h lib/sets/sketch.h lib/files/sketch_file.h \
	lib/sets/topk.h lib/sets/topk_window.h lib/files/topk_file.h
UNIT_BIN  = $(O)/tests/unit/unit
ACCURACY_BIN = $(O)/tests/accuracy/accuracy

# The Python package: its extension module (python/src/) linked with this
# build's static library, beside copies of python/bftools/*.py, in PYDIR.
# Debian's python3, which python3-dev, python3-pytest and python3-numpy serve.
PYTHON   ?= /usr/bin/python3
PYDIR     = $(if $(filter .,$(O)),build/python,$(O)/python)
PY_INCLUDE = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_SUFFIX = $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_SITEDIR ?= $(PREFIX)/lib/python3/dist-packages
PY_OBJ    = $(patsubst %.c,$(O)/%.o,$(wildcard python/src/*.c))
PY_FILES  = $(patsubst python/%,$(PYDIR)/%,$(wildcard python/bftools/*.py))
PY_EXT    = $(PYDIR)/bftools/_bftools$(PY_SUFFIX)

ASAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_FLAGS = -O1 -g -fsanitize=thread

.SECONDARY:

.PHONY: all check unit asan lint demo install uninstall clean deps-build deps-check deps-lint FORCE \
	bench bench-scaleout bench-threads fuzz valgrind accuracy tsan deps-tsan deb check-deb deps-deb \
	check-scaleout deps-scaleout coverage deps-coverage analyze deps-analyze \
	python python-module deps-python install-python

all: deps-build $(BINS) $(SHLIB)

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALLFLAGS) -MMD -MP -c $< -o $@

$(O)/lib/libbftools.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(SHLIB): $(LIB_OBJ)
	$(CC) $(ALLFLAGS) $(LDFLAGS) -shared -Wl,-soname,libbftools.so.$(SOVERSION) \
		-o $@ $(LIB_OBJ) $(LDLIBS)

$(O)/cmd/%: $(O)/cmd/%.o $(CLI_OBJ) $(O)/lib/libbftools.a
	$(CC) $(ALLFLAGS) $(LDFLAGS) -o $@ $< $(CLI_OBJ) $(O)/lib/libbftools.a $(LDLIBS)

$(UNIT_BIN): $(UNIT_OBJ) $(O)/lib/libbftools.a
	$(CC) $(ALLFLAGS) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(O)/lib/libbftools.a $(LDLIBS)

$(ACCURACY_BIN): $(O)/tests/accuracy/accuracy.o $(O)/lib/libbftools.a
	$(CC) $(ALLFLAGS) $(LDFLAGS) -o $@ $< $(O)/lib/libbftools.a $(LDLIBS)

# Python's headers as system headers: our warnings are for our code.
$(O)/python/src/%.o: python/src/%.c
	@mkdir -p $(@D)
	$(CC) $(ALLFLAGS) -isystem $(PY_INCLUDE) -MMD -MP -c $< -o $@

# The library's symbols stay inside the module (--exclude-libs).
$(PY_EXT): $(PY_OBJ) $(O)/lib/libbftools.a
	@mkdir -p $(@D)
	$(CC) $(ALLFLAGS) $(LDFLAGS) -shared -Wl,--exclude-libs,ALL -o $@ $(PY_OBJ) \
		$(O)/lib/libbftools.a $(LDLIBS)

$(PYDIR)/bftools/%.py: python/bftools/%.py
	@mkdir -p $(@D)
	cp $< $@

# Again after deps-python: PY_INCLUDE and PY_SUFFIX need the python3 it
# may have just installed. The library first, in this make: under -j the
# sub-make would otherwise rebuild the archive while `all` rewrites it,
# and link the module against a half-written one.
python: deps-python $(O)/lib/libbftools.a
	@$(MAKE) --no-print-directory python-module

python-module: $(PY_EXT) $(PY_FILES)
	@:

deps-python:
	@sh tests/deps.sh python

install-python: python
	mkdir -p $(DESTDIR)$(PY_SITEDIR)/bftools
	install -m 644 python/bftools/*.py $(DESTDIR)$(PY_SITEDIR)/bftools/
	install -m 644 $(PY_EXT) $(DESTDIR)$(PY_SITEDIR)/bftools/

-include $(PY_OBJ:.o=.d)
-include $(LIB_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(BINS:=.d) $(CLI_OBJ:.o=.d) $(ACCURACY_BIN).d

# Prerequisites: each entry point installs what it lacks (tests/deps.sh).
deps-build:
	@sh tests/deps.sh build
deps-check:
	@sh tests/deps.sh check
deps-lint:
	@sh tests/deps.sh lint
deps-deb:
	@sh tests/deps.sh deb

unit: $(UNIT_BIN)

# The fuzz corpora are replayed with the same compiler and flags (no libFuzzer needed).
# The pytest suite runs on this build's module; under ThreadSanitizer it is
# left out (an uninstrumented python3 cannot load a TSan module), and under
# AddressSanitizer python3 gets the sanitizers' runtimes first (LD_PRELOAD).
check: deps-check all $(UNIT_BIN) $(ACCURACY_BIN) python
	@CC="$(CC)" FUZZ_CFLAGS="$(CFLAGS)" BFTOOLS_PYTHON="$(PYTHON)" BFTOOLS_PYDIR="$(CURDIR)/$(PYDIR)" \
		BFTOOLS_PYTHON_PRELOAD="$(if $(findstring -fsanitize=address,$(CFLAGS)),$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so))" \
		BFTOOLS_PYTHON_SKIP="$(if $(findstring -fsanitize=thread,$(CFLAGS)),ThreadSanitizer)" \
		sh tests/run.sh $(O)

bench: all python
	@sh tests/bench/run.sh
	@PYTHONPATH=$(PYDIR) BFTOOLS_BIN=$(CURDIR)/$(O)/cmd $(PYTHON) python/bench/bench.py

# The Dask pipeline of de-duplication beyond one machine against one bfuniq
# (the dedup job of tests/bench/run.sh; python3-distributed from deps-scaleout).
bench-scaleout: deps-scaleout all
	@BENCH_JOBS=dedup sh tests/bench/run.sh

bench-threads: all
	@sh tests/bench/threads.sh

# build/lent/: static programs, gen and cputime for a lent many-core machine
# that has no compiler (tests/bench/threads-lent.sh runs there), and in
# build/lent/stopwatch/ bfuniq and bfbuild timing their steps (stopwatch.h).
LENT_PROGRAMS = bfbuild bfgrep bfuniq bfcount
# and built with lib/base/stopwatch.h's laps, which say where the time went
LENT_STOPWATCH = bfbuild bfuniq
.PHONY: bench-threads-static
bench-threads-static: deps-build
	$(MAKE) O=build/static LDFLAGS=-static $(LENT_PROGRAMS:%=build/static/cmd/%)
	$(MAKE) O=build/static-stopwatch LDFLAGS=-static CFLAGS="$(CFLAGS) -DBFTOOLS_STOPWATCH" \
		$(LENT_STOPWATCH:%=build/static-stopwatch/cmd/%)
	@mkdir -p build/lent/stopwatch
	cp $(LENT_PROGRAMS:%=build/static/cmd/%) build/lent/
	cp $(LENT_STOPWATCH:%=build/static-stopwatch/cmd/%) build/lent/stopwatch/
	$(CC) -O2 -std=c11 $(DEFS) -static -o build/lent/gen tests/bench/gen.c -lm
	$(CC) -O2 -std=c11 $(DEFS) -static -o build/lent/cputime tests/bench/cputime.c

fuzz: deps-check
	@sh tests/fuzz/run.sh

# Every harness for FUZZ_SECONDS (default an hour), two at a time at low
# priority; then the committed corpora are minimised (-merge=1) with what
# was found, ready to commit.
FUZZ_SECONDS ?= 3600
.PHONY: fuzz-long
fuzz-long: deps-check
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=2 FUZZ_NICE=10 FUZZ_MERGE=1 sh tests/fuzz/run.sh

# Every program run by the bats files goes through valgrind (tests/valgrind/);
# the unit tests run under it directly.
valgrind: all $(UNIT_BIN) $(ACCURACY_BIN)
	@sh tests/valgrind.sh $(O)

# The suite with gcov counters, built in build/coverage so that no
# instrumented object is left for a plain build to reuse; counts of an
# earlier run are removed first. -O0, or lines of inlined functions are
# counted against the wrong caller; atomic counter updates, because
# counts that two threads lost made gcov derive negative branch counts,
# which gcovr refuses. For the same reason no program exits while a
# thread of its own still runs: exit(3) writes the counters, and a fatal
# error halts the pipeline's threads first (pipeline_halt). The 1e8-line
# tests skip this build (tests/faults.bats), too slow for their timeouts.
COVERAGE_FLAGS = -O0 -g --coverage -fprofile-update=atomic
deps-coverage:
	@sh tests/deps.sh coverage
coverage: deps-coverage
	@# objects do not depend on the flags: new flags, a new build
	@if [ "$$(cat build/coverage/flags 2>/dev/null)" != "$(COVERAGE_FLAGS)" ]; then \
		rm -rf build/coverage && mkdir -p build/coverage && \
		echo "$(COVERAGE_FLAGS)" >build/coverage/flags; fi
	@find build/coverage -name '*.gcda' -exec rm -f {} + 2>/dev/null || true
	@st=0; $(MAKE) --no-print-directory O=build/coverage CFLAGS="$(COVERAGE_FLAGS)" \
		LDFLAGS="$(COVERAGE_FLAGS)" check || st=$$?; \
	sh tests/coverage.sh build/coverage || st=1; exit $$st

# Static analysis (tests/analyze.sh): a full build under scan-build in
# build/analyze, then cppcheck.
deps-analyze:
	@sh tests/deps.sh analyze
analyze: deps-analyze
	@MAKE="$(MAKE)" sh tests/analyze.sh build/analyze

asan:
	@$(MAKE) --no-print-directory O=build/asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)" check

# The long statistical run (tests/accuracy/run.sh; ACCURACY_* settings there).
accuracy: all $(ACCURACY_BIN)
	@sh tests/accuracy/run.sh $(O)

# The whole suite built with clang's ThreadSanitizer: every threaded path
# (the reader and hashing thread, filters under and over the 64 MiB at
# which the hashing thread also loads blocks ahead); a report fails the
# program (exitcode), hence the test that ran it. Thread leaks are not
# reported (a fatal error halts and joins the pipeline's threads,
# pipeline_halt, but nothing else needs them joined); races are all reported.
# Tests of memory limits and RSS skip themselves (tests/helpers.bash).
deps-tsan:
	@sh tests/deps.sh tsan
tsan: deps-tsan
	@TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_thread_leaks=0 $(TSAN_OPTIONS)" $(MAKE) --no-print-directory \
		O=build/tsan CC=clang CFLAGS="$(TSAN_FLAGS)" LDFLAGS="$(TSAN_FLAGS)" check

lint: deps-lint
	@sh tests/lint.sh
	@sh tests/layers.sh

demo: all
	@sh tests/demo.sh cmd

# dpkg-buildpackage writes beside the tree it builds, so tests/mkdeb.sh
# builds a copy in build/deb/ and the packages land there too. Too slow for
# make check, whose whole suite the package build runs.
deb: deps-deb
	@sh tests/mkdeb.sh

check-deb: deb
	@sh tests/deps.sh check-deb
	@sh tests/deb.sh

# Not in make check: it starts a Dask scheduler and workers (network
# servers, on 127.0.0.1) and needs python3-distributed, which nothing else
# does; tests/scaleout_dask.bats skips itself unless run from here.
deps-scaleout:
	@sh tests/deps.sh scaleout
check-scaleout: deps-scaleout all
	@BFTOOLS_CHECK_SCALEOUT=1 BFTOOLS_BIN="$(CURDIR)/$(O)/cmd" LC_ALL=C bats --tap tests/scaleout_dask.bats

# regenerated every time: PREFIX or LIBDIR may differ from the last install
$(O)/bftools.pc: FORCE
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: bftools' 'Description: Bloom filters for huge line streams' \
		'Version: $(VERSION)' 'Requires.private: zlib libdeflate libzstd liblzma liblz4' \
		'Libs: -L$${libdir} -lbftools' 'Libs.private: -lbz2 -lm -pthread' \
		'Cflags: -I$${includedir}/bftools' >$@

install: all $(O)/bftools.pc
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/bftools \
		$(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	for p in $(PROGRAMS); do \
		install -m 755 cmd/$$p $(DESTDIR)$(BINDIR)/$$p && \
		install -m 644 man/$$p.1 $(DESTDIR)$(MANDIR)/man1/$$p.1 && \
		install -m 644 completions/$$p.bash $(DESTDIR)$(BASHCOMPDIR)/$$p && \
		install -m 644 completions/_$$p $(DESTDIR)$(ZSHCOMPDIR)/_$$p && \
		install -m 644 completions/$$p.fish $(DESTDIR)$(FISHCOMPDIR)/$$p.fish || exit 1; \
	done
	install -m 644 man/bf.5 $(DESTDIR)$(MANDIR)/man5/bf.5
	install -m 644 man/bftools.7 $(DESTDIR)$(MANDIR)/man7/bftools.7
	install -m 644 lib/libbftools.a $(DESTDIR)$(LIBDIR)/libbftools.a
	install -m 755 lib/libbftools.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libbftools.so.$(SOVERSION)
	ln -sf libbftools.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libbftools.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/bftools/
	install -m 644 $(O)/bftools.pc $(DESTDIR)$(PKGCONFIGDIR)/bftools.pc
	@# a real install: let the dynamic linker find the new library
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	for p in $(PROGRAMS); do \
		rm -f $(DESTDIR)$(BINDIR)/$$p $(DESTDIR)$(MANDIR)/man1/$$p.1 \
		      $(DESTDIR)$(BASHCOMPDIR)/$$p $(DESTDIR)$(ZSHCOMPDIR)/_$$p \
		      $(DESTDIR)$(FISHCOMPDIR)/$$p.fish; \
	done
	rm -f $(DESTDIR)$(MANDIR)/man5/bf.5 $(DESTDIR)$(MANDIR)/man7/bftools.7
	rm -f $(DESTDIR)$(LIBDIR)/libbftools.a $(DESTDIR)$(LIBDIR)/libbftools.so \
	      $(DESTDIR)$(LIBDIR)/libbftools.so.$(SOVERSION) $(DESTDIR)$(PKGCONFIGDIR)/bftools.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/bftools

clean:
	rm -rf build demo-out
	rm -f lib/*/*.o lib/*/*.d lib/libbftools.a lib/libbftools.so.* bftools.pc cmd/*.o cmd/*.d cmd/cli/*.o cmd/cli/*.d tests/unit/*.o tests/unit/*.d $(UNIT_BIN)
	rm -f tests/accuracy/*.o tests/accuracy/*.d $(ACCURACY_BIN)
	rm -f python/src/*.o python/src/*.d
	rm -f $(PROGRAMS:%=cmd/%)

FORCE:
