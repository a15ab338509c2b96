/* The ring check of `ingot verify --ring R`: admit only an image that holds
 * ring R - promoted there by the promotion keyring's threshold, and not
 * superseded (the ring's previous image stays until a rollback drill of
 * its successor retires it). */
#include <stdio.h>
#include <string.h>

#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "verify/checks.h"
#include "verify/promotion.h"

static const char *const standing_names[] = {
	[PROMOTION_NONE] = "none", [PROMOTION_CURRENT] = "current",
	[PROMOTION_PREVIOUS] = "previous", [PROMOTION_RETIRED] = "retired",
	[PROMOTION_SUPERSEDED] = "superseded",
};

void check_ring(const struct verify_opts *o, const json_t *m, struct verify_report *r)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	struct promotion_set set;
	const struct promotion *p = NULL;
	const char *image = json_string_value(json_object_get(json_object_get(m, "image"), "sha256"));
	enum promotion_standing st;
	ingot_error e = { 0 };
	char why[INGOT_ERR_MSG];

	if (!o->ring) {
		report_set(r, CHECK_RING, ST_SKIP, "no ring requested (--ring)");
		return;
	}
	if (!o->promotions_dir || !o->promotion_keyring) {
		report_set(r, CHECK_RING, ST_ERROR, "--ring %s needs --promotions DIR and "
			   "--promotion-keyring FILE", o->ring);
		return;
	}
	if (!image) {
		report_set(r, CHECK_RING, ST_ERROR, "the manifest names no image sha256");
		return;
	}
	if (keyring_load(o->promotion_keyring, &kr, &e) < 0 ||
	    (promotions_load(o->promotions_dir, kr, o->ring, &set, &e) < 0 && e.code != -ENOENT)) {
		report_set(r, CHECK_RING, ST_ERROR, "%s", e.msg);
		return;
	}
	st = promotion_standing(&set, image, &p, why, sizeof(why));
	report_set(r, CHECK_RING, promotion_admits(st) ? ST_PASS : ST_FAIL, "ring %s: %s", o->ring,
		   why);
	if (set.refused)
		report_evidence(r, CHECK_RING, "%zu promotion statement(s) refused; first: %s",
				set.refused, set.why ? set.why : "?");
	r->checks[CHECK_RING].details = json_pack("{s:s,s:s,s:o}", "ring", o->ring,
		"standing", standing_names[st],
		"serial", p ? json_integer((json_int_t)p->serial) : json_null());
	promotions_free(&set);
}
