/* libFuzzer harness: DEP-5 copyright files (builder/dep5.h), the text a
 * .deb carries and the SBOM's licenseDeclared comes from.  Oracle: the
 * expression is NOASSERTION with no LicenseRef, or made of SPDX's
 * characters only, each LicenseRef in it declared once with a UTF-8 text
 * (the document's hasExtractedLicensingInfos), every one declared used. */
#include "tests/fuzz/fuzz_common.h"
#include "builder/dep5.h"
#include "lib/escape.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	return 0;
}

static void fail(const char *why, const struct dep5_license *l)
{
	fprintf(stderr, "fuzz_dep5: %s: '%s'\n", why, l->expr);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dep5_license l;

	dep5_license((const char *)data, size, &l);
	fuzz_note("dep5_license", l.expr);
	if (!strcmp(l.expr, "NOASSERTION")) {
		if (l.n_refs)
			fail("NOASSERTION with LicenseRefs", &l);
	} else if (!*l.expr || strspn(l.expr, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-+() ") !=
					       strlen(l.expr)) {
		fail("not an SPDX expression", &l);
	}
	for (size_t i = 0; i < l.n_refs; i++) {
		const char *id = l.refs[i].id;
		if (strncmp(id, "LicenseRef-", 11) || strspn(id + 11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-") !=
							      strlen(id + 11))
			fail("a LicenseRef id outside [A-Za-z0-9.-]", &l);
		if (!strstr(l.expr, id) || !l.refs[i].text || !utf8_valid(l.refs[i].text) || !l.refs[i].name)
			fail("a LicenseRef not used, or without a UTF-8 text", &l);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(l.refs[k].id, id))
				fail("a LicenseRef declared twice", &l);
	}
	for (const char *p = strstr(l.expr, "LicenseRef-"); p; p = strstr(p + 1, "LicenseRef-")) {
		size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-"), k;

		if (p > l.expr && p[-1] != ' ' && p[-1] != '(')
			continue;   /* inside an id: a name may hold the word */
		for (k = 0; k < l.n_refs && !(strlen(l.refs[k].id) == n && !strncmp(l.refs[k].id, p, n)); k++)
			;
		if (k == l.n_refs)
			fail("a LicenseRef used but not declared", &l);
	}
	dep5_license_free(&l);
	return 0;
}
