/* The ring check of `ingot verify --ring R`: admit only an image that holds
 * ring R - promoted there by the promotion keyring's threshold, and not
 * superseded (the ring's previous image stays until a rollback drill of
 * its successor retires it).  With --state, the ring's highest promotion
 * serial is recorded next to the manifest serials, and a ring whose
 * promotions go back below it is refused. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "keys/envelope.h"
#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "verify/checks.h"
#include "verify/promotion.h"

static const char *const standing_names[] = {
	[PROMOTION_NONE] = "none", [PROMOTION_CURRENT] = "current",
	[PROMOTION_PREVIOUS] = "previous", [PROMOTION_RETIRED] = "retired",
	[PROMOTION_SUPERSEDED] = "superseded",
};

void check_ring(const struct verify_opts *o, const struct manifest *m, struct verify_report *r)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	struct promotion_set set;
	const struct promotion *p = NULL;
	const char *image = m->have & MF_IMAGE ? m->image.sha256_hex : NULL;
	enum promotion_standing st;
	uint64_t served = 0, seen = 0;
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
	if (keyring_load_role(o->promotion_keyring, KEY_ROLE_PROMOTION, true, &kr, &e) < 0 ||
	    (promotions_load(o->promotions_dir, kr, o->ring, &set, &e) < 0 && e.code != -ENOENT)) {
		report_set(r, CHECK_RING, ST_ERROR, "%s", e.msg);
		return;
	}
	for (size_t i = 0; i < set.n; i++)
		if (set.v[i].serial > served)
			served = set.v[i].serial;
	st = promotion_standing(&set, image, &p, why, sizeof(why));
	/* Promotion serials only go up: an older promotions directory (a
	 * superseded promotion served again) would re-admit a replaced image. */
	if (o->state_path && (state_promotion_serial(o->state_path, o->ring, &seen, &e) < 0 ||
			      (served > seen && state_record_promotion(o->state_path, o->ring, served, &e) < 0)))
		report_set(r, CHECK_RING, ST_ERROR, "ring %s: %s", o->ring, e.msg);
	else if (served < seen)
		report_set(r, CHECK_RING, ST_FAIL, "ring %s: the promotions verified reach serial %" PRIu64
			   ", serial %" PRIu64 " was seen before (state file %s): refusing a rollback of the ring",
			   o->ring, served, seen, o->state_path);
	else
		report_set(r, CHECK_RING, promotion_admits(st) ? ST_PASS : ST_FAIL, "ring %s: %s", o->ring,
			   why);
	if (set.refused)
		report_evidence(r, CHECK_RING, "%zu promotion statement(s) refused; first: %s",
				set.refused, set.why ? set.why : "?");
	r->checks[CHECK_RING].details = json_pack("{s:s,s:s,s:o,s:I,s:o}", "ring", o->ring,
		"standing", standing_names[st],
		"serial", p ? json_integer((json_int_t)p->serial) : json_null(),
		"ring_serial", (json_int_t)served,
		"ring_serial_seen", o->state_path ? json_integer((json_int_t)seen) : json_null());
	promotions_free(&set);
}
