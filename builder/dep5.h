/* Debian's machine-readable copyright format (DEP-5, copyright-format
 * 1.0) read for one thing: the license of the "Files: *" paragraph, as an
 * SPDX license expression, for the SBOM's licenseDeclared.
 *
 * Every short name the format defines (public-domain, Apache, Artistic,
 * BSD-N-clause, ISC, CC-BY, CC-BY-SA, CC0, CDDL, CPL, EFL, Expat, GPL,
 * LGPL, GFDL, GFDL-NIV, LPPL, MPL, Perl, Python, QPL, W3C, Zlib, Zope),
 * with its version, "+" (or later) and "with X exception", maps through
 * one table to an SPDX identifier or expression.  A name with no SPDX
 * identifier (public-domain, an unlisted exception, a vendor's license)
 * becomes a LicenseRef whose text the same file gives (the License
 * field's own lines, or a stand-alone License paragraph of that name);
 * without that text, or with anything this reader cannot map exactly
 * (no Format: header, no "Files: *" paragraph, "and" and "or" mixed
 * without commas), the whole is "NOASSERTION": a wrong license is worse
 * than none.  Pure function on bytes. */
#ifndef INGOT_DEP5_H
#define INGOT_DEP5_H

#include <stddef.h>

#define DEP5_LICENSE_MAX 4096
#define DEP5_REFS_MAX 16

/* A license with no SPDX identifier, as SPDX's hasExtractedLicensingInfos
 * declares it: id "LicenseRef-NAME-HASH" (HASH: the text's sha256, 8 hex
 * digits, so two texts under one name are two ids), the DEP-5 name and
 * the text (malloc'd). */
struct dep5_ref {
	char id[96];
	char *name, *text;
};

struct dep5_license {
	char expr[DEP5_LICENSE_MAX];    /* the SPDX expression, or "NOASSERTION" */
	struct dep5_ref refs[DEP5_REFS_MAX];
	size_t n_refs;                  /* 0 whenever expr is NOASSERTION */
};

/* Fill out (anything it held is not freed: start from a zeroed one or
 * after dep5_license_free). */
void dep5_license(const char *text, size_t len, struct dep5_license *out);
void dep5_license_free(struct dep5_license *l);

#endif
