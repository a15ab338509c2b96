/* builder/cpio.c, builder/uki.c and attest/authenticode.c's PE parser:
 * the initramfs archive is sorted and fixed; a PE image cut anywhere in
 * its headers is refused, never read past; sections are appended where
 * firmware and systemd-stub expect them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/authenticode.h"
#include "builder/cpio.h"
#include "builder/uki.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/le.h"

#define STUB "/usr/lib/systemd/boot/efi/linuxx64.efi.stub"

static void test_cpio_sorted_fixed(void **state)
{
	struct cpio_entry v[] = {
		{ "lib/b.ko", S_IFREG | 0644, "bb", 2 }, { "init", S_IFREG | 0755, "#!", 2 },
		{ "lib", S_IFDIR | 0755, NULL, 0 },
	};
	_cleanup_strbuf_ struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(cpio_write(v, 3, 1700000000, &a, &e), 0);
	assert_string_equal(v[0].name, "init");
	assert_string_equal(v[2].name, "lib/b.ko");
	/* ino 1, mode 0100755, uid 0, gid 0, nlink 1, mtime, size 2 */
	assert_memory_equal(a.buf, "070701" "00000001" "000081ED" "00000000" "00000000" "00000001" "6553F100"
			    "00000002", 6 + 7 * 8);
	assert_int_equal(a.len % 4, 0);
	assert_non_null(memmem(a.buf, a.len, "TRAILER!!!", 11));
	assert_int_equal(cpio_write(v, 3, 1700000000, &b, &e), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
}

static void test_cpio_refusals(void **state)
{
	struct cpio_entry dup[] = { { "init", S_IFREG | 0755, "", 0 }, { "init", S_IFREG | 0755, "", 0 } };
	struct cpio_entry abs[] = { { "/init", S_IFREG | 0755, "", 0 } };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(cpio_write(dup, 2, 0, &out, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "init: expected one entry per path"));
	assert_int_equal(cpio_write(abs, 1, 0, &out, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "expected a relative path"));
}

static int load_stub(char **buf, size_t *len)
{
	ingot_error e = { 0 };
	return read_file(STUB, 1 << 24, buf, len, &e);
}

static void test_pe_truncated(void **state)
{
	_cleanup_free_ char *stub = NULL;
	struct pe_image pe;
	ingot_error e = { 0 };
	size_t len;
	(void)state;

	if (load_stub(&stub, &len) < 0)
		skip();
	assert_int_equal(pe_parse(stub, len, "stub", &pe, &e), 0);
	/* Every cut inside the headers is refused (ASan would catch a read
	 * past the copy). */
	for (size_t n = 0; n < pe.size_of_headers; n++) {
		char *cut = malloc(n + 1);
		struct pe_image p2;
		memcpy(cut, stub, n);
		assert_int_not_equal(pe_parse(cut, n, "cut", &p2, &e), 0);
		free(cut);
	}
	/* A section pointing past the end of the file is refused. */
	le_put((uint8_t *)stub + pe.sections_off + 20, len, 4);
	assert_int_equal(pe_parse(stub, len, "stub", &pe, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "expected its data inside the file"));
}

static void test_uki_layout(void **state)
{
	_cleanup_free_ char *stub = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	static const char big[5000];
	const struct uki_section s[] = { { ".osrel", "ID=x\n", 5 }, { ".linux", big, sizeof(big) } };
	struct pe_image in, pe;
	ingot_error e = { 0 };
	size_t len;
	(void)state;

	if (load_stub(&stub, &len) < 0)
		skip();
	assert_int_equal(pe_parse(stub, len, "stub", &in, &e), 0);
	assert_int_equal(uki_assemble(stub, len, s, 2, &out, &e), 0);
	assert_int_equal(pe_parse(out.buf, out.len, "uki", &pe, &e), 0);
	assert_int_equal(pe.nsections, in.nsections + 2);
	assert_string_equal(pe.sections[in.nsections].name, ".osrel");
	assert_int_equal(pe.sections[in.nsections].vaddr % UKI_VMA_ALIGN, 0);
	assert_int_equal(pe.sections[in.nsections].vsize, 5);
	assert_int_equal(pe.sections[in.nsections + 1].vaddr % UKI_VMA_ALIGN, 0);
	assert_true(pe.sections[in.nsections + 1].vaddr >= pe.sections[in.nsections].vaddr + 5);
	assert_memory_equal(out.buf + pe.sections[in.nsections].raw_off, "ID=x\n", 5);
	assert_true(pe.size_of_image >= pe.sections[in.nsections + 1].vaddr + sizeof(big));
	assert_int_equal(out.len % 8, 0);
	assert_int_equal(le_get((uint8_t *)out.buf + pe.checksum_off, 4),
			 pe_checksum((uint8_t *)out.buf, out.len, pe.checksum_off));
	/* The stub's trailing symbol table moved behind the new sections. */
	assert_true(pe.symtab_off > pe.sections[in.nsections + 1].raw_off);
	assert_memory_equal(out.buf + pe.symtab_off, stub + in.symtab_off, 18);
}

/* Hostile stubs: every header field the writer uses is checked before
 * use, so each is refused with one line (and under ASan, with no read or
 * write out of bounds; a huge FileAlignment would pad a byte at a time). */
static void expect_refused(const char *stub, size_t len, const char *want)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const struct uki_section s[] = { { ".osrel", "ID=x\n", 5 } };
	ingot_error e = { 0 };

	assert_int_equal(uki_assemble(stub, len, s, 1, &out, &e), -EINVAL);
	if (!strstr(e.msg, want))
		fail_msg("got \"%s\", expected \"%s\"", e.msg, want);
	assert_null(strchr(e.msg, '\n'));
}

static void test_uki_hostile_stub(void **state)
{
	_cleanup_free_ char *stub = NULL;
	struct pe_image pe;
	ingot_error e = { 0 };
	size_t len;
	(void)state;

	if (load_stub(&stub, &len) < 0)
		skip();
	assert_int_equal(pe_parse(stub, len, "stub", &pe, &e), 0);
	char *c = malloc(len);
	uint8_t *u = (uint8_t *)c;
	assert_non_null(c);

	memcpy(c, stub, len);   /* zero sections */
	le_put(u + pe.coff_off + 2, 0, 2);
	expect_refused(c, len, "expected sections with file data, got 0 sections");

	memcpy(c, stub, len);   /* sections without file data */
	for (unsigned i = 0; i < pe.nsections; i++)
		le_put(u + pe.sections_off + i * PE_SECTION_HEADER + 16, 0, 4);
	expect_refused(c, len, "none with data");

	memcpy(c, stub, len);
	le_put(u + pe.opt_off + 36, 0x80000000u, 4);
	expect_refused(c, len, "FileAlignment: expected a power of two from 512 to 65536, got 2147483648");

	memcpy(c, stub, len);
	le_put(u + pe.opt_off + 36, 0, 4);
	expect_refused(c, len, "FileAlignment");

	memcpy(c, stub, len);
	le_put(u + pe.opt_off + 36, 768, 4);
	expect_refused(c, len, "FileAlignment");

	memcpy(c, stub, len);   /* SectionAlignment below FileAlignment */
	le_put(u + pe.opt_off + 32, 256, 4);
	expect_refused(c, len, "SectionAlignment: expected a power of two of at least FileAlignment");

	memcpy(c, stub, len);   /* section data overlapping the headers */
	le_put(u + pe.sections_off + 20, 0, 4);
	expect_refused(c, len, "expected its data after the headers");
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpio_sorted_fixed),
		cmocka_unit_test(test_cpio_refusals),
		cmocka_unit_test(test_pe_truncated),
		cmocka_unit_test(test_uki_layout),
		cmocka_unit_test(test_uki_hostile_stub),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
