# Cairn build.  `make` builds build/cairn-server; `make run` and `make test`
# install what is missing first (see scripts/deps.sh).
CC ?= gcc
BUILD := build
SANITIZE ?=
LUA ?= lua5.1
OPT ?= -O2

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) -Isrc -MMD -MP
LDLIBS := -lm -lpthread -llzf -luring
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
ifneq ($(SANITIZE),)
  CFLAGS_BASE += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -DCAIRN_SANITIZE
  LDFLAGS += -fsanitize=$(SANITIZE)
  BUILD := $(BUILD)-san
else
  LDLIBS += -ljemalloc
  CFLAGS_BASE += -DCAIRN_JEMALLOC
endif
CFLAGS += $(CFLAGS_BASE)

LIB_SRC := $(wildcard src/ds/*.c src/proto/*.c)
SRV_SRC := $(wildcard src/core/*.c src/db/*.c src/types/*.c src/server/*.c src/script/*.c)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
SRV_OBJ := $(SRV_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all run test unit-test unit-bins bench fuzz clean deps test-deps
all: $(BUILD)/cairn-server

$(BUILD)/cairn-server: $(LIB_OBJ) $(SRV_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@if [ "$(BUILD)" = build-san ]; then mkdir -p build; cp $@ build/cairn-server-san; fi

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

# The tail-call rewrite (used by the LuaJIT engine) is plain C: tested in every build.
$(BUILD)/tests/test_tailcall: tests/unit/test_tailcall.c $(BUILD)/obj/src/script/tailcall.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/obj/src/script/tailcall.o $(LIB_OBJ) $(LDLIBS) -lcmocka

unit-bins: $(UNIT_BIN)

unit-test: $(UNIT_BIN)
	@for t in $(UNIT_BIN); do echo "== $$t"; $$t || exit 1; done

deps:
	@sh scripts/deps.sh build

test-deps:
	@sh scripts/deps.sh test

run: deps
	$(MAKE) all
	./$(BUILD)/cairn-server cairn.conf

test: test-deps
	$(MAKE) all
	$(MAKE) LUA=luajit all
	$(MAKE) $(UNIT_BIN)
	$(MAKE) SANITIZE=address,undefined OPT=-O1 all unit-bins
	@sh scripts/run-tests.sh

bench: test-deps all
	@sh bench/run.sh

fuzz:
	@mkdir -p build/fuzz/corpus build/fuzz/corpus_listpack
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
	  -o build/fuzz/fuzz_resp tests/fuzz/fuzz_resp.c src/proto/*.c src/ds/*.c -lm -llzf
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
	  -o build/fuzz/fuzz_listpack tests/fuzz/fuzz_listpack.c src/ds/*.c -lm -llzf
	./build/fuzz/fuzz_resp -max_total_time=$${FUZZ_SECONDS:-60} build/fuzz/corpus tests/fuzz/corpus
	./build/fuzz/fuzz_listpack -max_total_time=$${FUZZ_SECONDS:-60} build/fuzz/corpus_listpack tests/fuzz/corpus_listpack

clean:
	rm -rf build build-san build-luajit build-luajit-san

-include $(LIB_OBJ:.o=.d) $(SRV_OBJ:.o=.d)
