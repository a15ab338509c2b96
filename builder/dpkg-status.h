/* A dpkg database's status file (var/lib/dpkg/status), as the SBOM reads
 * it from an image: the packages dpkg says are installed, each with what
 * `dpkg-query -W -f '${Package} ${Version} ${Architecture}
 * ${source:Package} ${source:Version} ${Maintainer}'` prints. */
#ifndef INGOT_DPKG_STATUS_H
#define INGOT_DPKG_STATUS_H

#include <stddef.h>

#include "lib/err.h"

struct dpkg_pkg {
	char *name, *version, *arch;
	char *source, *source_version; /* Source: "NAME (VERSION)"; absent: the package's own */
	char *maintainer;              /* "" when absent */
};

struct dpkg_db {
	struct dpkg_pkg *v;
	size_t n;
};

/* Parse status text (len bytes; what names it in messages: file) into
 * db, sorted by name then architecture.  Only stanzas whose Status is
 * "... installed" are kept (dpkg keeps removed packages' config-files
 * and not-installed records too).  A kept stanza without Package,
 * Version or Architecture, or a line that is no field, is refused
 * with its line number: a database the SBOM cannot read is no
 * database it may leave out.  db is empty on failure. */
int dpkg_status_parse(const char *text, size_t len, const char *file, struct dpkg_db *db, ingot_error *e);
void dpkg_db_free(struct dpkg_db *db);

#endif
