/* Debian's machine-readable copyright format (DEP-5, copyright-format
 * 1.0) read for one thing: the license of the "Files: *" paragraph, as an
 * SPDX license expression, for the SBOM's licenseDeclared.  Anything this
 * reader cannot map exactly (no Format: header, no "Files: *" paragraph,
 * a license name without an SPDX identifier, parentheses, exceptions)
 * gives "NOASSERTION": a wrong license is worse than none.  Pure function
 * on bytes. */
#ifndef INGOT_DEP5_H
#define INGOT_DEP5_H

#include <stddef.h>

#define DEP5_LICENSE_MAX 256

/* out (DEP5_LICENSE_MAX bytes) gets the SPDX expression or "NOASSERTION". */
void dep5_license(const char *text, size_t len, char out[DEP5_LICENSE_MAX]);

#endif
