# Cairn build.  `make` builds build/cairn-server; `make run` and `make test`
# install what is missing first (see scripts/deps.sh).
CC ?= gcc
BUILD := build
SANITIZE ?=
LUA ?= lua5.1
OPT ?= -O2
# `make run` and `make test` build with one job per CPU.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -Isrc -MMD -MP
LDLIBS := -lm -lpthread -llzf -luring -lxxhash
# Function names in crash reports and the watchdog's stack traces
# (backtrace_symbols_fd reads the dynamic symbol table).
LDFLAGS += -rdynamic
# Scripting engine: Debian's Lua 5.1 (default) or LuaJIT (`make LUA=luajit`).
# cjson (and bit, which LuaJIT has built in) are linked statically.
ifeq ($(LUA),luajit)
  LUA_CFLAGS := -I/usr/include/luajit-2.1 -DCAIRN_LUAJIT
  LUA_LIBS := -l:liblua5.1-cjson.a -lluajit-5.1
  BUILD := $(BUILD)-luajit
else
  LUA_CFLAGS := -I/usr/include/lua5.1
  LUA_LIBS := -l:liblua5.1-cjson.a -l:liblua5.1-bitop.a -llua5.1
endif
LDLIBS += $(LUA_LIBS)
# TLS with Debian's OpenSSL (libssl-dev), on by default; `make TLS=no`
# builds without it (the tls-* directives are then refused, as by a Redis
# whose TLS cannot be configured), in its own build directory.
TLS ?= yes
ifeq ($(TLS),yes)
  CFLAGS_BASE += -DCAIRN_TLS
  LDLIBS += -lssl -lcrypto
else
  BUILD := $(BUILD)-notls
endif
# A sanitizer report stops the program (UBSan would otherwise print a line
# and go on), so undefined behaviour fails the test that reached it.
ifneq ($(SANITIZE),)
  CFLAGS_BASE += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer -DCAIRN_SANITIZE
  LDFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
  BUILD := $(BUILD)-san
else
  LDLIBS += -ljemalloc
  CFLAGS_BASE += -DCAIRN_JEMALLOC
endif
CFLAGS += $(CFLAGS_BASE)

LIB_SRC := $(wildcard src/ds/*.c src/proto/*.c)
SRV_SRC := $(wildcard src/core/*.c src/db/*.c src/types/*.c src/server/*.c src/script/*.c src/persist/*.c src/repl/*.c src/module/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
SRV_OBJ := $(SRV_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all run test unit-test unit-bins bench fuzz clean deps test-deps install uninstall man modules FORCE
all: $(BUILD)/cairn-server $(BUILD)/cairn-check-aof $(BUILD)/cairn-check-rdb $(BUILD)/cairn-sentinel

# The web console's page (server/console.h), generated from src/server/console/.
CONSOLE_C := $(BUILD)/gen/console_gen.c
CONSOLE_OBJ := $(BUILD)/obj/gen/console_gen.o
$(CONSOLE_C): scripts/gen_console.sh $(wildcard src/server/console/*)
	@sh scripts/gen_console.sh $@
$(CONSOLE_OBJ): $(CONSOLE_C)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/cairn-server: $(LIB_OBJ) $(SRV_OBJ) $(CONSOLE_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@if [ "$(BUILD)" = build-san ]; then mkdir -p build; cp $@ build/cairn-server-san; fi

# cairn-check-aof, cairn-check-rdb and cairn-sentinel are the server binary
# under other names (main.c looks at argv[0]), so that they check files with the real
# loader; install copies them as files.
$(BUILD)/cairn-check-aof $(BUILD)/cairn-check-rdb $(BUILD)/cairn-sentinel: $(BUILD)/cairn-server
	ln -sf cairn-server $@

# The commit and build id --version and INFO report: the header is
# rewritten only when the commit or the dirty state change, so only
# buildinfo.o is rebuilt then.
BUILDINFO_H := $(BUILD)/gen/buildinfo_gen.h
$(BUILDINFO_H): FORCE
	@sh scripts/buildinfo.sh $@
$(BUILD)/obj/src/core/buildinfo.o: $(BUILDINFO_H)
$(BUILD)/obj/src/core/buildinfo.o: CFLAGS += -I$(BUILD)/gen
FORCE:

# Only src/script includes Lua headers.
$(BUILD)/obj/src/script/%.o: src/script/%.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) $(LUA_CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS) -lcmocka

# The Lua library tests link the script objects they test (and Lua).
LUA_LIBS_OBJ := $(addprefix $(BUILD)/obj/src/script/,lua_struct.o lua_cmsgpack.o lua_bitfix.o)
$(BUILD)/tests/test_lua_libs: tests/unit/test_lua_libs.c tests/unit/lua_libs_vectors.h $(LUA_LIBS_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -o $@ $< $(LUA_LIBS_OBJ) $(LIB_OBJ) $(LDLIBS) -lcmocka

# redis.call's reply sink against the RESP reader it replaced (links Lua).
$(BUILD)/tests/test_lua_reply: tests/unit/test_lua_reply.c $(BUILD)/obj/src/script/lua_reply.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -o $@ $< $(BUILD)/obj/src/script/lua_reply.o $(LIB_OBJ) $(LDLIBS) -lcmocka

# The tail-call rewrite (used by the LuaJIT engine) is plain C: tested in every build.
$(BUILD)/tests/test_tailcall: tests/unit/test_tailcall.c $(BUILD)/obj/src/script/tailcall.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/obj/src/script/tailcall.o $(LIB_OBJ) $(LDLIBS) -lcmocka

# The event loop (core, but it needs nothing of the server).
$(BUILD)/tests/test_event: tests/unit/test_event.c $(BUILD)/obj/src/core/event.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/obj/src/core/event.o $(LIB_OBJ) $(LDLIBS) -lcmocka

# The packed per-key record and the db paths that move it: the keyspace is a
# library over src/ds, so it links without the server.
DB_TEST_OBJ := $(addprefix $(BUILD)/obj/src/db/,object.o db.o lazyfree.o)
$(BUILD)/tests/test_object: tests/unit/test_object.c $(DB_TEST_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(DB_TEST_OBJ) $(LIB_OBJ) $(LDLIBS) -lcmocka
# The key tables by hash slot (cluster mode), the same library.
$(BUILD)/tests/test_db_slots: tests/unit/test_db_slots.c $(DB_TEST_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(DB_TEST_OBJ) $(LIB_OBJ) $(LDLIBS) -lcmocka

unit-bins: $(UNIT_BIN)

# Test modules (tests/modules/*.c), shared libraries built against Cairn's
# own src/module/redismodule.h; tests/integration/test_modules.py loads
# them into Cairn and into redis-server 7.0.15.
MODULE_SRC := $(wildcard tests/modules/*.c)
MODULE_SO := $(MODULE_SRC:tests/modules/%.c=build/modules/%.so)
modules: $(MODULE_SO)
build/modules/%.so: tests/modules/%.c src/module/redismodule.h
	@mkdir -p build/modules
	$(CC) -std=c11 -D_GNU_SOURCE -g -O2 -fPIC -shared -Wall -Wextra -Werror -Isrc/module -o $@ $<

unit-test: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done

deps:
	@sh scripts/deps.sh build

test-deps:
	@sh scripts/deps.sh test

run: deps
	$(MAKE) -j$(JOBS) all
	./$(BUILD)/cairn-server cairn.conf

test: test-deps
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) modules
	$(MAKE) -j$(JOBS) LUA=luajit all
	$(MAKE) -j$(JOBS) $(UNIT_BIN)
	$(MAKE) -j$(JOBS) SANITIZE=address,undefined OPT=-O1 all unit-bins
	@sh scripts/run-tests.sh

bench: test-deps all
	@sh bench/run.sh

# libFuzzer harnesses (RESP parser, listpack, the HTTP gateway's parser, RDB loader and RESTORE), then the command fuzzer
# (tests/fuzz/cmdfuzz.py) against the ASan/UBSan server, FUZZ_SECONDS each
# (FUZZ_SEED replays a command-fuzzer run).
fuzz:
	$(MAKE) SANITIZE=address,undefined OPT=-O1 all
	@mkdir -p build/fuzz/corpus build/fuzz/corpus_listpack
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
	  -o build/fuzz/fuzz_resp tests/fuzz/fuzz_resp.c src/proto/*.c src/ds/*.c -lm -llzf
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
	  -o build/fuzz/fuzz_listpack tests/fuzz/fuzz_listpack.c src/ds/*.c -lm -llzf
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
	  -o build/fuzz/fuzz_http tests/fuzz/fuzz_http.c src/proto/*.c src/ds/*.c -lm -llzf
	@# The RDB loader and RESTORE: the whole server but main().
	@mkdir -p build/fuzz/corpus_rdb
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -I$(BUILD)-san/gen $(LUA_CFLAGS) -DCAIRN_SANITIZE \
	  -fsanitize=fuzzer,address,undefined -o build/fuzz/fuzz_rdb tests/fuzz/fuzz_rdb.c \
	  $(filter-out src/core/main.c,$(LIB_SRC) $(SRV_SRC)) $(BUILD)-san/gen/console_gen.c -lm -lpthread -llzf -luring -lxxhash $(LUA_LIBS)
	./build/fuzz/fuzz_resp -max_total_time=$${FUZZ_SECONDS:-60} build/fuzz/corpus tests/fuzz/corpus
	./build/fuzz/fuzz_listpack -max_total_time=$${FUZZ_SECONDS:-60} build/fuzz/corpus_listpack tests/fuzz/corpus_listpack
	@mkdir -p build/fuzz/corpus_http
	./build/fuzz/fuzz_http -max_total_time=$${FUZZ_SECONDS:-60} build/fuzz/corpus_http
	./build/fuzz/fuzz_rdb -max_total_time=$${FUZZ_SECONDS:-60} -rss_limit_mb=4096 build/fuzz/corpus_rdb tests/fuzz/corpus_rdb
	python3 tests/fuzz/cmdfuzz.py --server build/cairn-server-san --seconds $${FUZZ_SECONDS:-60}

# --- install ---------------------------------------------------------------
# `make install [PREFIX=/usr/local] [DESTDIR=]`: the binaries into
# $(PREFIX)/bin (cairn-check-rdb and cairn-check-aof too when built), the
# man page, the systemd units into $(PREFIX)/lib/systemd/system (a path
# systemd searches), /etc/cairn/cairn.conf (never over an existing one),
# /etc/cairn/sentinel/sentinel.conf for cairn-sentinel.service (the same;
# its directory is the sentinel's to write: it rewrites that file), and
# the data and log directories.  Run as root without DESTDIR, it also
# creates the `cairn` system user that owns them.  `make uninstall` removes
# the same files, and the config only while it is the one installed; the
# data and log directories and the user stay.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
MANDIR := $(PREFIX)/share/man/man1
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR := /etc/cairn
DATADIR := /var/lib/cairn
LOGDIR := /var/log/cairn
TOOLS := cairn-server cairn-check-rdb cairn-check-aof cairn-sentinel
DIST := $(BUILD)/dist
UNITS := cairn.service cairn@.service cairn-sentinel.service
# LuaJIT's compiler writes machine code, which MemoryDenyWriteExecute forbids.
UNIT_SED := -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
ifeq ($(LUA),luajit)
  UNIT_SED += -e '/^MemoryDenyWriteExecute=/d'
endif

man: $(DIST)/cairn-server.1

$(DIST)/cairn-server.1: $(BUILD)/cairn-server scripts/mkman.sh
	@mkdir -p $(dir $@)
	sh scripts/mkman.sh $(BUILD)/cairn-server > $@.tmp && mv -f $@.tmp $@

# The installed config: cairn.conf with the service's paths.  The recipe
# fails if one of the lines it rewrites has changed in cairn.conf.
$(DIST)/cairn.conf: cairn.conf
	@mkdir -p $(dir $@)
	sed -e 's|^dir \./$$|dir $(DATADIR)|' \
	    -e 's|^logfile ""$$|logfile $(LOGDIR)/cairn-server.log|' \
	    -e 's|^# pidfile /var/run/cairn.pid$$|pidfile /run/cairn/cairn-server.pid|' cairn.conf > $@.tmp
	@grep -q '^dir $(DATADIR)$$' $@.tmp && grep -q '^logfile $(LOGDIR)/' $@.tmp && \
	  grep -q '^pidfile /run/cairn/' $@.tmp || { echo "cairn.conf: dir/logfile/pidfile lines not found" >&2; exit 1; }
	@mv -f $@.tmp $@

install: $(BUILD)/cairn-server $(DIST)/cairn-server.1 $(DIST)/cairn.conf
	@# Shared directories keep their mode when they exist (install -m would reset it).
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(UNITDIR)
	install -d -m 755 $(DESTDIR)$(SYSCONFDIR)
	@for t in $(TOOLS); do \
	  if [ -f $(BUILD)/$$t ]; then echo "install $(BUILD)/$$t $(DESTDIR)$(BINDIR)/$$t"; \
	    install -m 755 $(BUILD)/$$t $(DESTDIR)$(BINDIR)/$$t || exit 1; fi; \
	done
	install -m 644 $(DIST)/cairn-server.1 $(DESTDIR)$(MANDIR)/cairn-server.1
	@for u in $(UNITS); do \
	  echo "install dist/$$u.in $(DESTDIR)$(UNITDIR)/$$u"; \
	  sed $(UNIT_SED) dist/$$u.in > $(DESTDIR)$(UNITDIR)/$$u && chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && ! getent passwd cairn >/dev/null; then \
	  echo "useradd --system cairn"; \
	  useradd --system --user-group --home-dir $(DATADIR) --no-create-home \
	    --shell /usr/sbin/nologin --comment "Cairn server" cairn || exit 1; \
	fi
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/cairn.conf ]; then \
	  echo "keeping the existing $(DESTDIR)$(SYSCONFDIR)/cairn.conf"; \
	else \
	  echo "install $(DIST)/cairn.conf $(DESTDIR)$(SYSCONFDIR)/cairn.conf"; \
	  install -m 640 $(DIST)/cairn.conf $(DESTDIR)$(SYSCONFDIR)/cairn.conf || exit 1; \
	  if [ -z "$(DESTDIR)" ] && getent group cairn >/dev/null; then chgrp cairn $(SYSCONFDIR)/cairn.conf; fi; \
	fi
	install -d -m 750 $(DESTDIR)$(SYSCONFDIR)/sentinel
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf ]; then \
	  echo "keeping the existing $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf"; \
	else \
	  echo "install dist/sentinel.conf $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf"; \
	  install -m 640 dist/sentinel.conf $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf || exit 1; \
	fi
	install -d -m 750 $(DESTDIR)$(DATADIR) $(DESTDIR)$(LOGDIR)
	@if [ -z "$(DESTDIR)" ] && getent passwd cairn >/dev/null; then \
	  chown cairn:cairn $(DATADIR) $(LOGDIR) $(SYSCONFDIR)/sentinel $(SYSCONFDIR)/sentinel/sentinel.conf; fi

uninstall: $(DIST)/cairn.conf
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS)) $(DESTDIR)$(MANDIR)/cairn-server.1 \
	  $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	@if cmp -s $(DIST)/cairn.conf $(DESTDIR)$(SYSCONFDIR)/cairn.conf; then \
	  echo "rm -f $(DESTDIR)$(SYSCONFDIR)/cairn.conf"; rm -f $(DESTDIR)$(SYSCONFDIR)/cairn.conf; \
	  rmdir $(DESTDIR)$(SYSCONFDIR) 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/cairn.conf ]; then \
	  echo "keeping $(DESTDIR)$(SYSCONFDIR)/cairn.conf (changed since install)"; \
	fi
	@if cmp -s dist/sentinel.conf $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf; then \
	  echo "rm -f $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf"; rm -f $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf; \
	  rmdir $(DESTDIR)$(SYSCONFDIR)/sentinel $(DESTDIR)$(SYSCONFDIR) 2>/dev/null || true; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf ]; then \
	  echo "keeping $(DESTDIR)$(SYSCONFDIR)/sentinel/sentinel.conf (changed since install: Sentinel rewrites it)"; \
	fi
	@echo "kept: $(DESTDIR)$(DATADIR) and $(DESTDIR)$(LOGDIR) (data and logs) and the cairn user, if any"

clean:
	rm -rf build build-san build-luajit build-luajit-san build-notls

-include $(LIB_OBJ:.o=.d) $(SRV_OBJ:.o=.d)
