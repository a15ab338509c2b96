/* The dm-verity half of the image check: the hash tree's root, recomputed
 * from the image and hash files by builder's verity_check, must be the
 * manifest's verity.root_hash (the root the signed manifest vouches for). */
#include "verify/checks.h"

#include <string.h>

#include "builder/image.h"
#include "lib/digest.h"

void report_verity(const struct verify_opts *o, const json_t *m, struct verify_report *r)
{
	const char *hex = json_string_value(json_object_get(json_object_get(m, "verity"), "root_hash"));
	uint8_t root[32];
	ingot_error e = { 0 };

	if (!hex || hex_decode(hex, root, sizeof(root)) < 0) {
		report_set(r, CHECK_IMAGE, ST_ERROR, "manifest: verity.root_hash: expected 64 hex digits");
		return;
	}
	if (verity_check(o->image_path, o->verity_path, root, &e) < 0) {
		/* A missing or unreadable hash file cannot prove anything either way. */
		report_set(r, CHECK_IMAGE, e.code == -ENOENT || e.code == -EACCES ? ST_ERROR : ST_FAIL,
			   "%s", e.msg);
		return;
	}
	report_evidence(r, CHECK_IMAGE, "%s: dm-verity root %s", o->verity_path, hex);
	report_set(r, CHECK_IMAGE, ST_PASS, "image sha256 and dm-verity root match the manifest");
}
