/* The image check: the image file's size and sha256 against the manifest
 * (the dm-verity half is in veritycheck.c). */
#include "verify/checks.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"

void check_image(const struct verify_opts *o, const json_t *m, struct verify_report *r)
{
	const json_t *img = json_object_get(m, "image");
	const char *want = json_string_value(json_object_get(img, "sha256"));
	json_int_t want_size = json_integer_value(json_object_get(img, "size"));
	uint8_t d[32];
	char hex[65];
	uint64_t size = 0;
	ingot_error e = { 0 };

	if (!o->image_path) {
		report_set(r, CHECK_IMAGE, ST_SKIP, "no image given (--image)");
		return;
	}
	if (!want) {
		report_set(r, CHECK_IMAGE, ST_ERROR, "manifest has no image.sha256");
		return;
	}
	/* A block device's size is the partition's; the image is a prefix of
	 * it, so hash exactly the manifest's size from a device. */
	struct stat st;
	if (stat(o->image_path, &st) < 0) {
		report_set(r, CHECK_IMAGE, ST_ERROR, "%s: cannot stat: %s", o->image_path, strerror(errno));
		return;
	}
	if (S_ISBLK(st.st_mode)) {
		report_set(r, CHECK_IMAGE, ST_ERROR, "%s: block devices are checked through "
			   "dm-verity only; pass the image file", o->image_path);
		return;
	}
	if (sha256_file(o->image_path, d, &size, &e) < 0) {
		report_set(r, CHECK_IMAGE, ST_ERROR, "%s", e.msg);
		return;
	}
	hex_encode(d, 32, hex);
	if (strcmp(hex, want) || (json_int_t)size != want_size) {
		report_set(r, CHECK_IMAGE, ST_FAIL, "%s: sha256 %s (%llu bytes), manifest %s (%lld bytes)",
			   o->image_path, hex, (unsigned long long)size, want, (long long)want_size);
		return;
	}
	report_evidence(r, CHECK_IMAGE, "%s: sha256 %s, %llu bytes", o->image_path, hex,
			(unsigned long long)size);
	if (!o->verity_path) {
		report_set(r, CHECK_IMAGE, ST_PASS, "image sha256 matches (no --verity: hash tree not checked)");
		return;
	}
	report_verity(o, m, r);
}
