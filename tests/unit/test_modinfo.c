/* Units for lib/modinfo: mkart.py's .ko files read by lib/modinfo agree
 * with kmod's `modinfo -F` (skipped when kmod or python3 is missing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/modinfo.h"
#include "helpers.h"

struct fixture { char dir[64]; };

/* First line of a command's output, "" on failure. */
static void capture(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	out[0] = '\0';
	if (!p)
		return;
	if (!fgets(out, (int)n, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

static const char *modinfo_tool(void)
{
	static const char *const c[] = { "/usr/sbin/modinfo", "/sbin/modinfo", "/usr/bin/modinfo" };
	for (size_t i = 0; i < 3; i++)
		if (access(c[i], X_OK) == 0)
			return c[i];
	return NULL;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f || th_mkdtemp(f->dir, sizeof(f->dir), "modinfo") < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = th_rmtree(f->dir);
	free(f);
	return r;
}

static void make_ko(struct fixture *f, const char *name, const char *args)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "python3 scripts/mkart.py ko --out '%s/%s' %s", f->dir, name, args);
	assert_int_equal(th_run(cmd), 0);
}

static void test_agrees_with_kmod(void **state)
{
	static const struct { const char *args, *version, *license; } cases[] = {
		{ "--name nvidia --version 580.95.05 --flavor open", "580.95.05", "Dual MIT/GPL" },
		{ "--name nvidia --version 580.95.05 --flavor proprietary", "580.95.05", "NVIDIA" },
		{ "--name nvidia --version 595.91.07", "595.91.07", "Dual MIT/GPL" },
		{ "--name amdgpu --version 6.16.6 --license 'GPL and additional rights'", "6.16.6",
		  "GPL and additional rights" },
	};
	struct fixture *f = *state;
	const char *tool = modinfo_tool();

	if (!tool)
		skip();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[128], cmd[256], kv[128], kl[128];
		struct modinfo mi;
		ingot_error e = { 0 };

		make_ko(f, "m.ko", cases[i].args);
		snprintf(path, sizeof(path), "%s/m.ko", f->dir);
		assert_int_equal(modinfo_load(path, &mi, &e), 0);
		snprintf(cmd, sizeof(cmd), "%s -F version '%s'", tool, path);
		capture(cmd, kv, sizeof(kv));
		snprintf(cmd, sizeof(cmd), "%s -F license '%s'", tool, path);
		capture(cmd, kl, sizeof(kl));
		assert_string_equal(kv, cases[i].version);
		assert_string_equal(modinfo_get(&mi, "version"), kv);
		assert_string_equal(kl, cases[i].license);
		assert_string_equal(modinfo_get(&mi, "license"), kl);
		modinfo_free(&mi);
	}
}

static void test_fields_and_repeats(void **state)
{
	struct fixture *f = *state;
	char path[128];
	struct modinfo mi;
	size_t firmware = 0;
	ingot_error e = { 0 };

	make_ko(f, "n.ko", "--name nvidia --version 580.95.05 --flavor open --field parm=NVreg_X:int");
	snprintf(path, sizeof(path), "%s/n.ko", f->dir);
	assert_int_equal(modinfo_load(path, &mi, &e), 0);
	assert_string_equal(modinfo_get(&mi, "name"), "nvidia");
	assert_string_equal(modinfo_get(&mi, "parm"), "NVreg_X:int");
	assert_string_equal(modinfo_get(&mi, "depends"), "");
	assert_null(modinfo_get(&mi, "nonexistent"));
	for (size_t i = 0; i < mi.n; i++)
		firmware += !strcmp(mi.keys[i], "firmware");
	assert_int_equal(firmware, 2);
	modinfo_free(&mi);
}

static void test_compressed(void **state)
{
	struct fixture *f = *state;
	char path[128], cmd[256];
	struct modinfo mi;
	ingot_error e = { 0 };

	make_ko(f, "c.ko", "--name nvidia --version 580.105.08");
	snprintf(cmd, sizeof(cmd), "xz -k '%s/c.ko' && zstd -q '%s/c.ko' -o '%s/c.ko.zst' 2>/dev/null",
		 f->dir, f->dir, f->dir);
	if (th_run(cmd) != 0)
		skip();
	snprintf(path, sizeof(path), "%s/c.ko.xz", f->dir);
	assert_int_equal(modinfo_load(path, &mi, &e), 0);
	assert_string_equal(modinfo_get(&mi, "version"), "580.105.08");
	modinfo_free(&mi);
	snprintf(path, sizeof(path), "%s/c.ko.zst", f->dir);
	assert_int_equal(modinfo_load(path, &mi, &e), 0);
	assert_string_equal(modinfo_get(&mi, "version"), "580.105.08");
	modinfo_free(&mi);
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;
	char path[128], cmd[256];
	struct modinfo mi;
	ingot_error e = { 0 };
	uint8_t hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	_cleanup_free_ char *buf = NULL;
	size_t len;

	(void)f;
	assert_int_equal(modinfo_parse("hello", 5, "x.ko", &mi, &e), -EINVAL);
	assert_string_equal(e.msg, "x.ko: not an ELF file (no \\177ELF magic)");
	/* section table far outside the file */
	hdr[40] = 0xff; hdr[41] = 0xff; hdr[58] = 64; hdr[60] = 3; hdr[62] = 1;
	assert_int_equal(modinfo_parse(hdr, sizeof(hdr), "t.ko", &mi, &e), -EINVAL);
	assert_string_equal(e.msg, "t.ko: section header table at offset 65535 (+192 bytes) lies beyond the end of the file");
	/* a shared object has no .modinfo */
	snprintf(cmd, sizeof(cmd), "python3 scripts/mkart.py so --out '%s/l.so' --soname l.so.1", f->dir);
	assert_int_equal(th_run(cmd), 0);
	snprintf(path, sizeof(path), "%s/l.so", f->dir);
	assert_int_equal(read_file(path, 1 << 20, &buf, &len, &e), 0);
	assert_int_equal(modinfo_parse(buf, len, "l.so", &mi, &e), -ENOENT);
	assert_string_equal(e.msg, "l.so: no .modinfo section: not a kernel module");
	/* every truncation of a valid module fails cleanly or parses */
	make_ko(f, "v.ko", "--version 1.2.3");
	snprintf(path, sizeof(path), "%s/v.ko", f->dir);
	free(buf);
	buf = NULL;
	assert_int_equal(read_file(path, 1 << 20, &buf, &len, &e), 0);
	for (size_t cut = 0; cut < len; cut += 7) {
		if (modinfo_parse(buf, cut, "v.ko", &mi, &e) == 0)
			modinfo_free(&mi);
	}
}

/* A hand-made ELF32 module (either byte order): class 1 and big-endian
 * layouts go through the same reader. */
static void put(uint8_t *p, size_t n, uint32_t v, bool be)
{
	for (size_t i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static size_t make_elf32(uint8_t *b, bool be)
{
	static const char info[] = "version=1.2.3\0license=GPL\0noequals\0";
	static const char shstr[] = "\0.modinfo\0.shstrtab";
	size_t info_off = 52, str_off = info_off + sizeof(info), sh = 128;

	memset(b, 0, 256);
	memcpy(b, "\177ELF", 4);
	b[4] = 1;                      /* ELFCLASS32 */
	b[5] = be ? 2 : 1;
	b[6] = 1;
	put(b + 16, 2, 1, be);         /* ET_REL */
	put(b + 32, 4, (uint32_t)sh, be);
	put(b + 46, 2, 40, be);        /* e_shentsize */
	put(b + 48, 2, 3, be);         /* e_shnum */
	put(b + 50, 2, 2, be);         /* e_shstrndx */
	memcpy(b + info_off, info, sizeof(info));
	memcpy(b + str_off, shstr, sizeof(shstr));
	/* section 1: .modinfo (name offset 1), section 2: .shstrtab (offset 10) */
	put(b + sh + 40, 4, 1, be);
	put(b + sh + 40 + 16, 4, (uint32_t)info_off, be);
	put(b + sh + 40 + 20, 4, sizeof(info), be);
	put(b + sh + 80, 4, 10, be);
	put(b + sh + 80 + 16, 4, (uint32_t)str_off, be);
	put(b + sh + 80 + 20, 4, sizeof(shstr), be);
	return sh + 120;
}

static void test_elf32_both_orders(void **state)
{
	uint8_t b[256];
	(void)state;
	for (int be = 0; be < 2; be++) {
		struct modinfo mi;
		ingot_error e = { 0 };
		size_t len = make_elf32(b, be);
		assert_int_equal(modinfo_parse(b, len, "m32.ko", &mi, &e), 0);
		assert_int_equal(mi.n, 2);       /* "noequals" is skipped, like kmod */
		assert_string_equal(modinfo_get(&mi, "version"), "1.2.3");
		assert_string_equal(modinfo_get(&mi, "license"), "GPL");
		modinfo_free(&mi);
	}
}

/* An ELF64 module whose header is followed by gap bytes of zeros, then
 * .modinfo (when with_info), the section names and the section table:
 * the layout of a real module, stretched.  Returns the table's offset. */
static uint64_t make_stretched(const char *path, uint64_t gap, bool with_info)
{
	static const char info[] = "version=595.91.07\0license=Dual MIT/GPL\0";
	static const char names[] = "\0.modinfo\0.shstrtab\0.text";
	uint8_t hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 }, sh[4 * 64] = { 0 };
	uint64_t info_off = 64 + gap, names_off = info_off + sizeof(info);
	uint64_t sh_off = names_off + sizeof(names);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	put(hdr + 16, 2, 1, false);                 /* ET_REL */
	put(hdr + 40, 4, (uint32_t)sh_off, false);  /* e_shoff (< 4 GiB here) */
	put(hdr + 44, 4, (uint32_t)(sh_off >> 32), false);
	put(hdr + 58, 2, 64, false);
	put(hdr + 60, 2, 4, false);
	put(hdr + 62, 2, 2, false);                 /* .shstrtab */
	/* 1: .modinfo (or .text when without), 2: .shstrtab, 3: .text */
	put(sh + 64, 4, with_info ? 1 : 20, false);
	put(sh + 64 + 24, 4, (uint32_t)info_off, false);
	put(sh + 64 + 28, 4, (uint32_t)(info_off >> 32), false);
	put(sh + 64 + 32, 4, sizeof(info), false);
	put(sh + 128, 4, 10, false);
	put(sh + 128 + 24, 4, (uint32_t)names_off, false);
	put(sh + 128 + 28, 4, (uint32_t)(names_off >> 32), false);
	put(sh + 128 + 32, 4, sizeof(names), false);
	put(sh + 192, 4, 20, false);
	put(sh + 192 + 24, 4, 64, false);
	put(sh + 192 + 32, 4, (uint32_t)gap, false);
	assert_int_equal(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	assert_int_equal(pwrite(fd, info, sizeof(info), (off_t)info_off), (ssize_t)sizeof(info));
	assert_int_equal(pwrite(fd, names, sizeof(names), (off_t)names_off), (ssize_t)sizeof(names));
	assert_int_equal(pwrite(fd, sh, sizeof(sh), (off_t)sh_off), (ssize_t)sizeof(sh));
	close(fd);
	return sh_off;   /* where the section table starts */
}

static long maxrss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A zstd bomb: a few hundred KiB that decompress to a 256 MiB module with
 * .modinfo at the end (or none).  Read in bounded memory: the peak RSS
 * grows by far less than the module (the whole-module reader took it all). */
static void test_bounded_memory(void **state)
{
	struct fixture *f = *state;
	char plain[128], zst[128], cmd[512], kmod[64];
	struct modinfo mi;
	ingot_error e = { 0 };
	const uint64_t gap = (uint64_t)256 << 20;

	snprintf(plain, sizeof(plain), "%s/bomb.ko", f->dir);
	snprintf(zst, sizeof(zst), "%s/bomb.ko.zst", f->dir);
	make_stretched(plain, gap, true);
	snprintf(cmd, sizeof(cmd), "zstd -q -1 -f '%s' -o '%s'", plain, zst);
	if (th_run(cmd) != 0)
		skip();
	/* kmod reads the stretched module as we do. */
	if (modinfo_tool()) {
		snprintf(cmd, sizeof(cmd), "%s -F version '%s'", modinfo_tool(), plain);
		capture(cmd, kmod, sizeof(kmod));
		assert_string_equal(kmod, "595.91.07");
	}
	long before = maxrss_kib();
	assert_int_equal(modinfo_load(zst, &mi, &e), 0);
	assert_string_equal(modinfo_get(&mi, "version"), "595.91.07");
	assert_string_equal(modinfo_get(&mi, "license"), "Dual MIT/GPL");
	modinfo_free(&mi);
	assert_int_equal(modinfo_load(plain, &mi, &e), 0);
	assert_string_equal(modinfo_get(&mi, "version"), "595.91.07");
	modinfo_free(&mi);

	/* No .modinfo at all: a clean refusal, still bounded. */
	make_stretched(plain, gap, false);
	snprintf(cmd, sizeof(cmd), "zstd -q -1 -f '%s' -o '%s'", plain, zst);
	assert_int_equal(th_run(cmd), 0);
	assert_int_equal(modinfo_load(zst, &mi, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "bomb.ko.zst: no .modinfo section: not a kernel module"));
	assert_true(maxrss_kib() - before < 16 * 1024);
	unlink(plain);
	unlink(zst);
}

/* Offsets and sizes past the caps are refused before anything is read. */
static void test_caps(void **state)
{
	struct fixture *f = *state;
	char path[128];
	struct modinfo mi;
	ingot_error e = { 0 };
	uint8_t hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	int fd;

	snprintf(path, sizeof(path), "%s/far.ko", f->dir);
	put(hdr + 44, 4, 2, false);                 /* e_shoff = 8 GiB */
	put(hdr + 58, 2, 64, false);
	put(hdr + 60, 2, 3, false);
	put(hdr + 62, 2, 1, false);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	close(fd);
	assert_int_equal(modinfo_load(path, &mi, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "far.ko: section header table at offset 8589934592"));
	assert_non_null(strstr(e.msg, "beyond the 1073741824-byte limit on modules"));

	/* A .modinfo claiming 64 MiB. */
	snprintf(path, sizeof(path), "%s/fat.ko", f->dir);
	uint64_t sh_off = make_stretched(path, 4096, true);
	fd = open(path, O_WRONLY);
	uint8_t size[4];
	put(size, 4, 64u << 20, false);
	assert_int_equal(pwrite(fd, size, 4, (off_t)(sh_off + 64 + 32)), 4);   /* sh[1].sh_size */
	close(fd);
	assert_int_equal(modinfo_load(path, &mi, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "fat.ko: .modinfo section of 67108864 bytes: more than the 1048576"));

	/* A table past the end of a short file. */
	snprintf(path, sizeof(path), "%s/short.ko", f->dir);
	put(hdr + 40, 4, 4096, false);
	put(hdr + 44, 4, 0, false);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	close(fd);
	assert_int_equal(modinfo_load(path, &mi, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "short.ko: section header table at offset 4096 (+192 bytes) lies beyond the end of the file"));
}

/* The release a vmlinuz's setup header names, as `file` and uname -r
 * show it; anything short of a whole header and string is no release. */
static void test_release(void **state)
{
	static const char banner[] = "6.1.0-40-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.153-1";
	uint8_t img[0x400] = { 0 };
	char rel[72], big[100];
	(void)state;

	memcpy(img + 0x202, "HdrS", 4);
	put(img + 0x206, 2, 0x020f, false);        /* boot protocol 2.15 */
	put(img + 0x20e, 2, 0x100, false);         /* string at 0x300 */
	memcpy(img + 0x300, banner, sizeof(banner));
	assert_int_equal(bzimage_release(img, sizeof(img), rel, sizeof(rel)), 0);
	assert_string_equal(rel, "6.1.0-40-amd64");
	assert_int_equal(bzimage_release(img, sizeof(img), rel, 10), -ENOENT);   /* no room */
	assert_int_equal(bzimage_release(img, 0x300, rel, sizeof(rel)), -ENOENT); /* string cut off */
	assert_int_equal(bzimage_release(img, 0x310, rel, sizeof(rel)), -ENOENT); /* no NUL in the buffer */
	assert_int_equal(bzimage_release(img, 0x200, rel, sizeof(rel)), -ENOENT); /* no header */
	put(img + 0x206, 2, 0x01ff, false);
	assert_int_equal(bzimage_release(img, sizeof(img), rel, sizeof(rel)), -ENOENT);
	put(img + 0x206, 2, 0x020f, false);
	img[0x301] = 0x1b;                          /* not a release's character */
	assert_int_equal(bzimage_release(img, sizeof(img), rel, sizeof(rel)), -ENOENT);
	img[0x301] = '.';
	put(img + 0x20e, 2, 0, false);              /* no kernel_version */
	assert_int_equal(bzimage_release(img, sizeof(img), rel, sizeof(rel)), -ENOENT);
	memcpy(img + 0x202, "HdrX", 4);
	put(img + 0x20e, 2, 0x100, false);
	assert_int_equal(bzimage_release(img, sizeof(img), rel, sizeof(rel)), -ENOENT);

	assert_int_equal(modinfo_vermagic_release("6.12.38+deb13-amd64 SMP preempt mod_unload modversions ", rel,
						  sizeof(rel)), 0);
	assert_string_equal(rel, "6.12.38+deb13-amd64");
	assert_int_equal(modinfo_vermagic_release("6.1.0-t", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "6.1.0-t");
	assert_int_equal(modinfo_vermagic_release("", rel, sizeof(rel)), -EINVAL);
	assert_int_equal(modinfo_vermagic_release(" SMP", rel, sizeof(rel)), -EINVAL);
	assert_int_equal(modinfo_vermagic_release(NULL, rel, sizeof(rel)), -EINVAL);
	assert_int_equal(modinfo_vermagic_release("6.1/x SMP", rel, sizeof(rel)), -EINVAL);
	memset(big, 'a', 65);
	big[65] = '\0';
	assert_int_equal(modinfo_vermagic_release(big, rel, sizeof(rel)), -EINVAL);   /* over 64 bytes */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agrees_with_kmod),
		cmocka_unit_test(test_fields_and_repeats),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_elf32_both_orders),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_release),
	};
	return cmocka_run_group_tests_name("modinfo", tests, setup, teardown);
}
