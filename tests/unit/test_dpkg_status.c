/* dpkg's status file as the SBOM reads it (builder/dpkg-status.h):
 * installed packages only, sorted, the source package and version as
 * dpkg-query's ${source:Package} ${source:Version}, and a stanza or line
 * it cannot read refused with its line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "builder/dpkg-status.h"

static const char status[] =
	"Package: zlib1g\n"
	"Status: install ok installed\n"
	"Architecture: amd64\n"
	"Multi-Arch: same\n"
	"Source: zlib (1:1.3.dfsg-3.1)\n"
	"Version: 1:1.3.dfsg-3.1+b1\n"
	"Maintainer: Mark Brown <broonie@debian.org>\n"
	"Description: compression library\n"
	" Continued: with a colon.\n"
	"\n"
	"Package: gone\n"
	"Status: deinstall ok config-files\n"
	"Architecture: amd64\n"
	"Version: 1\n"
	"\n"
	"Package: zlib1g\n"
	"Status: install ok installed\n"
	"Architecture: i386\n"
	"Version: 1:1.3.dfsg-3.1+b1\n"
	"\n"
	"Package: base-files\n"
	"Status: install ok installed\r\n"
	"Architecture: amd64\n"
	"Version: 13.8\n"
	"Source: base-files";   /* no final newline */

static void test_parse(void **state)
{
	struct dpkg_db db;
	ingot_error e = { 0 };

	(void)state;
	assert_int_equal(dpkg_status_parse(status, strlen(status), "status", &db, &e), 0);
	assert_int_equal(db.n, 3);
	assert_string_equal(db.v[0].name, "base-files");
	assert_string_equal(db.v[0].source, "base-files");
	assert_string_equal(db.v[0].source_version, "13.8");
	assert_string_equal(db.v[0].maintainer, "");
	assert_string_equal(db.v[1].name, "zlib1g");
	assert_string_equal(db.v[1].arch, "amd64");
	assert_string_equal(db.v[1].version, "1:1.3.dfsg-3.1+b1");
	assert_string_equal(db.v[1].source, "zlib");
	assert_string_equal(db.v[1].source_version, "1:1.3.dfsg-3.1");
	assert_string_equal(db.v[1].maintainer, "Mark Brown <broonie@debian.org>");
	assert_string_equal(db.v[2].arch, "i386");
	assert_string_equal(db.v[2].source, "zlib1g");
	dpkg_db_free(&db);
}

static void test_refused(void **state)
{
	static const char no_version[] = "Package: a\nStatus: install ok installed\nArchitecture: all\n\n"
					 "Package: b\nStatus: install ok installed\nArchitecture: all\n";
	static const char not_field[] = "Package: a\nthis is no field\n";
	static const char leading[] = " continuation\nPackage: a\n";
	static const char removed[] = "Package: b\nStatus: deinstall ok config-files\n";
	struct dpkg_db db;
	ingot_error e = { 0 };

	(void)state;
	assert_int_equal(dpkg_status_parse(no_version, strlen(no_version), "st", &db, &e), -EBADMSG);
	assert_string_equal(e.msg, "st:1: Version: expected a value in an installed package's stanza, got none");
	assert_int_equal(db.n, 0);
	assert_int_equal(dpkg_status_parse(not_field, strlen(not_field), "st", &db, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "st:2: expected \"Field: value\""));
	assert_int_equal(dpkg_status_parse(leading, strlen(leading), "st", &db, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "st:1: expected a field"));
	/* a removed package needs none of the fields */
	assert_int_equal(dpkg_status_parse(removed, strlen(removed), "st", &db, &e), 0);
	assert_int_equal(db.n, 0);
	dpkg_db_free(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
