/* The SBOM's labels from Debian metadata: DEP-5 copyright licenses as
 * SPDX expressions (NOASSERTION whenever the mapping is not exact, a
 * LicenseRef with its text for a name SPDX has no id for) and
 * one-line control fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "builder/deb.h"
#include "builder/dep5.h"

static const char *lic(const char *text)
{
	static struct dep5_license l;
	dep5_license_free(&l);
	dep5_license(text, strlen(text), &l);
	return l.expr;
}

#define HDR "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: x\n\n"
#define FILES(name) HDR "Files: *\nCopyright: 2020 A\nLicense: " name "\n"

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
	/* not exact: a dangling operator, no Files: * paragraph, no DEP-5
	 * header at all, an unknown name without its text */
	assert_string_equal(lic(HDR "Files: *\nLicense: NVIDIA-proprietary\n"), "NOASSERTION");
	assert_string_equal(lic(HDR "Files: *\nLicense: MIT or\n"), "NOASSERTION");
	assert_string_equal(lic(HDR "Files: src/*\nLicense: MIT\n"), "NOASSERTION");
	assert_string_equal(lic("This package was debianized by X.\nLicense: MIT\n"), "NOASSERTION");
	assert_string_equal(lic(""), "NOASSERTION");
	/* a License: in a later paragraph is not the Files: * one */
	assert_string_equal(lic(HDR "Files: *\nCopyright: A\n\nLicense: MIT\n"), "NOASSERTION");
}

/* DEP-5's standard short names, with versions, "+" and exceptions. */
static void test_dep5_names(void **state)
{
	static const char *const map[][2] = {
		{ "LGPL-2+", "LGPL-2.0-or-later" },   { "LGPL-2", "LGPL-2.0-only" },
		{ "LGPL-2.0+", "LGPL-2.0-or-later" }, { "LGPL-2.1+", "LGPL-2.1-or-later" },
		{ "lgpl-3+", "LGPL-3.0-or-later" },   { "GPL-1+", "GPL-1.0-or-later" },
		{ "GPL-2", "GPL-2.0-only" },          { "GPL-2+", "GPL-2.0-or-later" },
		{ "GPL-3.0", "GPL-3.0-only" },        { "Expat", "MIT" },
		{ "BSD-2-clause", "BSD-2-Clause" },   { "BSD-3-Clause", "BSD-3-Clause" },
		{ "BSD-4-clause", "BSD-4-Clause" },   { "ISC", "ISC" },
		{ "Apache-2.0", "Apache-2.0" },       { "Apache-1.1", "Apache-1.1" },
		{ "Artistic-1.0", "Artistic-1.0" },   { "Artistic-2", "Artistic-2.0" },
		{ "CC-BY-4.0", "CC-BY-4.0" },         { "CC-BY-SA-3.0", "CC-BY-SA-3.0" },
		{ "CC0-1.0", "CC0-1.0" },             { "CC0", "CC0-1.0" },
		{ "CDDL-1.0", "CDDL-1.0" },           { "CPL-1.0", "CPL-1.0" },
		{ "EFL-2", "EFL-2.0" },               { "GFDL-1.2+", "GFDL-1.2-or-later" },
		{ "GFDL-1.3", "GFDL-1.3-only" },      { "GFDL-NIV-1.3", "GFDL-1.3-no-invariants-only" },
		{ "GFDL-NIV-1.2+", "GFDL-1.2-no-invariants-or-later" },
		{ "LPPL-1.3c", "LPPL-1.3c" },         { "MPL-1.1", "MPL-1.1" },
		{ "MPL-2.0", "MPL-2.0" },             { "Perl", "Artistic-1.0-Perl OR GPL-1.0-or-later" },
		{ "Python-2.0", "Python-2.0" },       { "QPL-1.0", "QPL-1.0" },
		{ "W3C", "W3C" },                     { "Zlib", "Zlib" },
		{ "Zope-2.1", "ZPL-2.1" },            { "Zope-1.1", "ZPL-1.1" },
		{ "GPL-2+ with Classpath exception", "GPL-2.0-or-later WITH Classpath-exception-2.0" },
		{ "Apache-2.0 with LLVM exception", "Apache-2.0 WITH LLVM-exception" },
		/* DEP-5's precedence: a comma closes a group */
		{ "GPL-2+ or Artistic-2.0, and BSD-3-clause", "(GPL-2.0-or-later OR Artistic-2.0) AND BSD-3-Clause" },
		{ "Perl and Zlib", "(Artistic-1.0-Perl OR GPL-1.0-or-later) AND Zlib" },
		{ "GPL-2+ or Expat or ISC", "GPL-2.0-or-later OR MIT OR ISC" },
		/* not exact, so nothing: mixed operators, a "+" SPDX has no id
		 * for, a versionless GPL, an unknown version, all without text */
		{ "GPL-2+ or MIT and ISC", "NOASSERTION" },
		{ "Apache-2.0+", "NOASSERTION" },
		{ "GPL", "NOASSERTION" },
		{ "GPL-4", "NOASSERTION" },
		{ "GPL-2+ with OpenSSL exception", "NOASSERTION" },
		{ "public-domain", "NOASSERTION" },
		{ "MIT with", "NOASSERTION" },
	};
	char text[512];

	(void)state;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		snprintf(text, sizeof(text), FILES("%s"), map[i][0]);
		assert_string_equal(lic(text), map[i][1]);
	}
}

/* A name with no SPDX identifier is a LicenseRef with the file's text:
 * the License field's own lines, or a stand-alone License paragraph. */
static void test_dep5_refs(void **state)
{
	struct dep5_license l;
	const char own[] = FILES("public-domain") " The author disclaims copyright.\n .\n Use freely.\n";
	const char alone[] = FILES("GPL-2+ with OpenSSL exception or Expat")
		"\nLicense: GPL-2+ with OpenSSL exception\n GPL text,\n plus OpenSSL.\n";
	const char twice[] = FILES("public-domain and Zlib")
		"\nLicense: public-domain\n Text A.\n";

	(void)state;
	dep5_license(own, strlen(own), &l);
	assert_int_equal(l.n_refs, 1);
	assert_true(!strncmp(l.expr, "LicenseRef-public-domain-", 25));
	assert_string_equal(l.expr, l.refs[0].id);
	assert_string_equal(l.refs[0].name, "public-domain");
	assert_string_equal(l.refs[0].text, "The author disclaims copyright.\n\nUse freely.");
	dep5_license_free(&l);

	dep5_license(alone, strlen(alone), &l);
	assert_int_equal(l.n_refs, 1);
	assert_true(!strncmp(l.refs[0].id, "LicenseRef-GPL-2plus-with-OpenSSL-exception-", 44));
	assert_string_equal(l.refs[0].text, "GPL text,\nplus OpenSSL.");
	{
		char want[256];
		snprintf(want, sizeof(want), "%s OR MIT", l.refs[0].id);
		assert_string_equal(l.expr, want);
	}
	dep5_license_free(&l);

	dep5_license(twice, strlen(twice), &l);
	assert_int_equal(l.n_refs, 1);
	assert_string_equal(l.refs[0].text, "Text A.");
	dep5_license_free(&l);

	/* a second text under the same name is another id */
	{
		struct dep5_license m;
		const char other[] = FILES("public-domain") " Another text.\n";
		dep5_license(own, strlen(own), &l);
		dep5_license(other, strlen(other), &m);
		assert_string_not_equal(l.refs[0].id, m.refs[0].id);
		dep5_license_free(&l);
		dep5_license_free(&m);
	}
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
		cmocka_unit_test(test_dep5_names),
		cmocka_unit_test(test_dep5_refs),
		cmocka_unit_test(test_control_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
