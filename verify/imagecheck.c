/* The image check: the image file or device against the manifest's
 * image.sha256, image.size and (with --verity) the dm-verity root, in
 * one read by builder's image_check_manifest (the same check
 * `ingot verify-manifest` makes). */
#include "verify/checks.h"

#include "image/verity.h"
#include "lib/digest.h"

void check_image(const struct verify_opts *o, const struct manifest *m, struct verify_report *r)
{
	struct image_digest got;
	char hex[SHA256_HEX_LEN + 1];
	ingot_error e = { 0 };
	int rc;

	if (!o->image_path) {
		report_set(r, CHECK_IMAGE, ST_SKIP, "no image given (--image)");
		return;
	}
	rc = image_check_manifest(m, o->image_path, o->verity_path, &got, &e);
	if (rc < 0) {
		/* Only a difference is a failure; what could not be read proves
		 * nothing either way. */
		report_set(r, CHECK_IMAGE, rc == -EBADMSG ? ST_FAIL : ST_ERROR, "%s", e.msg);
		return;
	}
	hex_encode(got.sha256, sizeof(got.sha256), hex);
	report_evidence(r, CHECK_IMAGE, "%s: sha256 %s, %llu bytes", o->image_path, hex,
			(unsigned long long)got.size);
	if (!o->verity_path) {
		report_set(r, CHECK_IMAGE, ST_PASS, "image sha256 matches (no --verity: hash tree not checked)");
		return;
	}
	report_evidence(r, CHECK_IMAGE, "%s: dm-verity root %s", o->verity_path, m->verity.root_hex);
	report_set(r, CHECK_IMAGE, ST_PASS, "image sha256 and dm-verity root match the manifest");
}
