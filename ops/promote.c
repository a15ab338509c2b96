#include "ops/promote.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/evidence.h"
#include "manifest/mdoc.h"
#include "keys/envelope.h"
#include "keys/keyring.h"
#include "keys/statement.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "recipes/rings.h"
#include "verify/promotion.h"

/* The keys of role in a keyring, with the policy's threshold (0: the
 * keyring's own): the runners' keys vouch for evidence only, the
 * promoters' for promotions only. */
static int load_keyring(const char *path, enum key_role role, unsigned threshold, struct keyring **out,
			ingot_error *e)
{
	int r = keyring_load_role(path, role, true, out, e);
	if (r < 0)
		return ingot_set_kind(e, r, r == -ENOENT || r == -EACCES ? PROMOTE_FAIL_IO
					 : PROMOTE_FAIL_MALFORMED);
	if (threshold && threshold > (*out)->n)
		return ingot_fail_kind(e, -EINVAL, PROMOTE_FAIL_MALFORMED, "%s: the policy asks for "
					 "%u signatures but the keyring has %zu keys", path,
					 threshold, (*out)->n);
	if (threshold)
		(*out)->threshold = threshold;
	return 0;
}

struct candidate {
	const char *image;            /* sha256 */
	const char *tuple_nccl;       /* the image's NCCL version, or NULL */
	const char *retire;           /* the ring image a rollback drill would retire */
};

/* Record why a bar was missed; returns false for `return missed(...)`. */
static bool __attribute__((format(printf, 3, 4))) missed(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return false;
}

/* One half (out-of-place or in-place) of an all_reduce_perf row. */
static bool nccl_half_meets(const struct ring_requirement *q, const struct nccl_row *row, int in_place,
			    char *why, size_t n)
{
	const struct nccl_half *half = in_place ? &row->in_place : &row->out_of_place;
	long long size = row->size;

	/* Wrong results at any size are corruption, not just slowness. */
	if (!half->validated)
		return missed(why, n, "run without data validation (#wrong N/A)");
	if (half->wrong)
		return missed(why, n, "%lld wrong values at %lld bytes", (long long)half->wrong, size);
	if ((uint64_t)size >= q->min_bytes && half->busbw < q->min_busbw)
		return missed(why, n, "busbw %.2f GB/s %s at %lld bytes, policy needs >= %.2f", half->busbw,
			      in_place ? "in-place" : "out-of-place", size, q->min_busbw);
	return true;
}

static bool nccl_meets(const struct ring_requirement *q, const struct candidate *c,
		       const struct evidence *ev, char *why, size_t n)
{
	size_t big = 0;

	if (ev->nodes < q->min_nodes)
		return missed(why, n, "ran on %zu node(s), policy needs %u", ev->nodes, q->min_nodes);
	if (ev->nccl_version && c->tuple_nccl && strcmp(ev->nccl_version, c->tuple_nccl))
		return missed(why, n, "ran NCCL %s, but the image carries NCCL %s", ev->nccl_version,
			      c->tuple_nccl);
	if (!ev->has_out_of_bounds)
		return missed(why, n, "the run has no \"Out of bounds values\" line");
	if (!ev->out_of_bounds_ok)
		return missed(why, n, "out-of-bounds values reported");
	for (size_t i = 0; i < ev->n_rows; i++) {
		big += (uint64_t)ev->rows[i].size >= q->min_bytes;
		if (!nccl_half_meets(q, &ev->rows[i], 0, why, n) || !nccl_half_meets(q, &ev->rows[i], 1, why, n))
			return false;
	}
	if (!big)
		return missed(why, n, "no message size >= %" PRIu64 " bytes in the run", q->min_bytes);
	return true;
}

/* Whether one verified piece of evidence meets q; why says what not. */
static bool meets(const struct ring_requirement *q, const struct candidate *c, const struct evidence *ev,
		  char *why, size_t n)
{
	if (!strcmp(q->kind, "nccl-tests"))
		return nccl_meets(q, c, ev, why, n);
	if (!strcmp(q->kind, "dcgm-diag")) {
		if (ev->level < q->min_level)
			return missed(why, n, "diagnostic level %lld, policy needs >= %u",
				      (long long)ev->level, q->min_level);
		if (!ev->passed)
			return missed(why, n, "diagnostic did not pass (%lld failed)", (long long)ev->failed);
	} else if (!strcmp(q->kind, "rollback")) {
		const char *to = ev->rolled_back_to;
		if (strcmp(ev->result ?: "", "pass"))
			return missed(why, n, "rollback drill did not pass");
		if (!c->retire || !to || strcmp(to, c->retire))
			return missed(why, n, "rolled back to %.16s..., not to the ring's previous image "
				      "%.16s...", to ? to : "?", c->retire ? c->retire : "(none)");
	}
	return true;
}

struct found {
	json_t *evidence;    /* [{"kind","file","sha256"}] */
	bool rollback_ok;
};

/* Look for evidence meeting q among files; false with a reason in miss. */
static int find_evidence(const struct ring_requirement *q, const struct candidate *c,
			 char **files, size_t n, struct found *f, struct strbuf *miss, ingot_error *e)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	char why[512] = "", first_refusal[INGOT_ERR_MSG] = "";
	size_t refused = 0;
	int r;

	r = load_keyring(q->keyring, KEY_ROLE_EVIDENCE, q->threshold, &kr, e);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_statement_ struct statement st = { 0 };
		ingot_error ve = { 0 };
		char sha[65], bars[400];
		if (statement_open(files[i], kr, EVIDENCE_PREDICATE_TYPE, &st, NULL, &ve) < 0 ||
		    image_subject(files[i], &st, sha, &ve) < 0) {
			if (!refused++)
				snprintf(first_refusal, sizeof(first_refusal), "%s", ve.msg);
			continue;
		}
		_cleanup_(evidence_release) struct evidence ev;
		evidence_read(st.predicate, &ev);
		if (strcmp(ev.kind ?: "", q->kind))
			continue;
		if (strcmp(sha, c->image)) {
			snprintf(why, sizeof(why), "%s is about image %.16s..., not %.16s...", files[i],
				 sha, c->image);
			continue;
		}
		if (!meets(q, c, &ev, bars, sizeof(bars))) {
			snprintf(why, sizeof(why), "%s: %s", files[i], bars);
			continue;
		}
		uint8_t d[SHA256_LEN];
		char hex[SHA256_HEX_LEN + 1];
		if (sha256_file(files[i], d, NULL, e) < 0)
			return ingot_set_kind(e, -EIO, PROMOTE_FAIL_IO);
		hex_encode(d, sizeof(d), hex);
		const char *base = strrchr(files[i], '/');
		json_array_append_new(f->evidence, json_pack("{s:s,s:s,s:s}", "kind", q->kind,
			"file", base ? base + 1 : files[i], "sha256", hex));
		if (!strcmp(q->kind, "rollback"))
			f->rollback_ok = true;
		return 1;
	}
	if (!q->required)
		return 0;
	strbuf_addf(miss, "; %s: ", q->kind);
	if (*why)
		strbuf_addstr(miss, why);
	else if (refused)
		strbuf_addf(miss, "no evidence signed by %u of %s (%zu statement(s) refused, first: %s)",
			    kr->threshold, q->keyring, refused, first_refusal);
	else
		strbuf_addf(miss, "no evidence in the directory");
	return 0;
}

/* The earliest promotion of image in set (soak starts there). */
static const struct promotion *first_promotion(const struct promotion_set *s, const char *image)
{
	const struct promotion *best = NULL;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].image_sha256, image) && (!best || s->v[i].date < best->date))
			best = &s->v[i];
	return best;
}

static void fmt_time(time_t t, char *buf, size_t n)
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%lld", (long long)t);
}

/* The previous ring: the image must hold a promotion there, soaked long enough. */
static int check_previous(const struct promote_opts *o, const struct ring_policy *pol,
			  const char *image, json_t **prev_out, struct strbuf *miss, ingot_error *e)
{
	_cleanup_ring_policy_ struct ring_policy *prev = NULL;
	_cleanup_keyring_ struct keyring *kr = NULL;
	struct promotion_set set;
	const struct promotion *p;
	char when[32], until[32];
	int r;

	*prev_out = json_null();
	if (!*pol->previous)
		return 0;
	if ((r = ring_policy_load_dir(o->rings_dir, pol->previous, &prev, e)) < 0)
		return ingot_set_kind(e, r, PROMOTE_FAIL_MALFORMED);
	if ((r = load_keyring(prev->promotion_keyring, KEY_ROLE_PROMOTION, prev->promotion_threshold, &kr, e)) < 0)
		return r;
	/* No promotions directory yet: nothing was promoted anywhere. */
	if ((r = promotions_load(o->promotions_dir, kr, pol->previous, &set, e)) < 0 && r != -ENOENT)
		return ingot_set_kind(e, r, PROMOTE_FAIL_IO);
	p = first_promotion(&set, image);
	if (!p) {
		strbuf_addf(miss, "; soak: image %.16s... holds no promotion to ring %s signed by %u "
			    "of %s", image, pol->previous, kr->threshold, prev->promotion_keyring);
	} else if (o->now - p->date < (time_t)pol->soak_seconds) {
		fmt_time(p->date, when, sizeof(when));
		fmt_time(p->date + (time_t)pol->soak_seconds, until, sizeof(until));
		strbuf_addf(miss, "; soak: promoted to %s at %s, %lld h ago; policy needs %llu h "
			    "(not before %s)", pol->previous, when, (long long)(o->now - p->date) / 3600,
			    (unsigned long long)pol->soak_seconds / 3600, until);
	} else {
		fmt_time(p->date, when, sizeof(when));
		json_decref(*prev_out);
		*prev_out = json_pack("{s:s,s:I,s:s}", "ring", p->ring, "serial", (json_int_t)p->serial,
				      "date", when);
	}
	promotions_free(&set);
	return 0;
}

static int write_promotion(const struct promote_opts *o, const struct ring_policy *pol,
			   const struct manifest *m, uint64_t serial, json_t *prev, json_t *evidence,
			   const char *retires, struct signing_key *const *keys, size_t n_keys,
			   struct promote_result *res, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL, *env = NULL;
	uint8_t d[SHA256_LEN];
	char date[32], polhex[SHA256_HEX_LEN + 1];
	int r;

	if (sha256_file(pol->file, d, NULL, e) < 0)
		return ingot_set_kind(e, -EIO, PROMOTE_FAIL_IO);
	hex_encode(d, sizeof(d), polhex);
	fmt_time(o->now, date, sizeof(date));
	json_t *pred = json_pack("{s:s,s:I,s:o,s:o,s:s,s:{s:s,s:s},s:O,s:O,s:o}",
		"ring", pol->name, "serial", (json_int_t)serial,
		"recipe", m->recipe.name ? json_string(m->recipe.name) : json_null(),
		"manifest_serial", m->have & MF_VERSION ? json_integer((json_int_t)m->serial) : json_null(),
		"date", date,
		"policy", "file", pol->file, "sha256", polhex, "previous", prev,
		"evidence", evidence, "retires", retires ? json_string(retires) : json_null());
	if (!pred)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = image_statement(PROMOTION_PREDICATE_TYPE, m, pred, &st, e)) < 0 ||
	    (r = statement_sign(st, keys, n_keys, &env, e)) < 0)
		return r;
	if (mkdir_p(o->promotions_dir, 0755, e) < 0)
		return ingot_set_kind(e, -EIO, PROMOTE_FAIL_IO);
	res->path = xasprintf("%s/%s-%04" PRIu64 PROMOTION_SUFFIX, o->promotions_dir, pol->name, serial);
	if (json_write_file(res->path, env, 0644, e) < 0)
		return ingot_set_kind(e, -EIO, PROMOTE_FAIL_IO);
	res->serial = serial;
	res->n_evidence = json_array_size(evidence);
	return 0;
}

int promote_image(const struct promote_opts *o, struct signing_key *const *keys, size_t n_keys,
		  struct promote_result *res, ingot_error *e)
{
	_cleanup_ring_policy_ struct ring_policy *pol = NULL;
	_cleanup_keyring_ struct keyring *pkr = NULL;
	_cleanup_mdoc_ struct mdoc md = { 0 };
	_cleanup_strbuf_ struct strbuf miss = STRBUF_INIT;
	_cleanup_json_ json_t *prev = NULL;
	struct found f = { .evidence = json_array() };
	struct promotion_set set = { 0 };
	struct candidate c = { 0 };
	const struct promotion *top = NULL, *mine;
	char **files = NULL;
	size_t n_files = 0, signers = 0;
	uint64_t serial = 1;
	int r;

	memset(res, 0, sizeof(*res));
	strbuf_init(&miss, 256);
	if (!f.evidence)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = ring_policy_load_dir(o->rings_dir, o->ring, &pol, e)) < 0 ||
	    (r = mdoc_load_head(o->manifest_path, &md, e)) < 0) {
		json_decref(f.evidence);
		return ingot_set_kind(e, r, r == -ENOENT ? PROMOTE_FAIL_IO : PROMOTE_FAIL_MALFORMED);
	}
	c.image = md.manifest->have & MF_IMAGE ? md.manifest->image.sha256_hex : NULL;
	c.tuple_nccl = manifest_tuple_nccl(md.manifest);
	if (!c.image) {
		json_decref(f.evidence);
		return ingot_fail_kind(e, -EINVAL, PROMOTE_FAIL_MALFORMED, "%s: image.sha256: "
					 "expected 64 hex digits", o->manifest_path);
	}

	/* The signing keys must be able to make a promotion that verifies. */
	if ((r = load_keyring(pol->promotion_keyring, KEY_ROLE_PROMOTION, pol->promotion_threshold, &pkr, e)) < 0)
		goto out;
	for (size_t i = 0; i < n_keys; i++)
		signers += keyring_find(pkr, keys[i]->keyid) != NULL;
	if (signers < pkr->threshold) {
		r = ingot_fail_kind(e, -EPERM, PROMOTE_FAIL_REFUSED, "%s: %zu of the given keys are "
				      "in the promotion keyring %s, threshold %u", pol->file, signers,
				      pol->promotion_keyring, pkr->threshold);
		goto out;
	}
	if ((r = promotions_load(o->promotions_dir, pkr, pol->name, &set, e)) < 0 && r != -ENOENT) {
		ingot_set_kind(e, r, PROMOTE_FAIL_IO);
		goto out;
	}
	for (size_t i = 0; i < set.n; i++) {
		if (!top || set.v[i].serial > top->serial)
			top = &set.v[i];
		if (set.v[i].serial >= serial)
			serial = set.v[i].serial + 1;
	}
	/* What a rollback drill of this candidate would retire: the ring's
	 * image before it. */
	mine = promotion_of(&set, c.image);
	if (top && strcmp(top->image_sha256, c.image)) {
		c.retire = top->image_sha256;
	} else if (top) {
		for (size_t i = 0; i < set.n; i++)
			if (strcmp(set.v[i].image_sha256, c.image) &&
			    (!c.retire || set.v[i].serial > promotion_of(&set, c.retire)->serial))
				c.retire = set.v[i].image_sha256;
	}

	if ((r = statement_dir_list(o->evidence_dir, EVIDENCE_SUFFIX, &files, &n_files, e)) < 0) {
		ingot_set_kind(e, r, PROMOTE_FAIL_IO);
		goto out;
	}
	for (size_t i = 0; i < pol->n_req; i++)
		if ((r = find_evidence(&pol->req[i], &c, files, n_files, &f, &miss, e)) < 0)
			goto out;
	if ((r = check_previous(o, pol, c.image, &prev, &miss, e)) < 0)
		goto out;
	bool retiring = pol->retire_after_rollback && f.rollback_ok && c.retire;
	if (mine && mine == top && !retiring && !miss.len)
		strbuf_addf(&miss, "; image %.16s... is already ring %s's current image (serial %"
			    PRIu64 "); nothing to retire without rollback evidence", c.image,
			    pol->name, top->serial);
	if (miss.len) {
		r = ingot_fail_kind(e, -EPERM, PROMOTE_FAIL_REFUSED, "%s: not promoted to ring %s%s",
				      o->manifest_path, pol->name, miss.buf);
		goto out;
	}
	r = write_promotion(o, pol, md.manifest, serial, prev, f.evidence,
			    retiring ? c.retire : NULL, keys, n_keys, res, e);
	if (r == 0 && retiring)
		snprintf(res->retired, sizeof(res->retired), "%s", c.retire);
out:
	statement_dir_free(files, n_files);
	promotions_free(&set);
	json_decref(f.evidence);
	return r;
}

void promote_result_free(struct promote_result *res)
{
	free(res->path);
	res->path = NULL;
}
