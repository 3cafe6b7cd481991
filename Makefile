# cordon: one plain Makefile.  `make` builds ./cordon; see README.md.

CC		?= cc
PKGS		 = libevent libevent_openssl openssl libseccomp libcares jansson \
		   zlib libmnl libnftnl nettle
BUILD		?= build
BIN		?= cordon
MAIN		?= $(BIN)-main
LOG_BIN		?= $(BIN)-log
OFFLINE_BIN	?= $(BIN)-offline
WERROR		?= -Werror

CFLAGS_WARN	 = -Wall -Wextra $(WERROR) -Wformat=2 -Wshadow \
		   -Wstrict-prototypes -Wmissing-prototypes \
		   -Wmissing-declarations -Wpointer-arith -Wcast-qual \
		   -Wwrite-strings -Wvla -Wimplicit-fallthrough -Wundef
CFLAGS_HARDEN	 = -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY) \
		   -fstack-protector-strong -fstack-clash-protection -fPIE
LDFLAGS_HARDEN	 = -pie -Wl,-z,relro,-z,now,-z,noexecstack
FORTIFY		:= $(shell printf '#include <stdio.h>\n' | \
		   $(CC) -D_FORTIFY_SOURCE=3 -O2 -Werror -E - >/dev/null \
		   2>&1 && echo 3 || echo 2)
OPT		?= -O2 -g
V		?= 0
Q		 = $(if $(filter 1,$(V)),,@)

PKG_CFLAGS	 = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	 = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# cordon-main and cordon-log link the libraries' archives (LINK=static,
# the default) or the shared libraries (LINK=shared): mk/link-libs.sh
# says what each costs.
LINK		?= static
MAIN_LIBS	 = $(shell ./mk/link-libs.sh $(LINK) $(CC) \
		   $(filter-out zlib,$(PKGS)) 2>/dev/null)
ALL_CFLAGS	 = -std=gnu11 -D_GNU_SOURCE $(OPT) $(CFLAGS_WARN) $(CFLAGS_HARDEN) \
		   -I. \
		   $(PKG_CFLAGS) $(EXTRA_CFLAGS) $(CFLAGS)
ALL_LDFLAGS	 = $(LDFLAGS_HARDEN) $(EXTRA_LDFLAGS) $(LDFLAGS)

LIB_SRCS	 = lib/addr.c lib/endpoint.c lib/fdpass.c lib/host.c lib/jsonl.c \
		   lib/log.c lib/relay.c lib/xmalloc.c \
		   lib/opt.c lib/errlist.c lib/str.c lib/file.c \
		   lib/path.c lib/clock.c lib/dir.c
# The agent profiles, policies/agents/NAME.json, linked in (below).
AGENTS		 = claude codex gemini opencode
AGENT_OBJS	 = $(patsubst %,$(BUILD)/policies/agent_%_json.o,$(AGENTS))
POLICY_SRCS	 = policies/policy.c policies/policy_parse.c \
		   policies/policy_load.c policies/policy_rec.c \
		   policies/policy_list.c \
		   policies/policy_merge.c policies/policy_match.c \
		   policies/decision.c \
		   policies/policy_show.c policies/policy_flag.c \
		   policies/policy_agent.c \
		   policies/policy_ident.c
# The protocols' bytes, parsed (wire/): no socket, fuzzed on buffers.
WIRE_SRCS	 = wire/socks5.c wire/tls_peek.c wire/ssh_peek.c \
		   wire/http.c wire/http_request.c wire/http_target.c \
		   wire/http_body.c wire/http_out.c wire/http_path.c \
		   wire/pp2.c wire/dnsmsg.c
PROXY_SRCS	 = $(WIRE_SRCS) proxy/dns.c proxy/proxy_policy.c \
		   proxy/inspect.c proxy/pin.c proxy/scrub.c proxy/proxy.c \
		   proxy/conn.c proxy/conn_dial.c proxy/conn_http.c \
		   proxy/conn_socks.c proxy/conn_tls.c proxy/conn_tunnel.c \
		   proxy/conn_capture.c proxy/conn_accept.c \
		   proxy/conn_narrow.c proxy/conn_ssh.c proxy/conn_pool.c \
		   proxy/listen.c \
		   proxy/metrics.c proxy/watch.c proxy/watch_msg.c \
		   proxy/conn_mtls.c proxy/conn_pump.c \
		   proxy/ident.c proxy/upool.c proxy/renew.c
BRIDGE_SRCS	 = bridge/bridge.c bridge/tlsup.c
PLAN_SRCS	 = plan/fscache.c plan/fslist.c plan/fspath.c plan/fsscan.c plan/fsplan.c plan/fsorder.c
SSHAGENT_SRCS	 = sshagent/agentmsg.c sshagent/agentkey.c \
		   sshagent/knownhosts.c
GIT_SRCS	 = git/gitcfg.c git/gitjudge.c git/giturl.c git/gitptr.c
SECRETS_SRCS	 = secrets/secrets.c secrets/tokenfile.c secrets/tokenjson.c
# The objects the unit tests and fuzz targets link against, folder by
# folder: no main() and no command's option parsing, so that a test
# binary can link them all.  SANDBOX_SRCS is the part of what runs inside
# the sandbox (sandbox/) a unit test reaches; the rest of sandbox/, PID 1
# and the command's last steps, is in SANDBOX_CMD_SRCS.
SANDBOX_SRCS	 = sandbox/landlock.c sandbox/sysfilter_apply.c
SANDBOX_CMD_SRCS = sandbox/sandbox.c sandbox/sandbox_end.c sandbox/command.c \
		   sandbox/sandbox_fail.c \
		   sandbox/sandbox_session.c \
		   sandbox/mount.c sandbox/mount_fd.c sandbox/mount_steps.c \
		   sandbox/mount_sys.c \
		   sandbox/netcap.c sandbox/scratch.c sandbox/publish_inside.c \
		   sandbox/capture.c sandbox/resolver.c
# RUNNER_SRCS is the part of runner/ (cordon run on the host) a unit test
# or a fuzz target reaches (the syscall filter, the environment, the
# guards, ...); the run's orchestration is in CMD_SRCS below.
RUNNER_SRCS	 = runner/wspath.c
# What confines the command, decided on the host before the clone: its
# environment, its CA bundle and phantoms, its seccomp program (confine/).
CONFINE_SRCS	 = confine/env.c confine/trust.c confine/trust_bundle.c \
		   confine/sysfilter.c \
		   confine/sysfilter_prog.c
# The checks after a run (guard/) and the connect thread's parts a unit
# test reaches (notify/); both run on the host, for cordon run.
GUARD_SRCS	 = guard/guard.c guard/gwalk.c guard/quarantine.c \
		   guard/sentinel.c guard/gitwrite.c guard/hostcfg.c
NOTIFY_SRCS	 = notify/hostport.c notify/sockdiag.c notify/unixroute.c \
		   notify/notify_addr.c notify/unixown.c
SESSION_SRCS	 = session/sessmsg.c session/sessdir.c session/sessclient.c
MCP_SRCS	 = mcp/mcpmsg.c
SESSION_EXEC	 = $(BUILD)/cordon-session-exec
PROFILE_SRCS	 = profile/seatbelt.c profile/winfw.c
LOGS_SRCS	 = logs/elog.c logs/elog_summary.c logs/elog_tail.c
CERTS_SRCS	 = certs/ca.c certs/ca_dir.c certs/leaf.c certs/signer.c certs/mtls.c \
		   certs/ssl_error.c
# The subcommands and what only they call: linked into ./cordon alone,
# never into a unit test (they hold main(), the option parsers and the
# processes of a run).  A file moves up to its folder's *_SRCS when a
# unit test needs it.
CMD_SRCS	 = cordon.c policies/policy_cmd.c bridge/bridge_cmd.c \
		   proxyd/proxy_cmd.c proxyd/proxy_listen.c proxyd/workers.c \
		   proxyd/pwatch.c \
		   runner/run_cmd.c \
		   runner/run_prepare.c runner/run_plan.c runner/run_secrets.c \
		   runner/run_agent.c \
		   runner/keepdir.c \
		   runner/run_print.c \
		   guard/block.c runner/run.c runner/run_end.c \
		   runner/run_proxy.c \
		   runner/control_run.c runner/control_tell.c \
		   runner/control_feed.c runner/control_feed_replay.c \
		   runner/run_remote.c \
		   runner/run_sock.c \
		   runner/tally.c runner/publish.c \
		   runner/control.c notify/notify.c notify/notify_judge.c \
		   agent/agent.c agent/agent_usable.c \
		   runner/keeper.c runner/freeze.c runner/session_cmd.c \
		   mcp/mcp_cmd.c mcp/mcp.c mcp/mcp_call.c mcp/mcp_ask.c \
		   profile/profile_cmd.c \
		   certs/ca_cmd.c $(SANDBOX_CMD_SRCS)

CORE_OBJS	 = $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS) $(POLICY_SRCS) \
		   $(PROXY_SRCS) $(BRIDGE_SRCS) $(PLAN_SRCS) $(SSHAGENT_SRCS) \
		   $(GIT_SRCS) $(SECRETS_SRCS) $(SANDBOX_SRCS) $(RUNNER_SRCS) $(CONFINE_SRCS) \
		   $(GUARD_SRCS) $(NOTIFY_SRCS) \
		   $(PROFILE_SRCS) $(SESSION_SRCS) $(MCP_SRCS) \
		   $(LOGS_SRCS) $(CERTS_SRCS)) \
		   $(BUILD)/policies/default_json.o $(AGENT_OBJS) \
		   $(BUILD)/gen/sysfilter_progs.o
CMD_OBJS	 = $(patsubst %.c,$(BUILD)/%.o,$(CMD_SRCS))

# Adding a test (docs/hacking.md says the same):
# - a unit test: tests/unit/test_NAME.c, cmocka, includes unit.h, links
#   against every object above; add test_NAME to UNIT_TESTS.  `make
#   unit` builds and runs them all; build/tests/unit/test_NAME runs one.
# - a fuzz target: tests/fuzz/fuzz_NAME.c with LLVMFuzzerTestOneInput,
#   its seeds in tests/fuzz/corpus/fuzz_NAME/, a dictionary in
#   tests/fuzz/dict/fuzz_NAME.dict if it helps; add fuzz_NAME to
#   FUZZ_TARGETS.  `make fuzz` builds them, `make fuzz-run` runs them.
# - an end-to-end test: a @test in tests/e2e/*.bats (a new file is found
#   by itself), with tests/e2e/helpers.bash; a peer it needs is a
#   tests/tools/NAME.c added to TOOLS.  `make e2e` runs them, `make
#   check` runs the unit tests beside them, `make check-fast` those of
#   the files tagged fast (# bats file_tags=fast) beside the unit tests.
UNIT_TESTS	 = test_host test_addr test_policy_load test_policy_match \
		   test_policy_merge test_socks5 test_tls_peek test_http test_pp2 \
		   test_sysfilter test_landlock test_env test_fsplan test_fsscan \
		   test_fsorder test_fspath test_fscache test_fslist \
		   test_seatbelt test_winfw test_certs test_inspect test_pin test_signer \
		   test_listen test_guard test_dnsmsg test_util test_secrets \
		   test_agentmsg test_gitcfg test_ssh_peek test_notify test_conn \
		   test_watch_msg test_mtls test_policy_ident test_sessmsg \
		   test_unixroute test_host_tls test_ident test_hostcfg \
		   test_sessdir test_mcpmsg test_gitptr test_renew test_elog
UNIT_BINS	 = $(addprefix $(BUILD)/tests/unit/,$(UNIT_TESTS))
FUZZ_TARGETS	 = fuzz_policy_load fuzz_policy_list fuzz_host_match fuzz_addr \
		   fuzz_socks5 fuzz_tls_peek fuzz_http fuzz_http_body fuzz_pp2 \
		   fuzz_log fuzz_inspect fuzz_elog fuzz_dnsmsg fuzz_secrets \
		   fuzz_agentmsg fuzz_gitcfg fuzz_ssh_peek fuzz_notify \
		   fuzz_watch_msg fuzz_policy_ident fuzz_sessmsg fuzz_mcpmsg \
		   fuzz_gitptr

# Debian packages: the build's (make deps), the demo's (make demo: only
# these two lists), the unit tests' (make unit: git, which test_gitcfg
# reads the same files with), and the end-to-end tests' (make e2e and
# make check install those too).
DEB_BUILD	 = gcc make pkg-config libevent-dev libssl-dev libseccomp-dev \
		   libc-ares-dev libjansson-dev libcmocka-dev zlib1g-dev \
		   libmnl-dev libnftnl-dev nettle-dev musl-tools
DEB_DEMO	 = curl jq util-linux passwd
DEB_UNIT	 = git
DEB_TEST	 = bats curl jq dnsmasq-base mandoc util-linux passwd logrotate \
		   openssl git wget python3 python3-pip nodejs npm chromium \
		   openssh-client openssh-server yarnpkg golang-go cargo \
		   default-jdk-headless maven cmake tmux gnupg sqlite3 \
		   python3-venv python3-websockets procps
DEB_PKG		 = dpkg-dev fakeroot lintian binutils
DEB_FUZZ	 = clang libclang-rt-14-dev
DEB_VALGRIND	 = valgrind curl
# make image and make fleet-check (docs/fleet.md): the image's tools,
# the container runtime that runs it, and the manifests' renderer.
DEB_FLEET	 = mmdebstrap buildah podman runc conmon slirp4netns \
		   bats curl jq nodejs npm
# make fleet-tier (and fleet-check, not make check): the engines the
# tier runs behind and with, HAProxy, etcd, Prometheus and rsyslog,
# each started by the tests by hand.
DEB_TIER	 = haproxy etcd-server etcd-client prometheus rsyslog bats curl \
		   jq python3 openssl
DEB_BENCH	 = socat bc squid tinyproxy apache2-utils curl bubblewrap time \
		   util-linux ripgrep

.PHONY: all deps deps-demo deps-unit deps-check libs deps-fuzz check unit \
	check-fast e2e demo deps-tier fleet-tier \
	bench bench-tasks sanitize valgrind fuzz fuzz-run lint lint-bats \
	lint-exports lint-map lint-paths lint-commits lint-layers hooks \
	clean install golden macos-check deb image deps-fleet fleet-check

all: $(BIN) $(MAIN) $(LOG_BIN) $(OFFLINE_BIN) $(SESSION_EXEC)

# cordon-main, the whole program: cordon (front.c) execs it beside
# itself, or from PREFIX/libexec/cordon once installed.
# cordon log is cordon-log's alone: cordon-main links neither the logs'
# reader nor zlib, one shared library fewer for the loader at each start.
MAIN_OBJS	 = $(filter-out $(patsubst %.c,$(BUILD)/%.o,$(LOGS_SRCS)), \
		   $(CORE_OBJS)) $(CMD_OBJS)
$(MAIN): $(MAIN_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) $(MAIN_LIBS)

# cordon-offline, `cordon run` without the proxy (offline/): the whole
# program's objects, from an archive so that only what a run reaches is
# linked, with offline/run_proxy.c for runner/run_proxy.c, and neither
# OpenSSL nor libevent's OpenSSL part.  Should a run come to need one
# of them, this link fails: it is how the split is kept.
OFFLINE_OBJS	 = $(patsubst %.c,$(BUILD)/%.o,offline/offline.c \
		   offline/run_proxy.c)
OFFLINE_AR	 = $(BUILD)/offline/libcordon.a
OFFLINE_LIBS	 = libevent libseccomp libcares jansson libmnl libnftnl nettle
$(OFFLINE_AR): $(filter-out $(BUILD)/cordon.o $(BUILD)/runner/run_proxy.o, \
    $(MAIN_OBJS))
	@echo "  AR      $@"
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(OFFLINE_BIN): $(OFFLINE_OBJS) $(OFFLINE_AR)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(OFFLINE_OBJS) $(OFFLINE_AR) \
	    $(ALL_LDFLAGS) \
	    $(shell ./mk/link-libs.sh $(LINK) $(CC) $(OFFLINE_LIBS) 2>/dev/null)

# cordon-log, `cordon log` alone: jansson and zlib, not the fourteen
# libraries whose loading costs more than a short tail.  Found as
# cordon-main is.
LOG_OBJS	 = $(patsubst %.c,$(BUILD)/%.o,logs/log_main.c logs/log_cmd.c 		   $(LOGS_SRCS) lib/log.c lib/xmalloc.c lib/opt.c lib/str.c)
$(LOG_BIN): $(LOG_OBJS)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS) \
	    $(shell ./mk/link-libs.sh $(LINK) $(CC) jansson zlib 2>/dev/null)

# cordon run --session alone, with the C library only: it starts fast.
# With musl (musl-tools), static: glibc's start asks the processor for
# its caches (cpuid), which traps in a virtual machine; musl's start does
# not, and a command in a session costs 0.5 ms less.  Not a PIE: musl-gcc
# has no static PIE.  Without musl, glibc's, dynamic.
# cordon itself (front.c) is built the same way: it serves run --session
# and --version, and execs cordon-main for the rest.
MUSL_CC		?= $(shell command -v musl-gcc 2>/dev/null)
MUSL_CFLAGS	 = -std=gnu11 -D_GNU_SOURCE $(OPT) $(CFLAGS_WARN) -I. \
		   -fstack-protector-strong \
		   -fstack-clash-protection -fno-pie -static -no-pie \
		   -Wl,-z,relro,-z,now,-z,noexecstack
ifneq ($(MUSL_CC),)
$(SESSION_EXEC): $(SESSION_SRCS) session/session_exec.c session/sess.h
	@echo "  LD      $@ (musl, static)"
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(MUSL_CFLAGS) -o $@ $(filter %.c,$^)

$(BIN): $(SESSION_SRCS) front.c session/sess.h lib/util.h | $(MAIN) \
    $(LOG_BIN) $(OFFLINE_BIN)
	@echo "  LD      $@ (musl, static)"
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(MUSL_CFLAGS) -o $@ $(filter %.c,$^)
else
$(SESSION_EXEC): $(patsubst %.c,$(BUILD)/%.o,$(SESSION_SRCS) \
    session/session_exec.c)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS)

$(BIN): $(patsubst %.c,$(BUILD)/%.o,$(SESSION_SRCS) front.c) | $(MAIN) \
    $(LOG_BIN) $(OFFLINE_BIN)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(ALL_LDFLAGS)
endif

# A plain make only builds: it names the libraries pkg-config cannot
# find, and the target that installs them, and installs nothing.  The
# targets that install (check, demo, ...) do so first, even under -j.
$(CORE_OBJS) $(CMD_OBJS): | libs

libs:
	@missing=; for p in $(PKGS); do \
		pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "cordon: libraries pkg-config cannot find:$$missing;" \
		    "'make deps' installs them (Debian)" >&2; \
		exit 1; \
	fi

ifneq ($(filter deps deps-demo deps-unit deps-check check unit e2e demo bench \
    bench-tasks sanitize valgrind fuzz deb image fleet-check deps-tier \
    fleet-tier,$(MAKECMDGOALS)),)
libs: | deps
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The agent profiles (cordon run --agent NAME) are policies/agents/*.json,
# linked in the same way, each as policy_agent_NAME_json (AGENTS).
$(BUILD)/policies/agent_%_json.o: policies/agents/%.json
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)printf '\t.section .rodata\n\t.globl policy_agent_%s_json\n\t.globl policy_agent_%s_json_end\npolicy_agent_%s_json:\n\t.incbin "%s"\npolicy_agent_%s_json_end:\n\t.byte 0\n\t.section .note.GNU-stack,"",@progbits\n' \
	    $* $* $* $< $* | $(CC) -x assembler -c -o $@ -

# The built-in defaults are policies/default.json itself, linked in.
$(BUILD)/policies/default_json.o: policies/default.json
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)printf '\t.section .rodata\n\t.globl policy_default_json\n\t.globl policy_default_json_end\npolicy_default_json:\n\t.incbin "%s"\npolicy_default_json_end:\n\t.byte 0\n\t.section .note.GNU-stack,"",@progbits\n' \
	    $< | $(CC) -x assembler -c -o $@ -

# The command's seccomp programs, built with libseccomp when cordon is
# (confine/sysfilter_gen.c), one per variant: a run copies its own.
SYSFILTER_GEN	 = $(BUILD)/sysfilter-gen
$(SYSFILTER_GEN): confine/sysfilter_gen.c confine/sysfilter.h \
    $(BUILD)/confine/sysfilter.o $(BUILD)/lib/xmalloc.o $(BUILD)/lib/log.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c %.o,$^) $(ALL_LDFLAGS) \
	    $(shell pkg-config --libs libseccomp)

$(BUILD)/gen/sysfilter_progs.c: $(SYSFILTER_GEN)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)$(SYSFILTER_GEN) >$@.tmp && mv $@.tmp $@

$(BUILD)/gen/sysfilter_progs.o: $(BUILD)/gen/sysfilter_progs.c
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(CORE_OBJS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(CORE_OBJS) $(ALL_LDFLAGS) \
	    $(PKG_LIBS) $$(pkg-config --libs cmocka)

# Test peers, built like the rest (tests/tools/*.c, one file each).
TOOLS		 = netcheck httpd probe sockpeer harness nonft connectx \
		   sigcont inflight bpfsame
TOOL_BINS	 = $(addprefix $(BUILD)/tests/tools/,$(TOOLS))

# A kernel without nf_tables, as a seccomp filter sees it.
$(BUILD)/tests/tools/nonft: TOOL_LIBS = $(shell pkg-config --libs libseccomp)

# The escape probe runs as it would in the wild: no sanitizer runtime
# between it and the kernel (its own threads, mappings, signals).
$(BUILD)/tests/tools/probe: override EXTRA_CFLAGS =
$(BUILD)/tests/tools/probe: override EXTRA_LDFLAGS =
$(BUILD)/tests/tools/sigcont: override EXTRA_CFLAGS =
$(BUILD)/tests/tools/sigcont: override EXTRA_LDFLAGS =
$(BUILD)/tests/tools/inflight: override EXTRA_CFLAGS =
$(BUILD)/tests/tools/inflight: override EXTRA_LDFLAGS =

# The origin serves TLS too (--tls-cert), with OpenSSL.
$(BUILD)/tests/tools/httpd: TOOL_LIBS = $(shell pkg-config --libs openssl)

$(BUILD)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -pthread -o $@ $< $(ALL_LDFLAGS) $(TOOL_LIBS)

# Installs what is missing, through sudo when not root; a no-op otherwise.
# deps is the build's; the demo adds curl and jq; the tests add their
# clients and servers, and those Debian lacks from the npm registry,
# pinned.  Each after deps: one apt-get at a time, even under -j.
deps:
	@./mk/deps.sh $(DEB_BUILD)

deps-demo: deps
	@./mk/deps.sh $(DEB_DEMO)

NPM_TOOLS	?= tests/npm
# The agent CLIs tests/e2e/agents.bats runs (Claude Code, Codex, Gemini CLI, OpenCode), pinned.
AGENT_NPM	?= tests/agents
deps-check: deps
	@./mk/deps.sh $(DEB_TEST) $(DEB_PKG)
	@./mk/npm-tools.sh $(NPM_TOOLS)
	@./mk/npm-tools.sh $(AGENT_NPM)

# kubectl renders deploy/ (kubectl kustomize): Debian's kubernetes-client
# unless a kubectl is there already (one from another archive owns the
# same file).  The manifests' validator is pinned in tests/fleet.
FLEET_NPM	?= tests/fleet
deps-fleet: deps
	@./mk/deps.sh $(DEB_FLEET) $(DEB_PKG)
	@command -v kubectl >/dev/null 2>&1 || \
	    ./mk/deps.sh kubernetes-client
	@./mk/npm-tools.sh $(FLEET_NPM)

deps-unit: deps
	@./mk/deps.sh $(DEB_UNIT)

deps-fuzz: deps
	@./mk/deps.sh $(DEB_FUZZ)

deps-tier: deps
	@./mk/deps.sh $(DEB_TIER)

# The bats runs below give each test a deadline (bats' own
# BATS_TEST_TIMEOUT): one that hangs fails, "timeout after" said, and
# the run goes on.  The slowest took 181 s (tests/e2e) and 298 s
# (tests/fleet) on 2 cores under a load of 10 (docs/hacking.md).
TEST_TIMEOUT	?= 600
BATS_ENV	 = BATS_TEST_TIMEOUT=$(TEST_TIMEOUT)

# The unit tests alone: built, then run, with the one package they need
# beyond the build's; UNIT_TESTS=test_x runs some.
unit: deps deps-unit $(UNIT_BINS)
	@UNIT_DIR=$(BUILD)/tests/unit CORDON=$(abspath $(BIN)) E2E=no \
	    ./tests/run.sh $(UNIT_TESTS)

# The bats suite alone (tests/e2e), with the clients and servers it
# drives; bats -f picks tests when run by hand (docs/hacking.md).
e2e: deps deps-check lint-bats $(BIN) $(SESSION_EXEC) $(TOOL_BINS)
	@$(BATS_ENV) CORDON=$(abspath $(BIN)) \
	    TOOLS_DIR=$(abspath $(BUILD))/tests/tools ./tests/run.sh

# The tier of issue 31 on real engines: HAProxy in front of three
# replicas, policy through etcd, Prometheus, rsyslog; all on 127.0.0.1,
# started and ended by the tests (docs/fleet.md).  make fleet-check runs
# these with the rest of tests/fleet, and make check ends with it.
TIER_BATS	 = tests/fleet/lb.bats tests/fleet/policy.bats \
		   tests/fleet/logs.bats
fleet-tier: deps deps-tier $(BIN) $(TOOL_BINS)
	@echo "  LINT    $(TIER_BATS)"
	$(Q)./mk/lint-bats.sh $(TIER_BATS)
	@$(BATS_ENV) CORDON=$(abspath $(BIN)) \
	    TOOLS_DIR=$(abspath $(BUILD))/tests/tools bats --timing $(TIER_BATS)

# runner/run_macos.c is built on macOS only; here it is compiled for
# syntax and types against the same headers, as macOS would see it.
macos-check: deps
	@echo "  CHECK   runner/run_macos.c (-D__APPLE__)"
	$(Q)$(CC) $(ALL_CFLAGS) -D__APPLE__ -fsyntax-only runner/run_macos.c

# Rewrites the expected files of tests/profiles from the generators;
# review the change with git diff (tests/profiles/README.md).
golden: deps $(BUILD)/tests/unit/test_seatbelt $(BUILD)/tests/unit/test_winfw
	@PROFILE_GOLDEN_UPDATE=1 $(BUILD)/tests/unit/test_seatbelt >/dev/null
	@PROFILE_GOLDEN_UPDATE=1 $(BUILD)/tests/unit/test_winfw >/dev/null
	@git status --short tests/profiles

# A bats assertion written so that it can never fail is refused before
# the suite runs (mk/lint-bats.sh says which line and why).
lint-bats:
	@echo "  LINT    tests/e2e/*.bats"
	$(Q)./mk/lint-bats.sh tests/e2e/*.bats

# The loop between make unit and make check: the unit tests and the bats
# files tagged fast (# bats file_tags=fast), which need nothing but the
# build's packages, bats, curl, jq and git; it installs nothing, and
# says what is missing (about 2 minutes on 2 cores, docs/hacking.md).
FAST_TOOLS	 = bats curl jq git
check-fast: lint-bats $(BIN) $(SESSION_EXEC) $(UNIT_BINS) $(TOOL_BINS)
	@for t in $(FAST_TOOLS); do command -v $$t >/dev/null || { \
	    echo "make check-fast: no $$t here; make deps-check installs" \
	        "it" >&2; exit 1; }; done
	@$(BATS_ENV) CORDON=$(CURDIR)/cordon UNIT_DIR=$(BUILD)/tests/unit \
	    TOOLS_DIR=$(CURDIR)/$(BUILD)/tests/tools E2E_TAGS=fast \
	    ./tests/run.sh $(UNIT_TESTS)

# The unit tests run beside bats (tests/run.sh): they share no port,
# file or process with it.  The tier after, on its own: its engines
# and its load would slow the tests that measure a pace.
check: deps deps-check macos-check lint-bats lint-exports lint-map lint-paths lint-layers $(BIN) $(SESSION_EXEC) $(UNIT_BINS) $(TOOL_BINS)
	@$(BATS_ENV) CORDON=$(CURDIR)/cordon UNIT_DIR=$(BUILD)/tests/unit \
	    TOOLS_DIR=$(CURDIR)/$(BUILD)/tests/tools \
	    ./tests/run.sh $(UNIT_TESTS)
	@# The image (mmdebstrap, buildah, podman), the manifests, and the
	@# tier behind HAProxy, etcd, Prometheus and rsyslog (about 90 s).
	@# The image is built as root; a developer's make check runs the
	@# tier alone and says so (under CI, where nothing may be left out,
	@# it fails instead).
	$(Q)if [ "$$(id -u)" -eq 0 ]; then \
	    $(MAKE) --no-print-directory fleet-check; \
	elif [ -n "$(CI)" ]; then \
	    echo "make check: the image's tests need root (CI=$(CI))" >&2; \
	    exit 1; \
	else \
	    echo "make check: the image's tests need root, left out:" \
	        "sudo make fleet-check runs them; the tier's tests run now"; \
	    $(MAKE) --no-print-directory fleet-tier; \
	fi

demo: deps deps-demo $(BIN) $(TOOL_BINS)
	@./mk/demo.sh $(abspath $(BIN)) $(abspath $(BUILD))/tests/tools

# Against socat, squid and tinyproxy, in the same run; then, unless
# BENCH names one section, tests/e2e/tasks.bats under cordon and under
# sandbox-runtime and Codex, from the npm registry at the versions
# mk/bench-tasks/package-lock.json pins, into a scratch folder: the
# table of which task passes where, also in build/bench/tasks.md.
bench: deps deps-check $(BIN) $(SESSION_EXEC) $(TOOL_BINS)
	@./mk/deps.sh $(DEB_BENCH)
	@./mk/bench.sh $(CURDIR)/cordon $(CURDIR)/$(BUILD)/tests/tools
	@[ "$${BENCH:-all}" != all ] || ./mk/bench-tasks.sh \
	    $(CURDIR)/cordon $(CURDIR)/$(BUILD)/tests/tools

bench-tasks: deps deps-check $(BIN) $(TOOL_BINS)
	@./mk/deps.sh $(DEB_BENCH)
	@./mk/bench-tasks.sh $(CURDIR)/cordon $(CURDIR)/$(BUILD)/tests/tools

# The whole suite under ASan and UBSan, from its own build folder.
sanitize: deps deps-check
	$(MAKE) BUILD=build-san BIN=build-san/cordon OPT="-O1 -g" \
	    EXTRA_CFLAGS="-fsanitize=address,undefined \
	    -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" \
	    build-san/cordon build-san/cordon-main build-san/cordon-offline \
	    build-san/cordon-session-exec \
	    $(addprefix build-san/tests/unit/,$(UNIT_TESTS)) \
	    $(addprefix build-san/tests/tools/,$(TOOLS))
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    CORDON=$(CURDIR)/build-san/cordon UNIT_DIR=build-san/tests/unit \
	    TOOLS_DIR=$(CURDIR)/build-san/tests/tools \
	    ./tests/run.sh $(UNIT_TESTS)

# The proxy and the bridge under valgrind through a short load, then
# SIGTERM: fails on any memcheck error or definite leak (mk/valgrind.sh).
valgrind: deps $(MAIN) $(TOOL_BINS)
	@./mk/deps.sh $(DEB_VALGRIND)
	@./mk/valgrind.sh $(CURDIR)/$(MAIN) $(CURDIR)/$(BUILD)/tests/tools

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang into
# build-fuzz/; `make fuzz` only builds them.  `make fuzz-run` runs each
# for FUZZ_SECONDS from a scratch copy of its seed corpus, with its
# dictionary, and fails on any crash (mk/fuzz-run.sh).
FUZZ_SECONDS	?= 20
FUZZ_CC		?= clang
FUZZ_FLAGS	 = -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
		   -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=all -fno-omit-frame-pointer \
		   -I. $(PKG_CFLAGS)
FUZZ_SRCS	 = $(LIB_SRCS) $(POLICY_SRCS) $(PROXY_SRCS) $(CERTS_SRCS) \
		   $(LOGS_SRCS) $(SSHAGENT_SRCS) $(GIT_SRCS) \
		   $(SECRETS_SRCS) confine/trust.c confine/env.c \
		   notify/notify_addr.c session/sessmsg.c mcp/mcpmsg.c
FUZZ_HDRS	 = $(wildcard lib/*.h policies/*.h wire/*.h proxy/*.h certs/*.h runner/*.h \
		   sandbox/*.h notify/*.h guard/*.h confine/*.h \
		   plan/*.h sshagent/*.h git/*.h secrets/*.h logs/*.h \
		   session/*.h mcp/*.h)
FUZZ_BINS	 = $(addprefix build-fuzz/,$(FUZZ_TARGETS))

fuzz: deps deps-fuzz
	@$(MAKE) -s --no-print-directory $(FUZZ_BINS)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRCS) $(FUZZ_HDRS) \
    $(BUILD)/policies/default_json.o $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $<"
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_SRCS) \
	    $(BUILD)/policies/default_json.o $(AGENT_OBJS) $(PKG_LIBS)

fuzz-run: fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./mk/fuzz-run.sh build-fuzz \
	    tests/fuzz $(FUZZ_TARGETS)

lint: deps deps-check lint-bats lint-exports lint-map lint-paths lint-commits lint-layers
	mandoc -Tlint -Wwarning docs/cordon.1 docs/cordon-policy.5

# Every export carries its file's name (mk/exports.sh says which do not,
# its few exceptions and why); it reads the objects, so the build first.
lint-exports: $(MAIN)
	@echo "  LINT    exports"
	$(Q)./mk/exports.sh $(BUILD)

# docs/architecture.md's file map is each file's own first sentence
# (mk/map.sh): a file added, moved or renamed without it goes red.
lint-map:
	@echo "  LINT    map"
	$(Q)./mk/map.sh --check

# A path a comment or a doc names that the tree does not hold goes red
# (mk/lint-paths.sh prints FILE:LINE and the path).
lint-paths:
	@echo "  LINT    paths"
	$(Q)./mk/lint-paths.sh

# Each commit after mk/commit-base has the message shape mk/commit-msg
# checks: a subject of at most 72 characters, then a blank line.
lint-commits:
	@echo "  LINT    commits"
	$(Q)./mk/lint-commits.sh

# The same check as git's commit-msg hook, in this clone and its
# worktrees (they share the hooks folder).
hooks:
	$(Q)d=$$(git rev-parse --git-path hooks) && mkdir -p "$$d" && \
	    install -m 0755 mk/commit-msg "$$d/commit-msg" && \
	    echo "  HOOK    $$d/commit-msg"

# Each include names its folder, and a folder includes only those below
# it (mk/layers.sh states the rules: sandbox/ never runner/, wire/ never
# proxy/, lib/ only lib/, ...): an include that breaks one goes red.
lint-layers:
	@echo "  LINT    layers"
	$(Q)./mk/layers.sh

PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
DATADIR		?= $(PREFIX)/share
LIBEXECDIR	?= $(PREFIX)/libexec
MANDIR		?= $(DATADIR)/man
# logrotate reads /etc/logrotate.d only; systemd reads units under
# /usr/local/lib/systemd/system as well as /usr/lib/systemd/system.
# sysusers.d and tmpfiles.d are read under /usr/local/lib too.
# Another prefix (PREFIX=~/.local, unprivileged) keeps all beneath it.
SYSCONFDIR	?= $(if $(filter /usr /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR		?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR	?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR	?= $(PREFIX)/lib/tmpfiles.d
install: $(BIN) $(MAIN) $(LOG_BIN) $(OFFLINE_BIN) $(SESSION_EXEC)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DATADIR)/cordon/policies \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/logrotate.d \
	    $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/cordon
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/cordon
	install -d $(DESTDIR)$(LIBEXECDIR)/cordon
	install -m 0755 $(MAIN) $(DESTDIR)$(LIBEXECDIR)/cordon/cordon-main
	install -m 0755 $(LOG_BIN) $(DESTDIR)$(LIBEXECDIR)/cordon/cordon-log
	install -m 0755 $(OFFLINE_BIN) \
	    $(DESTDIR)$(LIBEXECDIR)/cordon/cordon-offline
	install -m 0755 $(SESSION_EXEC) $(DESTDIR)$(LIBEXECDIR)/cordon/
	install -m 0644 docs/cordon.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/cordon-policy.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 policies/*.json $(DESTDIR)$(DATADIR)/cordon/policies/
	install -d $(DESTDIR)$(DATADIR)/cordon/policies/agents
	install -m 0644 policies/agents/*.json \
	    $(DESTDIR)$(DATADIR)/cordon/policies/agents/
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	    -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    contrib/systemd/cordon-proxy.service.in \
	    >$(DESTDIR)$(UNITDIR)/cordon-proxy.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/cordon-proxy.service
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    contrib/systemd/cordon-originator.service.in \
	    >$(DESTDIR)$(UNITDIR)/cordon-originator.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/cordon-originator.service
	install -m 0644 contrib/logrotate/cordon \
	    $(DESTDIR)$(SYSCONFDIR)/logrotate.d/cordon
	install -m 0644 contrib/sysusers/cordon.conf \
	    $(DESTDIR)$(SYSUSERSDIR)/cordon.conf
	sed -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' contrib/tmpfiles/cordon.conf.in \
	    >$(DESTDIR)$(TMPFILESDIR)/cordon.conf
	chmod 0644 $(DESTDIR)$(TMPFILESDIR)/cordon.conf

# A Debian package of the tree (mk/deb.sh), into DEB_OUT; lintian must
# find no error in it.  tests/e2e/make.bats ("make deb") installs, upgrades and
# removes it under a scratch root.
DEB_OUT		?= $(BUILD)/deb
DEB_MAINTAINER	?= cordon maintainers <cordon@example.org>
deb: deps $(BIN) $(SESSION_EXEC)
	@./mk/deps.sh $(DEB_PKG)
	@deb=$$(./mk/deb.sh $(abspath $(BIN)) $(abspath $(DEB_OUT)) \
	    "$(DEB_MAINTAINER)") && echo "  DEB     $$deb" && \
	    lintian --fail-on error "$$deb"

# make image: the proxy's OCI image (mk/image.sh, docs/fleet.md) from
# make deb's package, into IMAGE_OUT/cordon-proxy.tar and a store of its
# own there, which podman reads with IMAGE_STORE_FLAGS.  fleet-check
# runs it with podman and renders and validates deploy/ (tests/fleet).
IMAGE_OUT	?= $(BUILD)/image
IMAGE_TAG	?= localhost/cordon-proxy:latest
IMAGE_RUNROOT	?= /run/cordon-image.$(shell echo $(abspath $(IMAGE_OUT)) | \
		   sha256sum | cut -c1-8)
IMAGE_STORE_FLAGS = --root $(abspath $(IMAGE_OUT))/storage \
		   --runroot $(IMAGE_RUNROOT) --storage-driver vfs
image: deb deps-fleet
	@IMAGE_RUNROOT=$(IMAGE_RUNROOT) ./mk/image.sh \
	    $$(ls -t $(abspath $(DEB_OUT))/cordon_*.deb | head -1) \
	    $(abspath $(IMAGE_OUT)) $(IMAGE_TAG)

fleet-check: image deps-tier $(BIN) $(TOOL_BINS)
	@echo "  LINT    tests/fleet/*.bats"
	$(Q)./mk/lint-bats.sh tests/fleet/*.bats
	@$(BATS_ENV) CORDON=$(abspath $(BIN)) IMAGE_TAG=$(IMAGE_TAG) \
	    TOOLS_DIR=$(abspath $(BUILD))/tests/tools \
	    IMAGE_STORE_FLAGS="$(IMAGE_STORE_FLAGS)" \
	    bats tests/fleet

clean:
	rm -rf build build-san build-fuzz $(BIN) $(MAIN) $(LOG_BIN) $(OFFLINE_BIN)

-include $(shell find build build-san -path build/image -prune -o \
    -name '*.d' -type f -print 2>/dev/null)
