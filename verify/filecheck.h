/* Check an unpacked root against the manifest's file list: every listed
 * entry's type, mode, owner, size, sha256 and symlink target, plus
 * entries that appeared in a directory the manifest owns. */
#ifndef INGOT_VERIFY_FILECHECK_H
#define INGOT_VERIFY_FILECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "lib/err.h"
#include "manifest/typed.h"

#define FILES_LIST_MAX 200   /* paths listed per category in the details */

struct files_result {
	size_t checked;          /* manifest entries examined */
	size_t missing, extra, changed;
	json_t *details;         /* {"missing":[path], "extra":[path],
	                            "changed":[{"path","field","expected","got"}], "truncated":bool} */
	json_t *evidence;        /* array of one-line findings ("changed: /x: sha256: ...") */
	json_t *listed[3];       /* details' changed, missing, extra (borrowed), FILES_* */
	bool truncated;          /* details' "truncated" */
};
enum { FILES_CHANGED, FILES_MISSING, FILES_EXTRA };

/* m: the manifest, its entries (manifest_next_entry) compared.  ignore: NULL-terminated fnmatch(3)
 * globs on node paths (e.g. "/etc/machine-id") left out of every check.
 * Returns 0 when the walk completed (findings are in out), -errno with e
 * filled when the manifest's list is malformed or root unreadable. */
int files_check(const char *root, const struct manifest *m, const char *const *ignore,
		struct files_result *out, ingot_error *e);
/* True only when nothing differs: every count is zero AND the details
 * and evidence list nothing.  The verdict asks this, so a detail that
 * says "changed" can never sit beside a pass. */
bool files_result_clean(const struct files_result *r);
void files_result_free(struct files_result *r);

#endif
