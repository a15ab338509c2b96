/* The audit driver: every report through node.c, then what only the
 * whole pool shows (replayed nonces, missing nodes), verdicts and order. */
#include "audit/audit-private.h"
#include "ops/ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"

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
	{ "drifted", AUDIT_DRIFT },
	{ "unverified", AUDIT_UNVERIFIED },
};

int audit_class_severity(int cls)
{
	static const int severity[] = {
		[AUDIT_HEALTHY] = 0, [AUDIT_UNVERIFIED] = 1, [AUDIT_DRIFT] = 2, [AUDIT_FORGED] = 3,
	};
	return cls >= 0 && (size_t)cls < ARRAY_SIZE(severity) ? severity[cls] : 3;
}

static int code_rank(const char *code)
{
	for (size_t i = 0; i < ARRAY_SIZE(finding_codes); i++)
		if (!strcmp(finding_codes[i].code, code))
			return (int)i;
	return (int)ARRAY_SIZE(finding_codes);
}

static void finish_row(json_t *row)
{
	json_t *f, *fs = json_object_get(row, "findings");
	size_t i;
	int best = (int)ARRAY_SIZE(finding_codes), cls = AUDIT_HEALTHY;
	const char *verdict = "healthy";

	json_array_foreach(fs, i, f) {
		int rk = code_rank(json_string_value(json_object_get(f, "code")));
		if (rk < best) {
			best = rk;
			verdict = finding_codes[rk].code;
			cls = finding_codes[rk].cls;
		}
	}
	json_object_set_new(row, "verdict", json_string(verdict));
	json_object_set_new(row, "class", json_integer(cls));
}

static int row_cmp(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	int ca = (int)json_integer_value(json_object_get(a, "class"));
	int cb = (int)json_integer_value(json_object_get(b, "class"));
	int c = strcmp(json_string_value(json_object_get(a, "group")),
		       json_string_value(json_object_get(b, "group")));
	if (c)
		return c;
	if (ca != cb)
		return audit_class_severity(cb) - audit_class_severity(ca);
	return strcmp(json_string_value(json_object_get(a, "node")),
		      json_string_value(json_object_get(b, "node")));
}

int audit_worst_class(const json_t *result)
{
	json_t *r;
	size_t i;
	int worst = AUDIT_HEALTHY;
	json_array_foreach(json_object_get(result, "nodes"), i, r) {
		int c = (int)json_integer_value(json_object_get(r, "class"));
		if (audit_class_severity(c) > audit_class_severity(worst))
			worst = c;
	}
	return worst;
}

struct worker {
	struct audit_ctx *c;
	struct dirent **ents;
	json_t **rows;
	int n, first, stride;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct ak_cache *aks = ak_cache_new();   /* this thread's: no locks */

	for (int i = w->first; i < w->n; i += w->stride) {
		_cleanup_free_ char *p = path_join(w->c->o->reports_dir, w->ents[i]->d_name);
		w->rows[i] = audit_node_report(w->c, aks, p, w->ents[i]->d_name);
	}
	ak_cache_free(aks);
	return NULL;
}

/* Reports are independent (the context is read-only while they are
 * checked), so they spread over threads; rows[i] belongs to ents[i]
 * whatever the thread count, so the result does not depend on it. */
static void check_reports(struct audit_ctx *c, struct dirent **ents, int n, json_t **rows)
{
	unsigned jobs = c->o->jobs;
	pthread_t tid[AUDIT_MAX_JOBS];
	struct worker w[AUDIT_MAX_JOBS];
	unsigned started = 0;

	if (!jobs) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = cpus < 1 ? 1 : cpus > AUDIT_MAX_JOBS ? AUDIT_MAX_JOBS : (unsigned)cpus;
	}
	if (jobs > AUDIT_MAX_JOBS)
		jobs = AUDIT_MAX_JOBS;
	if ((unsigned)n < jobs * 16u)
		jobs = 1;   /* not worth a thread */
	for (unsigned k = 0; k < jobs; k++)
		w[k] = (struct worker){ .c = c, .ents = ents, .rows = rows, .n = n,
					.first = (int)k, .stride = (int)jobs };
	/* Thread 0's share runs here; if a thread cannot start, its share
	 * runs here too. */
	for (unsigned k = 1; k < jobs; k++) {
		if (pthread_create(&tid[started], NULL, worker_run, &w[k]) == 0)
			started++;
		else
			worker_run(&w[k]);
	}
	worker_run(&w[0]);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}

/* Several reports of one node: the newest counts, the others are
 * listed in dups.  Takes rows[i] and ents[i]. */
static void keep_newest(struct audit_ctx *c, json_t *row, json_t *dups)
{
	const char *node = json_string_value(json_object_get(row, "node"));
	json_t *old = json_object_get(c->rows, node);
	time_t a = 0, b = 0;

	if (!old) {
		json_object_set_new(c->rows, node, row);
		return;
	}
	const char *ta = json_string_value(json_object_get(old, "time"));
	const char *tb = json_string_value(json_object_get(row, "time"));
	if (ta)
		audit_parse_time(ta, &a);
	if (tb)
		audit_parse_time(tb, &b);
	json_array_append(dups, json_object_get(b > a ? old : row, "report"));
	audit_ring_compare(b > a ? row : old, b > a ? old : row);
	if (b > a)
		json_object_set_new(c->rows, node, row);
	else
		json_decref(row);
}

/* Every report in the reports directory, checked, one row per node. */
static int check_all_reports(struct audit_ctx *c, json_t *dups, ingot_error *e)
{
	struct dirent **ents = NULL;
	json_t **rows;
	int n, r;

	r = audit_list_dir(c->o->reports_dir, ".json", &ents, &n, e);
	if (r < 0)
		return r;
	rows = calloc((size_t)n + 1, sizeof(*rows));
	if (rows)
		check_reports(c, ents, n, rows);
	for (int i = 0; i < n; i++) {
		if (rows)
			keep_newest(c, rows[i], dups);
		free(ents[i]);
	}
	free(ents);
	free(rows);
	return rows ? 0 : ingot_fail(e, -ENOMEM, "audit: out of memory");
}

/* One nonce in two reports is a replayed quote.  With --nonces the
 * report carrying the nonce issued to it is the original; without,
 * every report sharing the nonce is suspect. */
static void flag_reused_nonces(struct audit_ctx *c)
{
	json_t *by_nonce = json_object(), *row, *l;
	const char *k;

	json_object_foreach(c->rows, k, row) {
		const char *nh = json_string_value(json_object_get(row, "nonce"));
		if (!nh)
			continue;
		l = json_object_get(by_nonce, nh);
		if (!l)
			json_object_set_new(by_nonce, nh, l = json_array());
		json_array_append_new(l, json_string(k));
	}
	json_object_foreach(by_nonce, k, l) {
		size_t i, j;
		json_t *nn, *mm;

		if (json_array_size(l) < 2)
			continue;
		json_array_foreach(l, i, nn) {
			const char *self = json_string_value(nn);
			const char *iss = c->nonces ? json_string_value(json_object_get(c->nonces, self)) : NULL;
			if (iss && !strcasecmp(iss, k))
				continue;
			json_array_foreach(l, j, mm) {
				if (j == i)
					continue;
				audit_add_finding(json_object_get(c->rows, self), "nonce-reused",
						  "quote nonce %.16s also in the report of %s", k, json_string_value(mm));
				break;
			}
		}
	}
	json_decref(by_nonce);
}

/* Expected nodes without a report. */
static void add_missing_nodes(struct audit_ctx *c)
{
	const char *k;
	json_t *v;

	json_object_foreach(c->nodes, k, v) {
		if (json_object_get(c->rows, k))
			continue;
		const char *pool = json_string_length(v) ? json_string_value(v) : NULL;
		json_t *row = audit_new_row(k, pool, NULL);
		const struct pmanifest *cur = audit_pool_current(c, pool);
		if (cur)
			json_object_set_new(row, "expected_tuple_digest", json_string(cur->tuple_digest));
		audit_add_finding(row, "missing", "no report from this node");
		json_object_set_new(c->rows, k, row);
	}
}

/* Rows with verdicts, grouped by the tuple the node proves it runs
 * (else the one it should run), failing nodes first in each group; and
 * the counts per verdict, most severe first. */
static int sorted_rows(struct audit_ctx *c, json_t **nodes, json_t **summary, ingot_error *e)
{
	size_t nrows = json_object_size(c->rows), i = 0;
	_cleanup_free_ json_t **v = calloc(nrows + 1, sizeof(*v));
	const char *k;
	json_t *row;

	if (!v)
		return ingot_fail(e, -ENOMEM, "audit: out of memory");
	json_object_foreach(c->rows, k, row) {
		finish_row(row);
		const char *td = json_string_value(json_object_get(row, "tuple_digest"));
		const char *ex = json_string_value(json_object_get(row, "expected_tuple_digest"));
		json_object_set_new(row, "group", json_string(strcmp(td, "-") ? td : ex ? ex : "-"));
		v[i++] = row;
	}
	*summary = json_object();
	for (size_t r0 = 0; r0 <= ARRAY_SIZE(finding_codes); r0++) {
		const char *verdict = r0 < ARRAY_SIZE(finding_codes) ? finding_codes[r0].code : "healthy";
		json_int_t cnt = 0;
		for (size_t j = 0; j < nrows; j++)
			cnt += !strcmp(json_string_value(json_object_get(v[j], "verdict")), verdict);
		if (cnt)
			json_object_set_new(*summary, verdict, json_integer(cnt));
	}
	qsort(v, nrows, sizeof(*v), row_cmp);
	*nodes = json_array();
	for (i = 0; i < nrows; i++)
		json_array_append(*nodes, v[i]);
	return 0;
}

int audit_run(const struct audit_opts *o, json_t **out, ingot_error *e)
{
	_cleanup_(audit_ctx_free) struct audit_ctx c = { .o = o };
	_cleanup_json_ json_t *dups = json_array();
	json_t *nodes = NULL, *summary = NULL;
	char nowbuf[32];
	struct tm tm;
	int r;

	if ((r = audit_load_inputs(&c, e)) < 0 ||
	    (r = rings_load(c.o->promotions_dir, c.o->promotion_keyring, &c.rings, e)) < 0)
		return r;
	c.rows = json_object();
	if ((r = check_all_reports(&c, dups, e)) < 0)
		return r;
	flag_reused_nonces(&c);
	if (c.nodes)
		add_missing_nodes(&c);
	if ((r = sorted_rows(&c, &nodes, &summary, e)) < 0)
		return r;
	gmtime_r(&o->now, &tm);
	strftime(nowbuf, sizeof(nowbuf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	*out = json_pack("{s:s,s:s,s:I,s:O,s:o,s:o,s:O}", "schema", AUDIT_SCHEMA, "now", nowbuf,
			 "max_age", (json_int_t)o->max_age, "manifests", c.manifests_out,
			 "nodes", nodes, "summary", summary, "ignored_reports", dups);
	return *out ? 0 : ingot_fail(e, -ENOMEM, "audit: out of memory");
}
