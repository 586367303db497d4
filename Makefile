# SPDX-License-Identifier: MIT
# rdmcp - reliable multicast file copy (RDMC binomial pipeline)
#
#   make            build ./rdmcp
#   make check      build and run every test (unit, integration, cluster,
#                   RDMA in a Soft-RoCE VM, docs), the suites at once
#   make check-all  make check, then the long soaks (tests/soak): CI
#   make check-valgrind  integration tests with the daemons under valgrind
#   make check-slurm  a real Slurm (slurmctld, slurmd, munge) on network
#                   namespaces (root): the stage-in example in sbatch jobs
#                   (tests/slurm, scripts/slurm-cluster.sh); CI runs it
#   make demo       8 daemons on 127.0.0.2-9, push a file to 1 host and to
#                   8, side by side (scripts/demo.sh; RDMCP_DEMO_ADDRS,
#                   RDMCP_DEMO_PORT, RDMCP_DEMO_MIB)
#
# On a fresh Debian 12, 'make demo' and 'make check' are the whole set-up:
# they first check what building (and testing) needs, and install what is
# missing with scripts/install-deps.sh when run as root, or say to run it
# with sudo (scripts/deps.sh; DEPS=no skips the check).
#   make bench      benchmarks on an emulated cluster (root, netns + tc):
#                   rdmcp against one plain TCP copy and a pipelined TCP
#                   chain, ratios, retransmissions, upload, a TSV and a
#                   plot (bench/cluster.sh; BENCH_SCENARIOS, BENCH_RUNS...)
#   make bench-loop per-byte cost on loopback, no root: rdmcp 1 -> 1 against
#                   dd, fan-out to 4, 8, 16 daemons (bench/loop.sh)
#   make bench-scale 1,024 daemons on loopback, no root: wall time split
#                   into bootstrap, first and last replica, and every host's
#                   report checked against its disk; SCALE_HOSTS, SCALE_SIZE,
#                   SCALE_KILL, SCALE_STOP, SCALE_BUSY... (bench/scale.sh)
#   make bench-slow some hosts slower than the rest (root, netns + tc): the
#                   healthy hosts' time against a uniform cluster's, the
#                   slow ones' against their own link's, for rdmcp's
#                   default and chain and a TCP chain (bench/slow.sh;
#                   BENCH_SLOW_SCENARIOS, BENCH_RUNS)
#   make bench-senders several senders at once to overlapping groups (root,
#                   netns + tc): spread of their times, the aggregate against
#                   the busiest links' limit, retransmissions; default, chain
#                   and one push after the other (bench/senders.sh;
#                   BENCH_SENDERS_SCENARIOS, BENCH_RUNS)
#   make bench-delta hosts that hold some of the file (root, netns + tc): a
#                   delta of 1 % and of a grown file, a resumed push, each
#                   against a full push: time and bytes sent
#                   (bench/delta.sh; BENCH_DELTA_SCENARIOS, BENCH_RUNS,
#                   BENCH_DELTA_FS=xfs: the hosts on xfs with reflinks)
#   make bench-resume a member killed mid-push, its retry with and without
#                   kept copies: wall time and bytes sent (no root;
#                   bench/resume.sh; BENCH_RUNS)
#   make bench-delta-host a delta of 1 % on one loopback host, against the
#                   time to digest the copy; BENCH_B=BUILD times another
#                   build beside it (no root; bench/delta_host.sh)
#   make bench-faults members killed and frozen at random moments of a
#                   push (root, netns + tc): wall time and bytes sent
#                   against the undisturbed push, every host's report
#                   checked against its disk (bench/faults.sh;
#                   BENCH_FAULTS_SCENARIOS, BENCH_RUNS, BENCH_FAULT_RUNS...)
#   make bench-slurm rdmcp beside sbcast and srun --bcast in jobs of a real
#                   Slurm (root, netns + tc, Debian's slurmctld and slurmd):
#                   16 and 64 nodes, ratios to one plain copy, every copy
#                   checked (bench/slurm.sh; BENCH_SLURM_SCENARIOS,
#                   BENCH_SBCAST_FANOUTS, BENCH_RUNS...)
#   make install    PREFIX=/usr/local DESTDIR= (make uninstall: the same)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
VERSION := 0.1.0

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS := libuv zlib libibverbs librdmacm nettle libxxhash
# rdma-core is not linked: src/transport/verbs/lib.c loads it when RDMA
# is first used
LIB_PKGS := libuv zlib nettle libxxhash
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Wwrite-strings \
	-Wno-unused-parameter
# pkg-config runs when a recipe first needs its answer, after the deps
# check below has installed what was missing (once, then kept).
pkgconf = $(shell $(PKG_CONFIG) $(1) 2>/dev/null)
PKG_CFLAGS = $(eval PKG_CFLAGS := $(call pkgconf,--cflags $(PKGS)))$(PKG_CFLAGS)
LIBS = $(eval LIBS := $(call pkgconf,--libs $(LIB_PKGS)))$(LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(call pkgconf,--cflags check))$(CHECK_CFLAGS)
CHECK_LIBS = $(eval CHECK_LIBS := $(call pkgconf,--libs check))$(CHECK_LIBS)
# -MMD -MP: each object depends on the headers it really includes
# (build/**/*.d), no more.
ALL_CFLAGS = -MMD -MP -std=gnu11 -D_GNU_SOURCE -DRDMCP_VERSION='"$(VERSION)"' \
	$(WARNINGS) $(PKG_CFLAGS) $(CFLAGS)

B ?= build
BIN ?= rdmcp
SRCS := $(shell find src -name '*.c' | sort)
INCLUDES := -Isrc
OBJS := $(SRCS:src/%.c=$(B)/src/%.o)
CMD_OBJS := $(patsubst cmd/%.c,$(B)/cmd/%.o,$(wildcard cmd/*.c))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(B)/tests/%)

.PHONY: all check check-all check-soak check-unit check-integration check-cluster check-slurm check-docs \
	check-layers check-asan check-valgrind check-rdma demo bench bench-loop \
	bench-scale bench-tree bench-slow bench-senders bench-racks bench-rdma bench-delta bench-resume bench-faults \
	bench-slurm fuzz clean install uninstall deps-build deps-test

all: $(BIN)

# What building (deps-build) and testing (deps-test) need, installed when
# missing (as root; otherwise scripts/deps.sh says to run
# 'sudo scripts/install-deps.sh').  Every compilation waits for it.
DEPS ?= yes
deps-build:
ifneq ($(DEPS),no)
	@PKG_CONFIG='$(PKG_CONFIG)' CC='$(CC)' scripts/deps.sh build
endif

deps-test: deps-build
ifneq ($(DEPS),no)
	@PKG_CONFIG='$(PKG_CONFIG)' CC='$(CC)' scripts/deps.sh test
endif

$(B)/src/%.o: src/%.c Makefile | deps-build
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(INCLUDES) -c -o $@ $<

$(B)/librdmcp.a: $(OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/cmd/%.o: cmd/%.c Makefile | deps-build
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(INCLUDES) -c -o $@ $<

# Symbols bound at start (and read-only after): a daemon's first job does
# not stop to resolve them, 1,024 daemons at once.
BIND_NOW := -Wl,-z,relro,-z,now

$(BIN): $(CMD_OBJS) $(B)/librdmcp.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS) $(BIND_NOW) $(LDFLAGS)

$(B)/tests/%: tests/unit/%.c tests/unit/unit.h $(B)/librdmcp.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(INCLUDES) -o $@ $< $(B)/librdmcp.a \
		$(CHECK_LIBS) $(LIBS) $(LDFLAGS)

$(B)/tests/%: tests/helpers/%.c $(B)/librdmcp.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(INCLUDES) -o $@ $< $(B)/librdmcp.a $(LIBS) $(LDFLAGS)

# The whole set-up on a fresh machine: what the tests need first (deps-test
# installs it), then every suite, in a make that sees it installed.
# The suites run at once (they share no port, address or namespace), the
# integration tests RDMCP_TEST_JOBS (3) at a time: the machine waits on
# timers and the VM more than it computes.
check: deps-test
	@$(MAKE) --no-print-directory DEPS=no $(BIN) $(UNIT_BINS) $(HELPER_BINS)
	@$(MAKE) --no-print-directory DEPS=no -j5 check-unit check-integration \
		check-cluster check-rdma check-docs
	@echo "make check: all tests passed"

# make check, then the long soaks (tests/soak: the report against the
# disks of 256 daemons under faults, a sparse file over 4 GiB): CI runs
# it.
check-all: check
	@$(MAKE) --no-print-directory DEPS=no check-soak
	@echo "make check-all: all tests passed"

check-soak: $(BIN) $(HELPER_BINS)
	@RDMCP=$(abspath $(BIN)) RDMCP_TEST_JOBS=1 tests/run-integration.sh tests/soak

check-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

check-integration: $(BIN) $(HELPER_BINS)
	@RDMCP=$(abspath $(BIN)) tests/run-integration.sh tests/integration

check-cluster: $(BIN)
	@RDMCP=$(abspath $(BIN)) RDMCP_TEST_JOBS=1 tests/run-integration.sh tests/cluster

# A real Slurm (Debian's slurmctld, slurmd, munge) on network namespaces
# (root): the stage-in example in sbatch jobs, the Spark/Hadoop example
# by node names (tests/slurm, scripts/slurm-cluster.sh).  CI runs it
# after check-all.  Its budget is 5 minutes (issue 38): the runner ends a
# test that takes longer, which then takes its cluster down.
check-slurm: deps-test
	@$(MAKE) --no-print-directory DEPS=no $(BIN)
	@RDMCP=$(abspath $(BIN)) RDMCP_TEST_JOBS=1 RDMCP_TEST_TIMEOUT=$${RDMCP_TEST_TIMEOUT:-300} \
		tests/run-integration.sh tests/slurm

check-docs: $(BIN)
	@tests/check-docs.sh

# The includes keep to the layers of docs/architecture.md (check-docs
# runs it too).
check-layers:
	@tests/check-layers.sh

# Unit and integration tests built with AddressSanitizer and UBSan.  Every
# process, daemons included, writes its reports to build-asan/reports;
# any report fails the target.
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
check-asan:
	rm -rf build-asan/reports && mkdir -p build-asan/reports
	$(MAKE) B=build-asan BIN=build-asan/rdmcp \
		CFLAGS="-O1 -g -fno-omit-frame-pointer $(SAN)" \
		LDFLAGS="$(SAN)" \
		ASAN_OPTIONS=log_path=$(CURDIR)/build-asan/reports/asan \
		RDMCP_SCALE_TEST_HOSTS=48 \
		UBSAN_OPTIONS=print_stacktrace=1:log_path=$(CURDIR)/build-asan/reports/ubsan \
		check-unit check-integration
	@if ls build-asan/reports/* >/dev/null 2>&1; then \
		cat build-asan/reports/*; echo "check-asan: sanitizer reports"; \
		exit 1; fi
	@echo "check-asan: no sanitizer reports"

# A representative subset of the integration tests (transfers, refusals,
# authentication, killed senders and daemons, the flood) with every daemon
# under valgrind: any memory error or definite or indirect leak in any
# daemon's log fails the target (tests/run-valgrind.sh).
VALGRIND_TESTS := sizes auth sender_killed kill_daemon dest_errors flood force \
	dry_run sparse
check-valgrind: $(BIN) $(HELPER_BINS)
	@RDMCP=$(abspath $(BIN)) tests/run-valgrind.sh $(VALGRIND_TESTS)

# libFuzzer (clang) with ASan and UBSan on three targets, FUZZ_SECONDS in
# all (a third each; CI gives 60):
#   fuzz_decoders  every decoder of network and command-line input
#   fuzz_serve     a real daemon on 127.0.0.1 and its loop: bytes and
#                  frames from an endpoint without the key, honest
#                  handshakes with hostile JOBs (set-up, START, blocks, the
#                  go, ABORT) and QUERYs, tampered requests
#   fuzz_push      push_run against a fake daemon, without the key, then
#                  with it and saying anything (ACCEPT, OUTCOME, FAIL...),
#                  the QUERY after a lost go included
# Each checks properties (fuzz/fuzz_*.c say which: e.g. nothing from an
# endpoint without the key makes a host ok or a file appear; descriptors
# and loop handles come back), from the seeds of fuzz/mkseeds.c and its
# corpus in build-fuzz/corpus/TARGET.  A crash, a property that does not
# hold, a leak or a hang (-timeout) leaves the input in build-fuzz/crashes/
# (TARGET-crash-..., -leak-, -timeout-) and fails the target; so does any
# file left there before.  Reproduce one with
#   build-fuzz/fuzz_TARGET build-fuzz/crashes/TARGET-crash-...
# (FUZZ_LOG=1: the daemon's or the sender's log too).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := decoders serve push
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_BASE = -g -O1 -std=gnu11 -D_GNU_SOURCE -DRDMCP_VERSION='"$(VERSION)"' \
	$(PKG_CFLAGS)
FUZZ_OBJS := $(SRCS:src/%.c=build-fuzz/src/%.o)
# max_len per target: a job's file list needs room, a script less
FUZZ_LEN_decoders := 65536
FUZZ_LEN_serve := 16384
FUZZ_LEN_push := 4096

build-fuzz/src/%.o: src/%.c Makefile | deps-test
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_BASE) $(INCLUDES) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
		-MMD -MP -c -o $@ $<

build-fuzz/librdmcp.a: $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

build-fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/harness.h \
		build-fuzz/librdmcp.a Makefile
	$(FUZZ_CC) $(FUZZ_BASE) $(WARNINGS) $(FUZZ_SAN) -fsanitize=fuzzer \
		$(INCLUDES) -o $@ $< build-fuzz/librdmcp.a $(LIBS) -lpthread

build-fuzz/mkseeds: fuzz/mkseeds.c fuzz/harness.h $(SRCS) \
		Makefile | deps-test
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_BASE) $(WARNINGS) $(INCLUDES) -o $@ fuzz/mkseeds.c \
		src/proto/proto.c src/util/wire.c src/util/net.c src/util/log.c \
		src/util/bset.c \
		src/sched/schedule.c src/sched/auto.c src/sched/binomial.c \
		src/sched/hybrid.c \
		src/proto/trace.c $(LIBS)

fuzz: build-fuzz/mkseeds $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	@mkdir -p build-fuzz/crashes $(FUZZ_TARGETS:%=build-fuzz/corpus/%)
	build-fuzz/mkseeds build-fuzz/corpus
	@each=$$(( $(FUZZ_SECONDS) / $(words $(FUZZ_TARGETS)) )); \
	[ $$each -ge 1 ] || each=1; \
	failed=; \
	for t in $(FUZZ_TARGETS); do \
		case $$t in decoders) len=$(FUZZ_LEN_decoders) ;; \
			serve) len=$(FUZZ_LEN_serve) ;; \
			*) len=$(FUZZ_LEN_push) ;; esac; \
		echo "== fuzz_$$t for $$each s (log: build-fuzz/$$t.log)"; \
		build-fuzz/fuzz_$$t -max_total_time=$$each -max_len=$$len \
			-timeout=60 -print_final_stats=1 \
			-artifact_prefix=build-fuzz/crashes/$$t- \
			build-fuzz/corpus/$$t >build-fuzz/$$t.log 2>&1 || \
			failed="$$failed $$t"; \
		grep -E "^(stat::|#[0-9]+[[:space:]]+DONE|==|SUMMARY|artifact|PROPERTY)" \
			build-fuzz/$$t.log; \
	done; \
	if [ -n "$$failed" ] || [ -n "$$(ls build-fuzz/crashes)" ]; then \
		echo "make fuzz: failed:$$failed; inputs in build-fuzz/crashes:"; \
		ls build-fuzz/crashes; exit 1; fi

# The RDMA tests, inside a VM with Soft-RoCE devices (root, QEMU).
check-rdma: $(BIN)
	@scripts/check-rdma.sh

demo: $(BIN)
	@RDMCP=$(abspath $(BIN)) scripts/demo.sh

# BENCH_SLOW, BENCH_RACKS, BENCH_SENDERS, BENCH_DELTA, BENCH_FAULTS: also
# run those benchmarks after bench/cluster.sh, with these scenarios ("1":
# their default ones).
bench: rdmcp $(HELPER_BINS)
	@bench/cluster.sh
	@for b in "slow:$(BENCH_SLOW)" "racks:$(BENCH_RACKS)" \
		"senders:$(BENCH_SENDERS)" "delta:$(BENCH_DELTA)" \
		"faults:$(BENCH_FAULTS)"; do \
		name=$${b%%:*}; sc=$${b#*:}; [ -n "$$sc" ] || continue; \
		var=BENCH_$$(echo "$$name" | tr a-z A-Z)_SCENARIOS; \
		if [ "$$sc" = 1 ]; then bench/$$name.sh || exit 1; \
		else env "$$var=$$sc" bench/$$name.sh || exit 1; fi; \
	done

bench-loop: rdmcp
	@bench/loop.sh

bench-scale: rdmcp
	@bench/scale.sh

bench-tree: rdmcp
	@bench/tree.sh

bench-slow: rdmcp $(HELPER_BINS)
	@bench/slow.sh

bench-racks: rdmcp
	@bench/racks.sh

bench-senders: rdmcp
	@bench/senders.sh

# Slurm's packages are those of make check (deps-test installs them)
bench-slurm: deps-test
	@$(MAKE) --no-print-directory DEPS=no rdmcp $(HELPER_BINS)
	@bench/slurm.sh

bench-rdma: rdmcp
	@bench/rdma.sh

bench-delta: rdmcp
	@bench/delta.sh

bench-resume: rdmcp
	@bench/resume.sh

bench-delta-host: rdmcp
	@bench/delta_host.sh

bench-faults: rdmcp
	@bench/faults.sh

-include $(OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(UNIT_BINS:=.d) $(HELPER_BINS:=.d)
# the fuzz objects too: a header changed under a stale object (a struct
# grown) made fuzz_serve crash on its own seeds
-include $(FUZZ_OBJS:.o=.d)

clean:
	rm -rf build build-asan build-fuzz rdmcp

# Every file 'make install' writes, below $(DESTDIR); 'make uninstall'
# removes exactly these, and $(DOCDIR) when it is left empty.
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/vendor-completions
DOCDIR ?= $(DATADIR)/doc/rdmcp
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
INSTALLED := $(BINDIR)/rdmcp $(MANDIR)/man1/rdmcp.1 $(BASHCOMPDIR)/rdmcp \
	$(ZSHCOMPDIR)/_rdmcp $(SYSTEMDDIR)/rdmcp.service \
	$(SYSUSERSDIR)/rdmcp.conf $(DOCDIR)/rdmcp.default \
	$(DOCDIR)/slurm-stage-example.sh $(DOCDIR)/spark-hadoop-stage-example.sh

install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(DOCDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/rdmcp
	install -m 0644 man/rdmcp.1 $(DESTDIR)$(MANDIR)/man1/rdmcp.1
	install -m 0644 completions/rdmcp.bash $(DESTDIR)$(BASHCOMPDIR)/rdmcp
	install -m 0644 completions/_rdmcp $(DESTDIR)$(ZSHCOMPDIR)/_rdmcp
	# the unit runs the binary where it is installed (BINDIR, not DESTDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' contrib/systemd/rdmcp.service.in \
		>$(DESTDIR)$(SYSTEMDDIR)/rdmcp.service.tmp
	chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/rdmcp.service.tmp
	mv -f $(DESTDIR)$(SYSTEMDDIR)/rdmcp.service.tmp \
		$(DESTDIR)$(SYSTEMDDIR)/rdmcp.service
	install -m 0644 contrib/systemd/rdmcp.sysusers $(DESTDIR)$(SYSUSERSDIR)/rdmcp.conf
	install -m 0644 contrib/systemd/rdmcp.default $(DESTDIR)$(DOCDIR)/rdmcp.default
	install -m 0755 contrib/slurm-stage-example.sh \
		contrib/spark-hadoop-stage-example.sh $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	# our own directory only: shared ones (man1, completions) stay
	rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DOCDIR) 2>/dev/null || true
