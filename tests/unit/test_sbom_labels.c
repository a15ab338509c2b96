/* The SBOM's labels from Debian metadata: DEP-5 copyright licenses as
 * SPDX expressions (NOASSERTION whenever the mapping is not exact) and
 * one-line control fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "builder/deb.h"
#include "builder/dep5.h"

static const char *lic(const char *text)
{
	static char out[DEP5_LICENSE_MAX];
	dep5_license(text, strlen(text), out);
	return out;
}

#define HDR "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: x\n\n"

static void test_dep5(void **state)
{
	(void)state;
	assert_string_equal(lic(HDR "Files: *\nCopyright: 2020 A\nLicense: Expat\n"), "MIT");
	assert_string_equal(lic(HDR "Files: debian/*\nLicense: GPL-2+\n\nFiles: *\nLicense: BSD-3-clause\n"),
			    "BSD-3-Clause");
	assert_string_equal(lic(HDR "Files: *\r\nLicense: GPL-2+ or Apache-2.0\r\n"),
			    "GPL-2.0-or-later OR Apache-2.0");
	assert_string_equal(lic(HDR "Files: *\nLicense: LGPL-2.1 and MIT\n License text...\n"),
			    "LGPL-2.1-only AND MIT");
	/* not exact: an unknown name, a dangling operator, an exception, no
	 * Files: * paragraph, no DEP-5 header at all */
	assert_string_equal(lic(HDR "Files: *\nLicense: NVIDIA-proprietary\n"), "NOASSERTION");
	assert_string_equal(lic(HDR "Files: *\nLicense: MIT or\n"), "NOASSERTION");
	assert_string_equal(lic(HDR "Files: *\nLicense: GPL-2+ with OpenSSL exception\n"), "NOASSERTION");
	assert_string_equal(lic(HDR "Files: src/*\nLicense: MIT\n"), "NOASSERTION");
	assert_string_equal(lic("This package was debianized by X.\nLicense: MIT\n"), "NOASSERTION");
	assert_string_equal(lic(""), "NOASSERTION");
	/* a License: in a later paragraph is not the Files: * one */
	assert_string_equal(lic(HDR "Files: *\nCopyright: A\n\nLicense: MIT\n"), "NOASSERTION");
}

static void test_control_field(void **state)
{
	const char ctl[] = "Package: nvidia-x\nVersion: 1.0-1\nArchitecture: amd64 \r\n"
			   "Maintainer: A Team <a@example.invalid>\nDescription: x\n";
	char out[64];

	(void)state;
	assert_int_equal(deb_control_field(ctl, "Package", out, sizeof(out)), 1);
	assert_string_equal(out, "nvidia-x");
	assert_int_equal(deb_control_field(ctl, "Architecture", out, sizeof(out)), 1);
	assert_string_equal(out, "amd64");
	assert_int_equal(deb_control_field(ctl, "Maintainer", out, sizeof(out)), 1);
	assert_string_equal(out, "A Team <a@example.invalid>");
	assert_int_equal(deb_control_field(ctl, "Homepage", out, sizeof(out)), 0);
	assert_int_equal(deb_control_field(ctl, "Maintainer", out, 8), -EINVAL);        /* too long */
	assert_int_equal(deb_control_field("Package:  \n", "Package", out, sizeof(out)), -EINVAL);
	assert_int_equal(deb_control_field("Package: a\x1b[31m\n", "Package", out, sizeof(out)), -EINVAL);
	/* the field name is whole: "Pack" is not "Package" */
	assert_int_equal(deb_control_field(ctl, "Pack", out, sizeof(out)), 0);
	assert_string_equal(ctl, "Package: nvidia-x\nVersion: 1.0-1\nArchitecture: amd64 \r\n"
			    "Maintainer: A Team <a@example.invalid>\nDescription: x\n");   /* untouched */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dep5),
		cmocka_unit_test(test_control_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
