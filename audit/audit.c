/* The audit driver: every report through node.c, then what only the
 * whole pool shows (replayed nonces, missing nodes), verdicts and order. */
#include "audit/audit-private.h"
#include "ops/ring.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/parfor.h"
#include "lib/xalloc.h"

/* Finding codes, most severe first: a node's verdict is its first. */
static const struct {
	const char *code;
	int cls;
} finding_codes[] = {
	{ "forged-quote", AUDIT_FORGED },
	{ "ak-not-enrolled", AUDIT_FORGED },
	{ "nonce-reused", AUDIT_FORGED },
	{ "nonce-mismatch", AUDIT_FORGED },
	{ "pcr-mismatch", AUDIT_FORGED },
	{ "log-mismatch", AUDIT_FORGED },
	{ "unknown-image", AUDIT_FORGED },
	{ "boot-refused", AUDIT_FORGED },    /* measured boot chain contradicts the UKI's manifest */
	{ "boot-unchecked", AUDIT_FORGED },  /* a UKI image's boot chain could not be checked */
	{ "ring-rollback", AUDIT_DRIFT },   /* ring evidence went backwards (older promotions served) */
	{ "malformed", AUDIT_DRIFT },
	{ "missing", AUDIT_DRIFT },
	{ "unquoted", AUDIT_DRIFT },
	{ "stale", AUDIT_DRIFT },
	{ "unknown-pool", AUDIT_DRIFT },
	{ "expired-manifest", AUDIT_DRIFT },
	{ "mixed-vendors", AUDIT_DRIFT },   /* the pool's images are of two GPU vendors */
	{ "drifted", AUDIT_DRIFT },
	{ "unverified", AUDIT_UNVERIFIED },
};

static int code_rank(const char *code)
{
	for (size_t i = 0; i < ARRAY_SIZE(finding_codes); i++)
		if (!strcmp(finding_codes[i].code, code))
			return (int)i;
	return (int)ARRAY_SIZE(finding_codes);
}

/* The row's verdict (its worst finding) and class; returns the
 * verdict's rank, an index in finding_codes (past its end: healthy). */
static int finish_row(json_t *row, const struct audit_row *v, int *cls)
{
	int best = (int)ARRAY_SIZE(finding_codes);
	const char *verdict = "healthy";

	*cls = AUDIT_HEALTHY;
	for (size_t i = 0; i < v->n_findings; i++) {
		int rk = code_rank(v->findings[i].code);
		if (rk < best) {
			best = rk;
			verdict = finding_codes[rk].code;
			*cls = finding_codes[rk].cls;
		}
	}
	json_object_set_new(row, "verdict", json_string(verdict));
	json_object_set_new(row, "class", json_integer(*cls));
	return best;
}

/* A node's row, sealed: its verdict and group set, the few fields the
 * pool-wide checks and the order need kept, the rest as compact text. */
struct node_entry {
	char *row;        /* compact JSON */
	char *node;
	char *report;     /* the report file, or NULL for a missing node */
	char *nonce;      /* the quote's nonce, or NULL */
	char *group;
	time_t time;      /* 0 when absent or not RFC 3339 */
	int cls, rank;    /* rank: index in finding_codes of the verdict */
};

static char *xdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void entry_release(struct node_entry *ne)
{
	free(ne->row);
	free(ne->node);
	free(ne->report);
	free(ne->nonce);
	free(ne->group);
	memset(ne, 0, sizeof(*ne));
}

/* Takes row. */
static void seal(struct node_entry *ne, json_t *row)
{
	if (!row)
		xalloc_die();   /* rows are built with json_pack: NULL is out of memory */
	entry_release(ne);
	struct audit_row v;
	audit_row_decode(row, &v);
	ne->rank = finish_row(row, &v, &ne->cls);
	const char *td = v.tuple_digest, *ex = v.expected_tuple_digest;
	/* (verdict, class and group replace members v does not point into) */
	ne->group = xstrdup(strcmp(td, "-") ? td : ex ? ex : "-");
	json_object_set_new(row, "group", json_string(ne->group));
	ne->node = xstrdup(v.node);
	ne->report = xdup_or_null(v.report);
	ne->nonce = xdup_or_null(v.nonce);
	if (!v.time || audit_parse_time(v.time, &ne->time) < 0)
		ne->time = 0;
	audit_row_release(&v);
	if (!(ne->row = json_compact(row, NULL)))
		xalloc_die();
	json_decref(row);
}

static json_t *unseal(const struct node_entry *ne)
{
	json_t *row = json_loads(ne->row, JSON_ALLOW_NUL, NULL);
	if (!row)
		xalloc_die();   /* our own compact text: only memory can fail */
	return row;
}

/* The rows kept, one per node, in the order their nodes were first met. */
struct pool_rows {
	struct node_entry *v;
	size_t n, cap;
	struct strmap index;   /* node -> position + 1 */
};

static struct node_entry *pool_find(struct pool_rows *p, const char *node)
{
	uintptr_t at = (uintptr_t)strmap_get(&p->index, node);
	return at ? &p->v[at - 1] : NULL;
}

static void pool_append(struct pool_rows *p, struct node_entry *ne)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 1024;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = *ne;
	*strmap_put(&p->index, ne->node, NULL) = (void *)(uintptr_t)p->n;
	memset(ne, 0, sizeof(*ne));
}

static void pool_free(struct pool_rows *p)
{
	for (size_t i = 0; i < p->n; i++)
		entry_release(&p->v[i]);
	free(p->v);
	strmap_free(&p->index, NULL);
}

struct report_batch {
	struct audit_ctx *c;
	struct dirent **ents;
	struct node_entry *out;
};

static void *aks_new(void *ctx)
{
	(void)ctx;
	return ak_cache_new();   /* the thread's own: no locks */
}

static void aks_free(void *aks)
{
	ak_cache_free(aks);
}

static int check_one(void *ctx, void *aks, size_t i, ingot_error *e)
{
	struct report_batch *b = ctx;
	const struct audit_report *ar = b->c->o->reports_dir ? NULL : &b->c->o->reports[i];

	(void)e;   /* a report's failure is its row, not the audit's */
	if (ar) {
		/* the decoder takes a reference of its own; ar's stays the caller's */
		_cleanup_node_report_ struct node_report *rep = node_report_decode((json_t *)ar->report);
		seal(&b->out[i], audit_node_check(b->c, aks, rep, ar->name, ar->stale));
		return 0;
	}
	_cleanup_free_ char *p = path_join(b->c->o->reports_dir, b->ents[i]->d_name);
	seal(&b->out[i], audit_node_report(b->c, aks, p, b->ents[i]->d_name));
	return 0;
}

/* Reports are independent (the context is read-only while they are
 * checked), so they spread over threads; out[i] belongs to ents[i]
 * whatever the thread count, so the result does not depend on it. */
static void check_reports(struct audit_ctx *c, struct dirent **ents, int n, struct node_entry *out)
{
	struct report_batch b = { .c = c, .ents = ents, .out = out };
	struct parfor pf = { .n = (size_t)n, .threads = c->o->jobs, .min_share = 16, .fn = check_one,
			     .ctx = &b, .local_new = aks_new, .local_free = aks_free };

	parfor_run(&pf, NULL, NULL);
}

/* Several reports of one node: the newest counts, the others are
 * listed in dups.  Takes *ne. */
static void keep_newest(struct pool_rows *p, struct node_entry *ne, json_t *dups)
{
	struct node_entry *old = pool_find(p, ne->node);

	if (!old) {
		pool_append(p, ne);
		return;
	}
	int newer = ne->time > old->time;
	struct node_entry *win = newer ? ne : old, *lose = newer ? old : ne;
	if (lose->report)
		json_array_append_new(dups, json_string(lose->report));
	_cleanup_json_ json_t *older = unseal(lose);
	json_t *row = unseal(win);
	audit_ring_compare(row, older);
	seal(win, row);
	if (newer) {
		entry_release(old);
		*old = *ne;
		memset(ne, 0, sizeof(*ne));
	} else {
		entry_release(ne);
	}
}

/* Every report in the reports directory (or in memory), checked, one
 * row per node. */
static int check_all_reports(struct audit_ctx *c, struct pool_rows *p, json_t *dups, ingot_error *e)
{
	struct dirent **ents = NULL;
	struct node_entry *out;
	int n, r;

	if (!c->o->reports_dir) {
		if (c->o->n_reports > INT_MAX)
			return ingot_fail(e, -E2BIG, "audit: %zu reports, expected at most %d", c->o->n_reports, INT_MAX);
		n = (int)c->o->n_reports;
	} else if ((r = audit_list_dir(c->o->reports_dir, ".json", &ents, &n, e)) < 0) {
		return r;
	}
	out = xcalloc((size_t)n + 1, sizeof(*out));
	check_reports(c, ents, n, out);
	for (int i = 0; i < n; i++) {
		keep_newest(p, &out[i], dups);
		if (ents)
			free(ents[i]);
	}
	free(ents);
	free(out);
	return 0;
}

/* The nodes whose quotes carry one nonce: positions in pool_rows. */
struct nonce_users {
	size_t *at;
	size_t n, cap;
};

static void nonce_users_free(void *p)
{
	struct nonce_users *u = p;
	free(u->at);
	free(u);
}

/* One nonce in two reports is a replayed quote.  With --nonces the
 * report carrying the nonce issued to it is the original; without,
 * every report sharing the nonce is suspect. */
static void flag_reused_nonces(struct audit_ctx *c, struct pool_rows *p)
{
	struct strmap by_nonce = STRMAP_INIT;

	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].nonce)
			continue;
		void **slot = strmap_put(&by_nonce, p->v[i].nonce, NULL);
		struct nonce_users *u = *slot ? *slot : (*slot = xcalloc(1, sizeof(*u)));
		if (u->n == u->cap)
			u->at = xrealloc(u->at, (u->cap = u->cap ? u->cap * 2 : 2) * sizeof(*u->at));
		u->at[u->n++] = i;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct node_entry *ne = &p->v[i];
		struct nonce_users *u = ne->nonce ? strmap_get(&by_nonce, ne->nonce) : NULL;
		if (!u || u->n < 2)
			continue;
		const char *iss = c->nonces ? json_string_value(json_object_get(c->nonces, ne->node)) : NULL;
		if (iss && !strcasecmp(iss, ne->nonce))
			continue;
		/* The first other node in report order names the replay. */
		size_t other = u->at[0] == i ? u->at[1] : u->at[0];
		json_t *row = unseal(ne);
		audit_add_finding(row, "nonce-reused", "quote nonce %.16s also in the report of %s", ne->nonce,
				  p->v[other].node);
		seal(ne, row);
	}
	strmap_free(&by_nonce, nonce_users_free);
}

/* Expected nodes without a report. */
static void add_missing_nodes(struct audit_ctx *c, struct pool_rows *p)
{
	const char *k;
	json_t *v;

	json_object_foreach(c->nodes, k, v) {
		if (pool_find(p, k))
			continue;
		const char *pool = json_string_length(v) ? json_string_value(v) : NULL;
		json_t *row = audit_new_row(k, pool, NULL);
		const struct audit_manifest *cur = audit_pool_current(c, pool);
		if (cur)
			json_object_set_new(row, "expected_tuple_digest", json_string(cur->tuple_digest));
		audit_add_finding(row, "missing", "no report from this node");
		struct node_entry ne = { 0 };
		seal(&ne, row);
		pool_append(p, &ne);
	}
}

static int entry_cmp(const void *x, const void *y)
{
	const struct node_entry *a = *(const struct node_entry *const *)x, *b = *(const struct node_entry *const *)y;
	int c = strcmp(a->group, b->group);
	if (c)
		return c;
	if (a->cls != b->cls)
		return audit_class_severity(b->cls) - audit_class_severity(a->cls);
	return strcmp(a->node, b->node);
}

/* Rows grouped by the tuple the node proves it runs (else the one it
 * should run), failing nodes first in each group, into r; and the
 * counts per verdict, most severe first. */
static json_t *sorted_rows(struct pool_rows *p, struct audit_result *r)
{
	size_t counts[ARRAY_SIZE(finding_codes) + 1] = { 0 };
	_cleanup_free_ struct node_entry **v = xcalloc(p->n + 1, sizeof(*v));
	json_t *summary = json_object();

	for (size_t i = 0; i < p->n; i++) {
		v[i] = &p->v[i];
		counts[p->v[i].rank]++;
		if (audit_class_severity(p->v[i].cls) > audit_class_severity(r->worst))
			r->worst = p->v[i].cls;
	}
	for (size_t k = 0; k <= ARRAY_SIZE(finding_codes); k++)
		if (counts[k])
			json_object_set_new(summary, k < ARRAY_SIZE(finding_codes) ? finding_codes[k].code : "healthy",
					    json_integer((json_int_t)counts[k]));
	qsort(v, p->n, sizeof(*v), entry_cmp);
	r->rows = xcalloc(p->n + 1, sizeof(*r->rows));
	for (size_t i = 0; i < p->n; i++) {
		r->rows[i] = v[i]->row;
		v[i]->row = NULL;
	}
	r->n = p->n;
	return summary;
}

int audit_run(const struct audit_opts *o, struct audit_result **out, ingot_error *e)
{
	_cleanup_(audit_ctx_free) struct audit_ctx c = { .o = o };
	_cleanup_json_ json_t *dups = json_array();
	struct pool_rows rows = { 0 };
	struct audit_result *res;
	json_t *summary;
	char nowbuf[32];
	struct tm tm;
	int r;

	*out = NULL;
	if ((r = audit_load_inputs(&c, e)) < 0 ||
	    (r = rings_load(c.o->promotions_dir, c.o->promotion_keyring, &c.rings, e)) < 0)
		return r;
	if ((r = check_all_reports(&c, &rows, dups, e)) < 0) {
		pool_free(&rows);
		return r;
	}
	flag_reused_nonces(&c, &rows);
	if (c.nodes)
		add_missing_nodes(&c, &rows);
	res = xcalloc(1, sizeof(*res));
	summary = sorted_rows(&rows, res);
	pool_free(&rows);
	gmtime_r(&o->now, &tm);
	strftime(nowbuf, sizeof(nowbuf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	res->head = json_pack("{s:s,s:s,s:I,s:O,s:o,s:o,s:O}", "schema", AUDIT_SCHEMA, "now", nowbuf,
			      "max_age", (json_int_t)o->max_age, "manifests", c.manifests_out,
			      "nodes", json_splice_mark(0), "summary", summary, "ignored_reports", dups);
	if (!res->head) {
		audit_result_free(res);
		return ingot_fail(e, -ENOMEM, "audit: out of memory");
	}
	*out = res;
	return 0;
}
