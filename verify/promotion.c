#include "verify/promotion.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/time.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"

static int statement_fail(ingot_error *e, const char *path, const char *what)
{
	return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED, "%s: %s", path, what);
}

/* The promotion's image (its one subject) and the predicate's fields
 * admission relies on. */
static int promotion_parse(const char *path, const struct statement *st, struct promotion *p,
			   ingot_error *e)
{
	const json_t *jring = NULL, *jdate = NULL, *serial = NULL, *retires = NULL;
	const char *ring, *date;
	int r;

	/* Every member optional here, checked by type below. */
	json_unpack((json_t *)st->predicate, "{s?o,s?o,s?o,s?o}", "ring", &jring, "date", &jdate, "serial",
		    &serial, "retires", &retires);
	ring = json_string_value(jring);
	date = json_string_value(jdate);
	if ((r = image_subject(path, st, p->image_sha256, e)) < 0)
		return r;
	if (!ring || !*ring || strlen(ring) >= RING_NAME_MAX)
		return statement_fail(e, path, "predicate.ring: expected a ring name");
	if (!json_is_integer(serial) || json_integer_value(serial) < 1)
		return statement_fail(e, path, "predicate.serial: expected an integer >= 1");
	if (!date || time_parse(date, &p->date) < 0)
		return statement_fail(e, path, "predicate.date: expected an RFC 3339 time");
	if (retires && !json_is_null(retires) &&
	    (!json_is_string(retires) || !is_sha256_hex(json_string_value(retires))))
		return statement_fail(e, path, "predicate.retires: expected null or a sha256");
	snprintf(p->ring, sizeof(p->ring), "%s", ring);
	p->serial = (uint64_t)json_integer_value(serial);
	snprintf(p->retires, sizeof(p->retires), "%s",
		 json_is_string(retires) ? json_string_value(retires) : "");
	return 0;
}

int promotions_load(const char *dir, const struct keyring *kr, const char *ring,
		    struct promotion_set *set, ingot_error *e)
{
	char **paths = NULL;
	size_t n = 0;
	int r;

	memset(set, 0, sizeof(*set));
	r = statement_dir_list(dir, PROMOTION_SUFFIX, &paths, &n, e);
	if (r < 0)
		return r;
	set->v = xcalloc(n ? n : 1, sizeof(*set->v));
	for (size_t i = 0; i < n; i++) {
		_cleanup_statement_ struct statement st = { 0 };
		ingot_error pe = { 0 };
		struct promotion p = { 0 };

		if (statement_open(paths[i], kr, PROMOTION_PREDICATE_TYPE, &st, NULL, &pe) < 0 ||
		    promotion_parse(paths[i], &st, &p, &pe) < 0) {
			/* A forged or broken statement is never used; say why once. */
			if (!set->refused++)
				set->why = xstrdup(pe.msg);
			continue;
		}
		if (ring && strcmp(p.ring, ring))
			continue;
		p.file = TAKE_PTR(paths[i]);
		set->v[set->n++] = p;
	}
	statement_dir_free(paths, n);
	return 0;
}

void promotions_free(struct promotion_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->v[i].file);
	free(set->v);
	free(set->why);
	memset(set, 0, sizeof(*set));
}

const struct promotion *promotion_of(const struct promotion_set *set, const char *image)
{
	const struct promotion *best = NULL;
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].image_sha256, image) && (!best || set->v[i].serial > best->serial))
			best = &set->v[i];
	return best;
}

/* The highest-serial promotion whose image is not skip (NULL: any). */
static const struct promotion *latest_other(const struct promotion_set *set, const char *skip)
{
	const struct promotion *best = NULL;
	for (size_t i = 0; i < set->n; i++)
		if ((!skip || strcmp(set->v[i].image_sha256, skip)) &&
		    (!best || set->v[i].serial > best->serial))
			best = &set->v[i];
	return best;
}

enum promotion_standing promotion_standing(const struct promotion_set *set, const char *image,
					   const struct promotion **which, char *why, size_t n)
{
	const struct promotion *top = latest_other(set, NULL), *prev, *mine;

	mine = promotion_of(set, image);
	if (which)
		*which = mine;
	if (!mine) {
		if (!top)
			snprintf(why, n, "no promotion to this ring verifies (%zu refused%s%s)",
				 set->refused, set->why ? ": " : "", set->why ? set->why : "");
		else
			snprintf(why, n, "image %.16s... was never promoted to ring %s (current: "
				 "%.16s... serial %" PRIu64 ")", image, top->ring, top->image_sha256,
				 top->serial);
		return PROMOTION_NONE;
	}
	if (mine == top || !strcmp(top->image_sha256, image)) {
		snprintf(why, n, "promoted to ring %s, serial %" PRIu64 " (%s)", mine->ring,
			 mine->serial, mine->file);
		return PROMOTION_CURRENT;
	}
	prev = latest_other(set, top->image_sha256);
	if (prev && !strcmp(prev->image_sha256, image)) {
		for (size_t i = 0; i < set->n; i++)
			if (!strcmp(set->v[i].image_sha256, top->image_sha256) &&
			    !strcmp(set->v[i].retires, image)) {
				snprintf(why, n, "previous image of ring %s, retired by serial %" PRIu64
					 " after the rollback of %.16s... was exercised", mine->ring,
					 set->v[i].serial, top->image_sha256);
				return PROMOTION_RETIRED;
			}
		snprintf(why, n, "previous image of ring %s (serial %" PRIu64 "), admissible until "
			 "the rollback of %.16s... (serial %" PRIu64 ") is exercised", mine->ring,
			 mine->serial, top->image_sha256, top->serial);
		return PROMOTION_PREVIOUS;
	}
	snprintf(why, n, "image %.16s... was promoted to ring %s (serial %" PRIu64 ") but is "
		 "superseded by serial %" PRIu64, image, mine->ring, mine->serial, top->serial);
	return PROMOTION_SUPERSEDED;
}

void promotion_rings_held(const struct promotion_set *all, const char *image, char *out,
			  size_t n)
{
	_cleanup_free_ struct promotion *v = xcalloc(all->n ? all->n : 1, sizeof(*v));
	size_t len = 0;
	char why[INGOT_ERR_MSG];

	*out = '\0';
	for (size_t i = 0; i < all->n; i++) {
		struct promotion_set one = { .v = v };
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(all->v[j].ring, all->v[i].ring);
		if (seen)
			continue;
		/* The ring's promotions alone: standing is per ring. */
		for (size_t j = i; j < all->n; j++)
			if (!strcmp(all->v[j].ring, all->v[i].ring))
				one.v[one.n++] = all->v[j];
		enum promotion_standing st = promotion_standing(&one, image, NULL, why, sizeof(why));
		if (promotion_admits(st) && len < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s%s", len ? " " : "",
						all->v[i].ring, st == PROMOTION_PREVIOUS ? "(previous)" : "");
	}
}
