#include "verify/promotion.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/time.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"

int image_statement(const char *ptype, const struct manifest *m, json_t *predicate, json_t **out,
		    ingot_error *e)
{
	*out = json_pack("{s:s,s:[{s:s,s:{s:s}}],s:s,s:o}", "_type", STATEMENT_TYPE,
			 "subject", "name", m->image.file,
			 "digest", "sha256", m->have & MF_IMAGE ? m->image.sha256_hex : NULL,
			 "predicateType", ptype, "predicate", predicate);
	return *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}

static int statement_fail(ingot_error *e, const char *path, const char *what)
{
	return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED, "%s: %s", path, what);
}

int statement_open(const char *path, const struct keyring *kr, const char *ptype,
		   json_t **predicate, char subject_sha256[65], struct verify_outcome *out,
		   ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	json_t *subj, *v;
	const char *key, *sha;
	int r;

	r = envelope_load_statement(path, kr, &st, out, e);
	if (r < 0)
		return r;
	json_object_foreach(st, key, v)
		if (strcmp(key, "_type") && strcmp(key, "subject") && strcmp(key, "predicateType") &&
		    strcmp(key, "predicate"))
			return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
						 "%s: statement: unknown field '%.64s'", path, key);
	v = json_object_get(st, "_type");
	if (!json_is_string(v) || !statement_type_ok(json_string_value(v)))
		return statement_fail(e, path, "statement._type: expected \"" STATEMENT_TYPE "\"");
	v = json_object_get(st, "predicateType");
	if (!json_is_string(v) || strcmp(json_string_value(v), ptype))
		return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
					 "%s: statement.predicateType: expected \"%s\", got \"%.80s\"",
					 path, ptype, json_is_string(v) ? json_string_value(v) : "?");
	subj = json_object_get(st, "subject");
	sha = json_string_value(json_object_get(json_object_get(json_array_get(subj, 0), "digest"),
						"sha256"));
	if (!json_is_array(subj) || json_array_size(subj) != 1 || !sha || !is_sha256_hex(sha))
		return statement_fail(e, path, "statement.subject: expected one image with a "
				      "digest.sha256 of 64 hex digits");
	if (!json_is_object(json_object_get(st, "predicate")))
		return statement_fail(e, path, "statement.predicate: expected an object");
	memcpy(subject_sha256, sha, 65);
	*predicate = json_incref(json_object_get(st, "predicate"));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void statement_dir_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int statement_dir_list(const char *dir, const char *suffix, char ***paths, size_t *n,
		       ingot_error *e)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t cnt = 0, sl = strlen(suffix);
	struct dirent *de;

	if (!d)
		return ingot_fail(e, -errno, "%s: cannot open directory: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		if (de->d_name[0] == '.' || nl <= sl || strcmp(de->d_name + nl - sl, suffix))
			continue;
		if (cnt == STATEMENT_DIR_MAX) {
			closedir(d);
			statement_dir_free(v, cnt);
			return ingot_fail(e, -E2BIG, "%s: more than %u *%s files", dir,
					  STATEMENT_DIR_MAX, suffix);
		}
		char **nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || !(nv[cnt] = path_join(dir, de->d_name))) {
			closedir(d);
			statement_dir_free(nv ? nv : v, cnt);
			return ingot_fail(e, -ENOMEM, "out of memory");
		}
		v = nv;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*paths = v;
	*n = cnt;
	return 0;
}

/* The promotion predicate's fields admission relies on. */
static int promotion_parse(const char *path, const char *sha, const json_t *pred,
			   struct promotion *p, ingot_error *e)
{
	const char *ring = json_string_value(json_object_get(pred, "ring"));
	const char *date = json_string_value(json_object_get(pred, "date"));
	const json_t *serial = json_object_get(pred, "serial");
	const json_t *retires = json_object_get(pred, "retires");

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
	memcpy(p->image_sha256, sha, 65);
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
	set->v = calloc(n ? n : 1, sizeof(*set->v));
	if (!set->v) {
		statement_dir_free(paths, n);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_json_ json_t *pred = NULL;
		ingot_error pe = { 0 };
		struct promotion p = { 0 };
		char sha[65];

		if (statement_open(paths[i], kr, PROMOTION_PREDICATE_TYPE, &pred, sha, NULL, &pe) < 0 ||
		    promotion_parse(paths[i], sha, pred, &p, &pe) < 0) {
			/* A forged or broken statement is never used; say why once. */
			if (!set->refused++ && !(set->why = strdup(pe.msg)))
				break;
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
	_cleanup_free_ struct promotion *v = calloc(all->n ? all->n : 1, sizeof(*v));
	size_t len = 0;
	char why[INGOT_ERR_MSG];

	*out = '\0';
	if (!v)
		return;
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
