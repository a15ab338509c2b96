# ingot — see README.md.  `make` builds, `make demo` runs the main job on
# the bundled demo recipe, `make check` runs every test.
#
# BUILD selects the output directory, so several builds (plain, asan)
# can live side by side:  make BUILD=build-asan ...

BUILD    ?= build
PKGS     := libarchive libisal yaml-0.1 libsquashfs1 libcrypto tss2-esys tss2-tctildr tss2-mu tss2-rc jansson libmicrohttpd sqlite3 libcurl libsystemd libpq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
# the static init's libcrypto.a and what it needs (trixie's: zlib, zstd)
INIT_LIBS := $(or $(shell pkg-config --static --libs libcrypto 2>/dev/null),-lcrypto) -lpthread

CC       ?= cc
OPT      ?= -O2
CFLAGS   ?=
CFLAGS   += -std=c11 -Wall -Wextra -Werror $(OPT) -D_GNU_SOURCE -I. $(PKG_CFLAGS)
LDFLAGS  ?=
LIBS     := $(PKG_LIBS) -lpthread

PARTS    := lib manifest attest recipes keys image builder verify ops audit server
LIB_SRC  := $(foreach p,$(PARTS),$(wildcard $(p)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
# ar(1) keys archive members by basename: two parts with a file of the
# same name would silently replace each other inside libingot.a.
DUP_BASE := $(shell printf '%s\n' $(notdir $(LIB_SRC)) | sort | uniq -d)
ifneq ($(DUP_BASE),)
$(error duplicate source basenames across parts (ar would drop one): $(DUP_BASE))
endif
CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)

PREFIX   ?= /usr/local
DESTDIR  ?=

.PHONY: all deps demo demo-run demo-artifacts check check-run unit e2e asan \
        bench fuzz install man clean boot-image boot-test real-image real-boot-test \
        real-repro-test real-repro-image-test real-bench print-pkgs

all: $(BUILD)/ingot $(BUILD)/ingot-init $(BUILD)/ingot-test-init $(UNIT_BIN) $(TOOL_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/libingot.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/ingot: $(CLI_OBJ) $(BUILD)/libingot.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libingot.a $(LIBS)

# The initramfs /init of boot images: static, it runs before any library
# is reachable (boot/init.c).  Always -O2: sanitizers (make asan's OPT)
# cannot link statically, and the UKI pins its bytes.
$(BUILD)/ingot-init: boot/init.c boot/bootlib.c boot/bootlib.h lib/boot-contract.h
	@mkdir -p $(dir $@)
	@# libcrypto.a's unused dlopen/getaddrinfo paths make ld warn; keep
	@# its output only when the link fails.
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -I. -DBOOT_PROG='"ingot-init"' -static -o $@ boot/init.c boot/bootlib.c $(INIT_LIBS) \
	  2>$@.log || { cat $@.log >&2; rm -f $@; exit 1; }

# The boot test image's /sbin/init (tests/boot/test-init.c): static like
# ingot-init, never part of a production UKI.
$(BUILD)/ingot-test-init: tests/boot/test-init.c boot/bootlib.c boot/bootlib.h lib/boot-contract.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE -I. -DBOOT_PROG='"ingot-test-init"' -static -o $@ \
	  tests/boot/test-init.c boot/bootlib.c -lcrypto -lpthread 2>$@.log || { cat $@.log >&2; rm -f $@; exit 1; }

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libingot.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(BUILD)/libingot.a $(LIBS) $(CMOCKA_LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(BUILD)/libingot.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< $(BUILD)/libingot.a $(LIBS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Installs missing Debian packages when root, else prints the apt line.
deps:
	@scripts/deps.sh

demo-artifacts: all
	@scripts/gen-artifacts.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory demo-run

demo-run: all demo-artifacts
	@scripts/demo.sh $(BUILD)

check: deps
	@$(MAKE) --no-print-directory check-run

check-run: all
	@tests/run.sh $(BUILD)

unit: all
	@tests/run.sh $(BUILD) unit

e2e: all
	@tests/run.sh $(BUILD) e2e

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan \
	  OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" check-run

# A bootable variant of the demo (UKI, image, verity, signed manifest) in
# out/boot/, and a real measured boot of it under QEMU + OVMF + swtpm.
boot-image: deps
	@$(MAKE) --no-print-directory all
	@scripts/boot-image.sh $(BUILD) out/boot

boot-test: boot-image
	@scripts/boot-test.sh $(BUILD) out/boot

# The real golden images from Debian's NVIDIA and AMD packages, one per pool
# under recipes/real/ (docs/real-image.md; INGOT_REAL_POOLS picks them):
# downloads, build chroot, modules and root filesystem are cached in
# $(INGOT_REAL_CACHE) (default /var/cache/ingot-real), outside the clone.
real-image: deps
	@$(MAKE) --no-print-directory all
	@scripts/real-image.sh $(BUILD) out/real

# Its production boot to systemd under QEMU + OVMF + swtpm, judged on the host.
real-boot-test: real-image
	@scripts/real-boot-test.sh $(BUILD) out/real

# Modules built twice in two directories, the image built twice under
# another umask, zone, locale and path: the same bytes.
real-repro-test: deps
	@$(MAKE) --no-print-directory all
	@scripts/real-image.sh --check $(BUILD) out/real

# Only the image built twice (CI: the module build is the slow half), the
# NVIDIA pool's unless INGOT_REAL_POOLS names others (CI time: the AMD
# image twice is about 3 more minutes, docs/real-image.md "Timings").
real-repro-image-test: deps
	@$(MAKE) --no-print-directory all
	@INGOT_REAL_POOLS="$(or $(INGOT_REAL_POOLS),nvidia-h100)" scripts/real-image.sh --check-image $(BUILD) out/real

# ingot build of the real image against mksquashfs + veritysetup +
# sha256sum + openssl on the same tree (after make real-image).
real-bench:
	@$(MAKE) --no-print-directory all
	@scripts/real-bench.sh $(BUILD) out/real

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(BUILD)

FUZZ_SECONDS ?= 30
fuzz: deps
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

# The pkg-config modules ingot links (tests/fuzz/run.sh builds with them too).
print-pkgs:
	@echo $(PKGS)

# The manual pages are generated from the --help texts and committed
# (docs/man/); tests/e2e/test-man.sh fails when they are stale.
man: $(BUILD)/ingot
	scripts/gen-man.py $(BUILD)/ingot docs/man

install: $(BUILD)/ingot
	install -D -m 0755 $(BUILD)/ingot $(DESTDIR)$(PREFIX)/bin/ingot
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/ingot/rules
	install -m 0644 recipes/rules/*.yaml $(DESTDIR)$(PREFIX)/share/ingot/rules/
	@if [ -f verify/boot/install.sh ]; then verify/boot/install.sh "$(DESTDIR)" "$(PREFIX)"; fi

clean:
	rm -rf build build-*
