#include "recipes/rings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"
#include "lib/yamlx.h"

static const char *const top_keys[] = {
	"ring", "previous", "soak-hours", "promotion", "retire-previous-after", "evidence", NULL,
};
static const char *const promotion_keys[] = { "keyring", "threshold", NULL };
static const char *const kinds[] = { "nccl-tests", "dcgm-diag", "custom", "rollback" };
/* Keys per kind: the common ones, then the kind's own bars. */
static const char *const nccl_keys[] = {
	"keyring", "threshold", "required", "min-busbw-gbps", "min-message-bytes", "min-nodes", NULL,
};
static const char *const dcgm_keys[] = { "keyring", "threshold", "required", "min-level", NULL };
static const char *const plain_keys[] = { "keyring", "threshold", "required", NULL };

static bool ring_name_ok(const char *s)
{
	if (!*s || strlen(s) >= RING_ID_MAX)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

/* A ring name field: lower-case letters, digits, '-'. */
static int get_ring_name(struct ydoc *d, yaml_node_t *n, const char *field, char *out,
			 ingot_error *e)
{
	const char *s;
	int r = ydoc_str(d, n, field, &s, e);
	if (r < 0)
		return r;
	if (!ring_name_ok(s))
		return ydoc_fail(d, n, e, "%s: expected a ring name ([a-z0-9-], under %d characters), "
				 "got \"%.64s\"", field, RING_ID_MAX, s);
	snprintf(out, RING_ID_MAX, "%s", s);
	return 0;
}

/* A keyring path, relative to the policy file's directory unless absolute. */
static int get_keyring(struct ydoc *d, yaml_node_t *map, const char *dir, const char *field,
		       char **out, ingot_error *e)
{
	yaml_node_t *v;
	const char *s;
	int r;

	if ((r = ydoc_need(d, map, "keyring", field, &v, e)) < 0 ||
	    (r = ydoc_str(d, v, field, &s, e)) < 0)
		return r;
	if (!*s)
		return ydoc_fail(d, v, e, "%s.keyring: expected a keyring file path", field);
	*out = *s == '/' ? xstrdup(s) : path_join(dir, s);
	return 0;
}

static int get_threshold(struct ydoc *d, yaml_node_t *map, const char *field, unsigned *out,
			 ingot_error *e)
{
	yaml_node_t *v = ydoc_get(d, map, "threshold");
	uint64_t t;
	int r;

	*out = 0;
	if (!v)
		return 0;
	if ((r = ydoc_uint(d, v, field, 1, 256, &t, e)) < 0)
		return r;
	*out = (unsigned)t;
	return 0;
}

static int get_gbps(struct ydoc *d, yaml_node_t *n, const char *field, double *out,
		    ingot_error *e)
{
	const char *s;
	char *end;
	int r = ydoc_str(d, n, field, &s, e);
	if (r < 0)
		return r;
	*out = strtod(s, &end);
	if (end == s || *end || !isfinite(*out) || *out < 0)
		return ydoc_fail(d, n, e, "%s: expected a bandwidth in GB/s (a non-negative number), "
				 "got \"%.32s\"", field, s);
	return 0;
}

static int parse_requirement(struct ydoc *d, const char *dir, const char *kind, yaml_node_t *map,
			     struct ring_requirement *q, ingot_error *e)
{
	char field[96];
	yaml_node_t *v;
	uint64_t u;
	int r;

	snprintf(field, sizeof(field), "evidence.%s", kind);
	snprintf(q->kind, sizeof(q->kind), "%s", kind);
	q->required = true;
	if ((r = ydoc_expect_map(d, map, field, e)) < 0 ||
	    (r = ydoc_check_keys(d, map, field, !strcmp(kind, "nccl-tests") ? nccl_keys :
				 !strcmp(kind, "dcgm-diag") ? dcgm_keys : plain_keys, e)) < 0 ||
	    (r = get_keyring(d, map, dir, field, &q->keyring, e)) < 0 ||
	    (r = get_threshold(d, map, field, &q->threshold, e)) < 0)
		return r;
	if ((v = ydoc_get(d, map, "required")) && (r = ydoc_bool(d, v, field, &q->required, e)) < 0)
		return r;
	if (!strcmp(kind, "nccl-tests")) {
		if ((r = ydoc_need(d, map, "min-busbw-gbps", field, &v, e)) < 0 ||
		    (r = get_gbps(d, v, "min-busbw-gbps", &q->min_busbw, e)) < 0 ||
		    (r = ydoc_need(d, map, "min-message-bytes", field, &v, e)) < 0 ||
		    (r = ydoc_uint(d, v, "min-message-bytes", 1, UINT64_MAX, &q->min_bytes, e)) < 0)
			return r;
		q->min_nodes = 1;
		if ((v = ydoc_get(d, map, "min-nodes"))) {
			if ((r = ydoc_uint(d, v, "min-nodes", 1, 100000, &u, e)) < 0)
				return r;
			q->min_nodes = (unsigned)u;
		}
	} else if (!strcmp(kind, "dcgm-diag")) {
		if ((r = ydoc_need(d, map, "min-level", field, &v, e)) < 0 ||
		    (r = ydoc_uint(d, v, "min-level", 1, 4, &u, e)) < 0)
			return r;
		q->min_level = (unsigned)u;
	}
	return 0;
}

static int parse_evidence(struct ydoc *d, const char *dir, yaml_node_t *map,
			  struct ring_policy *p, ingot_error *e)
{
	yaml_node_t *k, *v;
	const char *kind;
	size_t i;
	int r;

	if ((r = ydoc_expect_map(d, map, "evidence", e)) < 0)
		return r;
	ydoc_map_foreach(d, map, k, v) {
		if ((r = ydoc_str(d, k, "evidence", &kind, e)) < 0)
			return r;
		for (i = 0; i < ARRAY_SIZE(kinds) && strcmp(kind, kinds[i]); i++)
			;
		if (i == ARRAY_SIZE(kinds))
			return ydoc_fail(d, k, e, "evidence: unknown kind \"%.32s\" (expected "
					 "nccl-tests, dcgm-diag, custom or rollback)", kind);
		if (ring_requirement(p, kind))
			return ydoc_fail(d, k, e, "evidence: duplicate kind \"%s\"", kind);
		/* Four kinds, RING_MAX_REQUIREMENTS slots: cannot overflow. */
		r = parse_requirement(d, dir, kind, v, &p->req[p->n_req++], e);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_policy(struct ydoc *d, const char *dir, struct ring_policy *p, ingot_error *e)
{
	yaml_node_t *root = ydoc_root(d), *v;
	const char *s;
	uint64_t hours = 0;
	int r;

	if (!root)
		return ingot_fail(e, -EINVAL, "%s: empty document, expected a ring policy", d->file);
	if ((r = ydoc_expect_map(d, root, "ring policy", e)) < 0 ||
	    (r = ydoc_check_keys(d, root, "ring policy", top_keys, e)) < 0 ||
	    (r = ydoc_need(d, root, "ring", "ring policy", &v, e)) < 0 ||
	    (r = get_ring_name(d, v, "ring", p->name, e)) < 0)
		return r;
	if ((v = ydoc_get(d, root, "previous")) &&
	    (r = get_ring_name(d, v, "previous", p->previous, e)) < 0)
		return r;
	if ((v = ydoc_get(d, root, "soak-hours"))) {
		if (!*p->previous)
			return ydoc_fail(d, v, e, "soak-hours: expected only with previous: (the ring "
					 "the image soaks in first)");
		if ((r = ydoc_uint(d, v, "soak-hours", 0, 24 * 365, &hours, e)) < 0)
			return r;
	}
	p->soak_seconds = hours * 3600;
	if ((r = ydoc_need(d, root, "promotion", "ring policy", &v, e)) < 0 ||
	    (r = ydoc_expect_map(d, v, "promotion", e)) < 0 ||
	    (r = ydoc_check_keys(d, v, "promotion", promotion_keys, e)) < 0 ||
	    (r = get_keyring(d, v, dir, "promotion", &p->promotion_keyring, e)) < 0 ||
	    (r = get_threshold(d, v, "promotion.threshold", &p->promotion_threshold, e)) < 0)
		return r;
	if ((v = ydoc_get(d, root, "retire-previous-after"))) {
		if ((r = ydoc_str(d, v, "retire-previous-after", &s, e)) < 0)
			return r;
		if (strcmp(s, "rollback"))
			return ydoc_fail(d, v, e, "retire-previous-after: expected \"rollback\", got "
					 "\"%.32s\"", s);
		p->retire_after_rollback = true;
	}
	if ((r = ydoc_need(d, root, "evidence", "ring policy", &v, e)) < 0 ||
	    (r = parse_evidence(d, dir, v, p, e)) < 0)
		return r;
	if (p->retire_after_rollback && !ring_requirement(p, "rollback"))
		return ydoc_fail(d, v, e, "evidence: retire-previous-after: rollback needs an "
				 "evidence.rollback entry (who may sign the rollback drill)");
	return 0;
}

int ring_policy_load(const char *path, struct ring_policy **out, ingot_error *e)
{
	_cleanup_ydoc_ struct ydoc d = { 0 };
	_cleanup_free_ char *dir = path_dirname(path);
	struct ring_policy *p = xcalloc(1, sizeof(*p));
	int r;

	p->file = xstrdup(path);
	r = ydoc_load(&d, path, e);
	if (r == 0)
		r = parse_policy(&d, dir, p, e);
	if (r < 0) {
		ring_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

int ring_policy_load_dir(const char *dir, const char *ring, struct ring_policy **out,
			 ingot_error *e)
{
	_cleanup_free_ char *path = NULL;
	struct ring_policy *p;
	int r;

	if (!ring_name_ok(ring))
		return ingot_fail(e, -EINVAL, "ring \"%.64s\": expected a ring name ([a-z0-9-])", ring);
	path = xasprintf("%s/%s.yaml", dir, ring);
	r = ring_policy_load(path, &p, e);
	if (r < 0)
		return r;
	if (strcmp(p->name, ring)) {
		r = ingot_fail(e, -EINVAL, "%s: ring: \"%s\", but the file is named for ring \"%s\"",
			       path, p->name, ring);
		ring_policy_free(p);
		return r;
	}
	*out = p;
	return 0;
}

void ring_policy_free(struct ring_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_req; i++)
		free(p->req[i].keyring);
	free(p->promotion_keyring);
	free(p->file);
	free(p);
}

const struct ring_requirement *ring_requirement(const struct ring_policy *p, const char *kind)
{
	for (size_t i = 0; i < p->n_req; i++)
		if (!strcmp(p->req[i].kind, kind))
			return &p->req[i];
	return NULL;
}
