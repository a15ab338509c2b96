/* ingot serve: HTTP front, verdicts, sweep (server/serve.h, docs/verifier.md). */
#include "server/serve.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attest/predict.h"
#include "attest/verdict.h"
#include "keys/envelope.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/time.h"
#include "lib/xalloc.h"
#include "server/db.h"
#include "server/db-group.h"
#include "server/enrol.h"
#include "server/manifests.h"
#include "server/pool.h"
#include "verify/boot-inputs.h"
#include "verify/report-tuple.h"

#define HISTORY 20
#define TOKEN_MAX 4096
#define NONCE_BYTES 32

/* HTTP statuses the service answers with, for the refusal counters. */
static const unsigned statuses[] = { 200, 400, 401, 403, 404, 405, 409, 410, 413, 429, 500, 503 };
/* Verdicts stored, for the verdict counters. */
static const char *const verdicts[] = { "admit", "refuse", "unverified", "not-made", "stale", "drain" };

/* A pool of database connections: one per request thread at a time. */
struct db_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct db **free;
	size_t nfree, n;
};

struct serve {
	const struct serve_config *c;
	struct serve_log log;
	struct boot_trust trust;
	/* trust grows by approved enrolments: readers (nonce, evidence) and
	 * the approval's writer */
	pthread_rwlock_t trust_mu;
	struct signing_key *enrol_key;   /* enrolment-key, or NULL */
	struct db_pool pool;        /* reads, the sweep, operators */
	struct db_group *group;     /* the requests' writes, grouped */
	struct MHD_Daemon *mhd;
	int fd;
	char address[INET6_ADDRSTRLEN + 16];
	char *token;
	/* the sweep */
	pthread_t sweeper;
	int sweeping;
	pthread_mutex_t stop_mu;
	pthread_cond_t stop_cv;
	int stopping;
	/* record files refused at a nonce request: node -> struct refused */
	pthread_mutex_t refused_mu;
	struct strmap refused;
	/* nonces answered, their writes not yet committed: node -> struct issuing */
	pthread_mutex_t issuing_mu;
	struct strmap issuing;
	/* the per-node evidence rate: node -> struct rate */
	pthread_mutex_t rate_mu;
	struct strmap rates;
	/* metrics */
	atomic_ullong by_status[ARRAY_SIZE(statuses)];
	atomic_ullong by_verdict[ARRAY_SIZE(verdicts)];
	atomic_ullong nonces_issued, hook_failures, evidence_us, evidence_count;
};

static void logf_(struct serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct serve *s, const char *fmt, ...)
{
	char line[INGOT_ERR_MSG + 512];
	va_list ap;

	if (!s->log.line)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log.line(s->log.arg, line);
}

/* ---- database pool ------------------------------------------------------ */

static int pool_open(struct db_pool *p, const char *spec, size_t n, ingot_error *e)
{
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->free = xcalloc(n, sizeof(*p->free));
	for (p->n = 0; p->n < n; p->n++) {
		int r = db_open(spec, &p->free[p->n], e);
		if (r < 0)
			return r;
		p->nfree++;
	}
	return 0;
}

static void pool_close(struct db_pool *p)
{
	for (size_t i = 0; i < p->nfree; i++)
		p->free[i]->ops->close(p->free[i]);
	free(p->free);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

static struct db *pool_get(struct db_pool *p)
{
	struct db *d;

	pthread_mutex_lock(&p->mu);
	while (!p->nfree)
		pthread_cond_wait(&p->cv, &p->mu);
	d = p->free[--p->nfree];
	pthread_mutex_unlock(&p->mu);
	return d;
}

static void pool_put(struct db_pool *p, struct db *d)
{
	pthread_mutex_lock(&p->mu);
	p->free[p->nfree++] = d;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* ---- the hook ------------------------------------------------------------- */

static void run_hook(struct serve *s, const char *node, const char *verdict, const char *reason)
{
	ingot_error e = { 0 };

	if (s->c->hook && serve_run_hook(s->c->hook, node, verdict, reason, s->c->hook_timeout, &e) < 0) {
		atomic_fetch_add(&s->hook_failures, 1);
		logf_(s, "hook: node %s, %s: %s", node, verdict, e.msg);
	}
}

static void count_verdict(struct serve *s, const char *v)
{
	for (size_t i = 0; i < ARRAY_SIZE(verdicts); i++)
		if (!strcmp(verdicts[i], v))
			atomic_fetch_add(&s->by_verdict[i], 1);
}

/* ---- responses ------------------------------------------------------------ */

struct request {
	struct strbuf body;
	int too_big;
	int answered;
	/* A write handed to the committer (server/db-group.h): the connection
	 * is suspended, no thread waits for it; the committer resumes it once
	 * the write is durable, and only then is answer() run to reply. */
	struct MHD_Connection *conn;
	enum MHD_Result (*answer)(struct serve *s, struct MHD_Connection *conn, struct request *rq);
	atomic_int committed;
	struct db_group_job job;
	json_t *doc;                         /* the body: the write's strings point into it */
	char nonce[2 * NONCE_BYTES + 1];     /* a nonce issued */
	struct db_verdict v;                 /* a verdict stored */
	struct boot_result res;
	const struct manifest *judged;
	char *evidence;                      /* the stored evidence document (pool view) */
	struct timespec t0;
};

/* The committer's word that rq's write is durable (or failed). */
static void write_done(void *arg)
{
	struct request *rq = arg;

	atomic_store(&rq->committed, 1);
	MHD_resume_connection(rq->conn);
}

/* Suspend rq's connection before its write is handed over (so the resume
 * never comes first); answer() replies once it is committed. */
static void defer(struct MHD_Connection *conn, struct request *rq, json_t *doc,
		  enum MHD_Result (*answer)(struct serve *, struct MHD_Connection *, struct request *))
{
	rq->conn = conn;
	rq->doc = doc;
	rq->answer = answer;
	MHD_suspend_connection(conn);
}

/* Queue resp (NULL: out of memory, no reply rather than a wrong one),
 * counted by status. */
static enum MHD_Result reply_response(struct serve *s, struct MHD_Connection *conn, unsigned status,
				      struct MHD_Response *resp, const char *type)
{
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
		if (statuses[i] == status)
			atomic_fetch_add(&s->by_status[i], 1);
	return r;
}

static enum MHD_Result reply_text(struct serve *s, struct MHD_Connection *conn, unsigned status, char *text,
				  const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);

	if (!resp)
		free(text);
	return reply_response(s, conn, status, resp, type);
}

/* Printable ASCII only, whatever a request or a log held: the line stays
 * one line and valid JSON text. */
static void one_line(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			*p = '?';
}

/* A JSON document on one line (stolen). */
static enum MHD_Result reply_json(struct serve *s, struct MHD_Connection *conn, unsigned status, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	char *line;

	json_decref(j);
	if (!text)   /* out of memory: no reply rather than a wrong one */
		return MHD_NO;
	line = xasprintf("%s\n", text);
	free(text);
	return reply_text(s, conn, status, line, "application/json");
}

/* A refusal: {"error": "one line naming what was wrong"}. */
static enum MHD_Result reply_error(struct serve *s, struct MHD_Connection *conn, unsigned status, const char *fmt,
				   ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result reply_error(struct serve *s, struct MHD_Connection *conn, unsigned status, const char *fmt,
				   ...)
{
	char msg[INGOT_ERR_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	one_line(msg);
	return reply_json(s, conn, status, json_pack("{s:s,s:i}", "error", msg, "status", (int)status));
}

/* ---- request bodies ------------------------------------------------------- */

static enum MHD_Result parse_body(struct serve *s, struct MHD_Connection *conn, const struct request *rq,
				  const char *what, json_t **out)
{
	json_error_t je;

	*out = json_loadb(rq->body.buf, rq->body.len, JSON_REJECT_DUPLICATES, &je);
	if (!*out)
		return reply_error(s, conn, 400, "%s: body: expected JSON, got %s at line %d column %d", what, je.text,
				   je.line, je.column);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return reply_error(s, conn, 400, "%s: body: expected a JSON object", what);
	}
	return MHD_YES;
}

/* A member that must be a string; NULL after replying 400. */
static const char *need_str(const json_t *o, const char *key, const char *what, const char **why)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v)) {
		*why = v ? "expected a string" : "missing";
		(void)what;
		return NULL;
	}
	return json_string_value(v);
}

static int node_name_ok(const char *n)
{
	return n && attest_name_ok(n) && !strchr(n, '/');
}

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* ---- endpoints ------------------------------------------------------------ */

/* A record file refused at a nonce request, as it was then. */
struct refused {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
};

static int refused_same(const struct refused *r, const struct stat *st)
{
	return r && r->dev == st->st_dev && r->ino == st->st_ino && r->size == st->st_size &&
	       r->mtime.tv_sec == st->st_mtim.tv_sec && r->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Log why node's record file st was refused, and remember it so. */
static void refuse_record(struct serve *s, const char *node, const struct stat *st, const char *why)
{
	int created;

	logf_(s, "enrolments: %s", why);
	pthread_mutex_lock(&s->refused_mu);
	void **slot = strmap_put(&s->refused, node, &created);
	if (created)
		*slot = xcalloc(1, sizeof(struct refused));
	*(struct refused *)*slot = (struct refused){ .dev = st->st_dev, .ino = st->st_ino, .mtime = st->st_mtim,
						     .size = st->st_size };
	pthread_mutex_unlock(&s->refused_mu);
}

/* Whether node is enrolled.  A node the table lacks may have been
 * approved since start by another replica sharing the enrolments
 * directory, or recorded there offline: its NODE.json is loaded then,
 * verified as at start (one that does not verify is not trusted).  The
 * check runs outside the trust's lock (the keyrings never change), the
 * write lock is taken only to insert; a file refused is remembered by
 * what it was (inode, mtime, size) and not verified again, nor logged
 * again, until it changes: junk in the directory costs one check. */
static int enrolled_now(struct serve *s, const char *node)
{
	_cleanup_free_ char *base = NULL, *path = NULL;
	ingot_error e = { 0 };
	struct enrolment en;
	struct stat st;
	int enrolled;

	pthread_rwlock_rdlock(&s->trust_mu);
	enrolled = strmap_get(&s->trust.en_of, node) != NULL;
	pthread_rwlock_unlock(&s->trust_mu);
	if (enrolled || !s->c->enrolments || enroll_node_check("node", node, NULL) < 0)
		return enrolled;
	base = xasprintf("%s.json", node);
	path = path_join(s->c->enrolments, base);
	if (stat(path, &st) < 0)
		return 0;
	pthread_mutex_lock(&s->refused_mu);
	int same = refused_same(strmap_get(&s->refused, node), &st);
	pthread_mutex_unlock(&s->refused_mu);
	if (same)
		return 0;
	if (boot_trust_load_enrolment(&s->trust, path, &en, &e) < 0) {
		refuse_record(s, node, &st, e.msg);
		return 0;
	}
	/* NODE.json is NODE's record or nothing: another node's would be
	 * added again at each request. */
	if (strcmp(en.node, node)) {
		snprintf(e.msg, sizeof(e.msg), "%s: predicate.node: expected %s (the file's name), got %s", path, node,
			 en.node);
		refuse_record(s, node, &st, e.msg);
		enrolment_release(&en);
		return 0;
	}
	pthread_rwlock_wrlock(&s->trust_mu);
	if (!strmap_get(&s->trust.en_of, node))   /* else another request inserted it first */
		boot_trust_insert_enrolment(&s->trust, &en);
	enrolled = strmap_get(&s->trust.en_of, node) != NULL;
	pthread_rwlock_unlock(&s->trust_mu);
	enrolment_release(&en);   /* what insert did not take */
	return enrolled;
}

/* A nonce is answered before its write is durable (docs/verifier.md
 * "Nonces"): a nonce lost before its commit is refused at evidence time
 * as unknown, so the node only retries.  Its write belongs to the
 * committer until written() runs; until then the node's entry lists it,
 * for the per-node limit and for evidence that comes before the commit. */
struct nonce_write {
	struct db_group_job job;
	struct serve *s;
	struct issuing *of;
	struct nonce_write *next;   /* of's other writes */
	char node[256];
	char nonce[2 * NONCE_BYTES + 1];
};

struct issuing {
	struct nonce_write *head;
};

/* List w under its node; returns how many of the node's other nonces
 * are still uncommitted. */
static unsigned issuing_add(struct serve *s, struct nonce_write *w)
{
	unsigned others = 0;
	int created;

	pthread_mutex_lock(&s->issuing_mu);
	void **slot = strmap_put(&s->issuing, w->node, &created);
	if (created)
		*slot = xcalloc(1, sizeof(struct issuing));
	w->of = *slot;
	for (const struct nonce_write *o = w->of->head; o; o = o->next)
		others++;
	w->next = w->of->head;
	w->of->head = w;
	pthread_mutex_unlock(&s->issuing_mu);
	return others;
}

static void issuing_drop(struct serve *s, struct nonce_write *w)
{
	pthread_mutex_lock(&s->issuing_mu);
	for (struct nonce_write **p = &w->of->head; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&s->issuing_mu);
}

/* Whether node's nonce was answered here and its write is still queued
 * (then the evidence's write is queued behind it: db-group.c). */
static int issuing_has(struct serve *s, const char *node, const char *nonce)
{
	int found = 0;

	pthread_mutex_lock(&s->issuing_mu);
	const struct issuing *is = strmap_get(&s->issuing, node);
	for (const struct nonce_write *w = is ? is->head : NULL; w && !found; w = w->next)
		found = !strcmp(w->nonce, nonce);
	pthread_mutex_unlock(&s->issuing_mu);
	return found;
}

/* The committer's word on a nonce already answered: stored, or not (then
 * its evidence is refused as unknown). */
static void nonce_written(void *arg)
{
	struct nonce_write *w = arg;

	if (w->job.r < 0 && w->job.r != -ECANCELED)
		logf_(w->s, "nonce for %s not stored (its evidence will be refused): %s", w->node, w->job.e.msg);
	issuing_drop(w->s, w);
	free(w);
}

static enum MHD_Result do_nonce(struct serve *s, struct MHD_Connection *conn, struct request *rq)
{
	_cleanup_json_ json_t *b = NULL;
	enum MHD_Result mr = parse_body(s, conn, rq, "nonce", &b);
	const char *why = NULL, *node;
	uint8_t raw[NONCE_BYTES];
	int64_t now = now_s(), exp = now + s->c->nonce_lifetime, held = 0;
	char when[TIME_RFC3339_LEN];
	ingot_error e = { 0 };

	if (!b)
		return mr;
	if (!(node = need_str(b, "node", "nonce", &why)))
		return reply_error(s, conn, 400, "nonce: node: %s", why);
	if (!node_name_ok(node))
		return reply_error(s, conn, 400, "nonce: node: expected 1-255 printable characters without spaces or '/'");
	/* Only an enrolled node's evidence can be admitted: others get no
	 * nonce, so junk cannot fill the table. */
	if (!enrolled_now(s, node))
		return reply_error(s, conn, 404, "nonce: node %s: not enrolled", node);
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return reply_error(s, conn, 500, "nonce: the random generator failed");
	hex_encode(raw, sizeof(raw), rq->nonce);
	struct nonce_write *w = xcalloc(1, sizeof(*w));
	w->s = s;
	snprintf(w->node, sizeof(w->node), "%s", node);
	memcpy(w->nonce, rq->nonce, sizeof(w->nonce));
	/* The limit, decided before answering: this replica's uncommitted
	 * nonces (counted first: one committed meanwhile is then in the
	 * read) and the stored ones.  Two racing requests each count the
	 * other; the commit checks the limit again (replicas). */
	unsigned others = issuing_add(s, w);
	struct db *d = pool_get(&s->pool);
	int r = d->ops->nonces_held(d, node, now, &held, &e);
	pool_put(&s->pool, d);
	if (r < 0 || held + others >= s->c->max_nonces) {
		issuing_drop(s, w);
		free(w);
		if (r < 0)
			return reply_error(s, conn, 503, "nonce: %s", e.msg);
		return reply_error(s, conn, 429, "nonce: node %s holds %lld unused nonces, at most %u", node,
				   (long long)(held + others), s->c->max_nonces);
	}
	db_group_nonce_issue(s->group, &w->job, w->node, w->nonce, now, exp, s->c->max_nonces, nonce_written, w);
	atomic_fetch_add(&s->nonces_issued, 1);
	return reply_json(s, conn, 200, json_pack("{s:s,s:s,s:s,s:I}", "node", node, "nonce", rq->nonce, "expires",
						  time_format((time_t)exp, when), "lifetime",
						  (json_int_t)s->c->nonce_lifetime));
}

static unsigned nonce_status(enum db_nonce n)
{
	return n == DB_NONCE_USED ? 409 : n == DB_NONCE_EXPIRED ? 410 : 404;
}

/* The report's tuple, for a boot the verdict admitted: the node's word
 * about what no PCR covers (the loaded driver, the libraries) compared
 * with the manifest it booted; a contradiction refuses, a check not made
 * is "not-made", never an admission. */
static void judge_report(const struct manifest *manifest, const json_t *doc, const char *node, struct boot_result *res)
{
	_cleanup_node_report_ struct node_report *report = node_report_decode((json_t *)doc);
	const char *id = report->node_id;
	char why[INGOT_ERR_MSG - 64];

	if (!id || strcmp(id, node)) {
		res->verdict = BOOT_REFUSE;
		snprintf(res->reason, sizeof(res->reason), "report: node.id %.255s, expected %.255s", id ? id : "(missing)",
			 node);
		return;
	}
	switch (report_tuple_check(manifest, report, why, sizeof(why))) {
	case ST_FAIL:
		res->verdict = BOOT_REFUSE;
		snprintf(res->reason, sizeof(res->reason), "tuple: %s", why);
		break;
	case ST_ERROR:
		res->verdict = BOOT_NOT_MADE;
		snprintf(res->reason, sizeof(res->reason), "tuple: could not check: %s", why);
		break;
	default:
		break;
	}
}

/* Judge one node's evidence: the one verdict on the trust loaded at start.
 * *judged: the manifest it was judged against, or NULL (the trust's
 * manifests live as long as the service). */
static void judge(struct serve *s, const char *node, const struct nonce *nonce, const json_t *quote, const uint8_t *log,
		  size_t log_len, const json_t *report, struct boot_result *res, const struct manifest **judged)
{
	struct boot_proof p;
	struct boot_pick pick;
	struct boot_evidence ev;
	ingot_error e = { 0 };

	*judged = NULL;
	if (boot_proof_parse(&p, "evidence", quote, log, log_len, nonce, &e) < 0) {
		/* Evidence that does not even parse proves nothing: refused. */
		memset(res, 0, sizeof(*res));
		res->verdict = BOOT_REFUSE;
		res->code = e.code;
		snprintf(res->reason, sizeof(res->reason), "%s", e.msg);
	} else {
		pthread_rwlock_rdlock(&s->trust_mu);   /* pick points into the trust */
		boot_trust_pick(&s->trust, &p, node, &pick);
		boot_inputs_evidence(&p, &pick, node, s->c->accept_weak, &ev);
		if (attest_boot_verdict(&ev, res) == BOOT_ADMIT && report)
			judge_report(pick.manifest, report, node, res);
		*judged = pick.manifest;
		pthread_rwlock_unlock(&s->trust_mu);
	}
	boot_proof_release(&p);
}

/* One node's evidence in the current minute (a fixed window). */
struct rate {
	int64_t minute;
	unsigned count;
};

/* Whether node may send one more piece of evidence this minute.  Only
 * enrolled nodes are counted (others are refused anyway, for want of a
 * nonce), so the table never holds more than the enrolment. */
static int rate_ok(struct serve *s, const char *node, int64_t now)
{
	struct rate *r;
	int created, ok;

	pthread_rwlock_rdlock(&s->trust_mu);
	int enrolled = strmap_get(&s->trust.en_of, node) != NULL;
	pthread_rwlock_unlock(&s->trust_mu);
	if (!enrolled)
		return 1;
	pthread_mutex_lock(&s->rate_mu);
	void **slot = strmap_put(&s->rates, node, &created);
	if (created)
		*slot = xcalloc(1, sizeof(struct rate));
	r = *slot;
	if (r->minute != now / 60)
		r->minute = now / 60, r->count = 0;
	ok = r->count < s->c->max_evidence;
	r->count += ok;
	pthread_mutex_unlock(&s->rate_mu);
	return ok;
}

static enum MHD_Result evidence_answer(struct serve *s, struct MHD_Connection *conn, struct request *rq)
{
	const struct db_verdict *v = &rq->v;
	const struct manifest *judged = rq->judged;
	char when[TIME_RFC3339_LEN];
	struct timespec t1;

	if (rq->job.r < 0)
		return reply_error(s, conn, 503, "evidence: %s", rq->job.e.msg);
	if (rq->job.nonce_state != DB_NONCE_OK)   /* another request consumed it first */
		return reply_error(s, conn, nonce_status(rq->job.nonce_state), "evidence: nonce %.16s...: %s", v->nonce,
				   db_nonce_name(rq->job.nonce_state));
	count_verdict(s, v->verdict);
	logf_(s, "node %s: %s: %s", v->node, v->verdict, v->reason);
	run_hook(s, v->node, v->verdict, v->reason);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&s->evidence_us, (unsigned long long)((t1.tv_sec - rq->t0.tv_sec) * 1000000 +
							     (t1.tv_nsec - rq->t0.tv_nsec) / 1000));
	atomic_fetch_add(&s->evidence_count, 1);
	/* Which image it was judged against: in a pool of two vendors, the
	 * one its quote's PCR 15 claims. */
	json_t *mf = judged ? json_pack("{s:s,s:I,s:s?}", "pool", judged->recipe.name, "serial",
					(json_int_t)judged->serial, "vendor", boot_manifest_vendor(judged)) : NULL;
	return reply_json(s, conn, 200, json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o?}", "node", v->node, "verdict", v->verdict,
						  "reason", v->reason, "time", time_format((time_t)v->time, when),
						  "ak_id", v->ak_id, "manifest", mf));
}

static enum MHD_Result do_evidence(struct serve *s, struct MHD_Connection *conn, struct request *rq)
{
	_cleanup_json_ json_t *b = NULL;
	_cleanup_free_ uint8_t *log = NULL;
	enum MHD_Result mr = parse_body(s, conn, rq, "evidence", &b);
	const char *why = NULL, *node, *nonce, *log64;
	const json_t *quote;
	struct boot_result *res = &rq->res;
	enum db_nonce ns = DB_NONCE_OK;
	ingot_error e = { 0 };
	size_t log_len = 0;
	struct nonce decoded;   /* once, here: the verdict gets its bytes */

	clock_gettime(CLOCK_MONOTONIC, &rq->t0);
	if (!b)
		return mr;
	if (!(node = need_str(b, "node", "evidence", &why)) || !(nonce = need_str(b, "nonce", "evidence", &why)) ||
	    !(log64 = need_str(b, "eventlog", "evidence", &why)))
		return reply_error(s, conn, 400, "evidence: %s: %s",
				   !json_is_string(json_object_get(b, "node")) ? "node" :
				   !json_is_string(json_object_get(b, "nonce")) ? "nonce" : "eventlog", why);
	if (!node_name_ok(node))
		return reply_error(s, conn, 400, "evidence: node: expected 1-255 printable characters without spaces or '/'");
	if (!rate_ok(s, node, now_s()))
		return reply_error(s, conn, 429, "evidence: node %s: more than %u pieces of evidence this minute "
				   "(max-evidence-per-minute)", node, s->c->max_evidence);
	if (!json_is_object(quote = json_object_get(b, "quote")))
		return reply_error(s, conn, 400, "evidence: quote: expected a quote document (JSON object)");
	if (json_object_get(b, "report") && !json_is_object(json_object_get(b, "report")))
		return reply_error(s, conn, 400, "evidence: report: expected a node report (JSON object)");
	if (base64_decode(log64, strlen(log64), &log, &log_len) < 0)
		return reply_error(s, conn, 400, "evidence: eventlog: expected base64");
	if (nonce_decode(nonce, &decoded, NULL) < 0)
		return reply_error(s, conn, 400, "evidence: nonce: expected %d-%d hex digits", 2 * NONCE_MIN, 2 * NONCE_MAX);
	/* A read first: no judging for a nonce that cannot be consumed.  One
	 * answered here whose write is still queued is looked for first (once
	 * committed it is dropped from the list, and the read sees it). */
	int r = 0;
	if (!issuing_has(s, node, nonce)) {
		struct db *d = pool_get(&s->pool);
		r = d->ops->nonce_check(d, node, nonce, now_s(), &ns, &e);
		pool_put(&s->pool, d);
	}
	if (r < 0)
		return reply_error(s, conn, 503, "evidence: %s", e.msg);
	if (ns != DB_NONCE_OK)
		return reply_error(s, conn, nonce_status(ns), "evidence: nonce %.16s...: %s", nonce, db_nonce_name(ns));
	judge(s, node, &decoded, quote, log, log_len, json_object_get(b, "report"), res, &rq->judged);
	one_line(res->reason);   /* stored, passed to the hook and answered alike */
	rq->v = (struct db_verdict){ .node = node, .nonce = nonce, .time = now_s(), .verdict = boot_verdict_name(res->verdict),
				     .reason = res->reason, .ak_id = res->qi.ak_id[0] ? res->qi.ak_id : NULL };
	/* Kept as the node's latest with the verdict, for the pool view. */
	rq->evidence = pool_evidence_doc(json_object_get(b, "report"), node, quote, log64, rq->v.time);
	rq->v.evidence = rq->evidence;
	rq->v.pool = rq->judged ? rq->judged->recipe.name :
		json_string_value(json_object_get(json_object_get(b, "report"), "pool"));
	defer(conn, rq, TAKE_PTR(b), evidence_answer);
	db_group_verdict_commit(s->group, &rq->job, &rq->v, write_done, rq);
	return MHD_YES;
}

static enum MHD_Result do_node(struct serve *s, struct MHD_Connection *conn, const char *node)
{
	json_t *o = NULL;
	ingot_error e = { 0 };

	if (!node_name_ok(node))
		return reply_error(s, conn, 400, "nodes: expected a node name, got \"%.80s\"", node);
	struct db *d = pool_get(&s->pool);
	int r = d->ops->node_get(d, node, HISTORY, &o, &e);
	pool_put(&s->pool, d);
	if (r < 0)
		return reply_error(s, conn, 503, "nodes: %s", e.msg);
	if (!o)
		return reply_error(s, conn, 404, "nodes: node %s: never judged", node);
	return reply_json(s, conn, 200, o);
}

static enum MHD_Result do_pool(struct serve *s, struct MHD_Connection *conn, const char *pool)
{
	_cleanup_json_ json_t *rows = NULL;
	char *o = NULL;
	ingot_error e = { 0 };

	if (!node_name_ok(pool))
		return reply_error(s, conn, 400, "pools: expected a pool name, got \"%.80s\"", pool);
	struct db *d = pool_get(&s->pool);
	int r = d->ops->pool_evidence(d, pool, &rows, &e);
	pool_put(&s->pool, d);   /* the audit runs without holding it */
	if (r < 0)
		return reply_error(s, conn, 503, "pools: %s", e.msg);
	pthread_rwlock_rdlock(&s->trust_mu);   /* the audit reads the trust */
	unsigned status = pool_view(s->c, &s->trust, rows, pool, now_s(), &o, &e);
	pthread_rwlock_unlock(&s->trust_mu);
	return o ? reply_text(s, conn, 200, o, "application/json") : reply_error(s, conn, status, "pools: %s", e.msg);
}

/* GET /v1/manifests/POOL[/NAME][?root=HEX] (server/manifests.h): the
 * bytes as signed, so the node checks the very signature; sent from the
 * file, so a request holds no copy of it. */
static enum MHD_Result do_manifests(struct serve *s, struct MHD_Connection *conn, const char *rest)
{
	const char *root = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "root");
	uint64_t size = 0;
	int fd = -1;
	ingot_error e = { 0 };

	pthread_rwlock_rdlock(&s->trust_mu);
	unsigned status = manifests_get(s->c, &s->trust, rest, root, &fd, &size, &e);
	pthread_rwlock_unlock(&s->trust_mu);
	if (status != 200)
		return reply_error(s, conn, status, "%s", e.msg);
	struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);   /* closes fd */
	if (!resp)
		close(fd);
	return reply_response(s, conn, 200, resp, "application/json");
}

/* Trust-changing operations: "Authorization: Bearer TOKEN". */
static int authorized(struct serve *s, struct MHD_Connection *conn, unsigned *status, const char **why)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

	if (!s->token) {
		*status = 403, *why = "no token-file configured: trust-changing operations are off";
		return 0;
	}
	if (!h || strncmp(h, "Bearer ", 7)) {
		*status = 401, *why = "expected an Authorization: Bearer TOKEN header";
		return 0;
	}
	h += 7;
	if (strlen(h) != strlen(s->token) || CRYPTO_memcmp(h, s->token, strlen(h))) {
		*status = 403, *why = "the token is not the verifier's";
		return 0;
	}
	return 1;
}

/* The operator's override, drain or admit (the token's): stored and
 * hooked as a verdict is, its reason "operator: ...".  An admitted node
 * still goes stale after stale-after without evidence. */
static enum MHD_Result do_override(struct serve *s, struct MHD_Connection *conn, const struct request *rq,
				   const char *node, const char *verdict)
{
	_cleanup_json_ json_t *b = NULL;
	unsigned status;
	const char *why, *what;
	char reason[INGOT_ERR_MSG];
	ingot_error e = { 0 };

	if (!authorized(s, conn, &status, &why))
		return reply_error(s, conn, status, "%s: %s", verdict, why);
	if (!node_name_ok(node))
		return reply_error(s, conn, 400, "%s: expected a node name, got \"%.80s\"", verdict, node);
	if (rq->body.len) {
		enum MHD_Result mr = parse_body(s, conn, rq, verdict, &b);
		if (!b)
			return mr;
	}
	what = json_string_value(json_object_get(b, "reason"));
	snprintf(reason, sizeof(reason), "operator: %s", what ? what : !strcmp(verdict, "admit") ? "admitted" : "drained");
	for (char *p = reason; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	struct db_verdict v = { .node = node, .time = now_s(), .verdict = verdict, .reason = reason };
	struct db *d = pool_get(&s->pool);
	int r = d->ops->verdict_record(d, &v, &e);
	pool_put(&s->pool, d);
	if (r < 0)
		return reply_error(s, conn, 503, "%s: %s", verdict, e.msg);
	count_verdict(s, verdict);
	logf_(s, "node %s: %s: %s", node, verdict, reason);
	run_hook(s, node, verdict, reason);
	return reply_json(s, conn, 200, json_pack("{s:s,s:s,s:s}", "node", node, "verdict", verdict, "reason", reason));
}

/* ---- enrolment (server/enrol.h) ------------------------------------------- */

static enum MHD_Result reply_enrol(struct serve *s, struct MHD_Connection *conn, unsigned status, json_t *j,
				   const ingot_error *e)
{
	if (status == 200)
		return reply_json(s, conn, 200, j);
	json_decref(j);
	return reply_error(s, conn, status, "%s", e->msg);
}

/* POST /v1/enrolments: open, like the evidence: the request proves
 * nothing, and its challenge only the node's TPM can answer. */
static enum MHD_Result do_enrol_request(struct serve *s, struct MHD_Connection *conn, const struct request *rq)
{
	_cleanup_json_ json_t *b = NULL;
	enum MHD_Result mr = parse_body(s, conn, rq, "enrolments", &b);
	const char *node = json_string_value(json_object_get(b, "node"));
	json_t *ch = NULL;
	ingot_error e = { 0 };

	if (!b)
		return mr;
	/* One record per node: another AK for it is a decision made by
	 * removing the old record, not by asking. */
	if (node && enrolled_now(s, node))
		return reply_error(s, conn, 409, "enrolments: node %s: already enrolled (remove its record "
				   "from the enrolments directory to enrol another AK)", node);
	struct db *d = pool_get(&s->pool);
	unsigned st = enrol_request(d, s->c->enrolment_ca, s->c->ek_ca, s->c->enrolment_ttl, b, now_s(), &ch, &e);
	pool_put(&s->pool, d);
	if (st == 200)
		logf_(s, "enrolment %s: node %s: challenged", json_string_value(json_object_get(ch, "id")), node);
	return reply_enrol(s, conn, st, ch, &e);
}

/* The signed record in the enrolments directory, added to the trust:
 * from now on the node gets nonces.  Under the trust's write lock, so
 * one node gets one record. */
static unsigned enrol_record(struct serve *s, const struct enroll_subject *subj, int64_t now, char **path,
			     ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	_cleanup_free_ char *base = xasprintf("%s.json", subj->node);
	unsigned st = 500;

	*path = path_join(s->c->enrolments, base);
	pthread_rwlock_wrlock(&s->trust_mu);
	if (strmap_get(&s->trust.en_of, subj->node) || access(*path, F_OK) == 0) {
		st = 409;
		ingot_fail(e, -EEXIST, "enrolments: node %s: already enrolled (%s)", subj->node, *path);
	} else if (enrolment_sign(subj, (time_t)now, s->enrol_key, &env, e) == 0 &&
		   json_write_file_as(*path, env, envelope_canonical, 0644, e) == 0) {
		/* Read back and verified as at start: a record the enrolment
		 * role does not accept is never trusted. */
		if (boot_trust_add_enrolment(&s->trust, *path, e) == 0)
			st = 200;
		else
			unlink(*path);
	}
	pthread_rwlock_unlock(&s->trust_mu);
	return st;
}

/* Approve proven enrolment id (by: who approved, for the log): the
 * record signed and trusted; 200 and *rep, or the refusal's status. */
static unsigned enrol_approve(struct serve *s, const char *id, const char *by, json_t **rep, ingot_error *e)
{
	_cleanup_free_ char *path = NULL;
	struct enroll_subject subj;
	int64_t now = now_s();

	struct db *d = pool_get(&s->pool);
	unsigned st = enrol_approve_take(d, id, now, &subj, e);
	if (st == 200 && (st = enrol_record(s, &subj, now, &path, e)) != 200) {
		enrol_approve_undo(d, id, now);
		enroll_subject_release(&subj);
	}
	pool_put(&s->pool, d);
	if (st != 200)
		return st;
	logf_(s, "enrolment %s: node %s: approved by %s: AK %s, record %s", id, subj.node, by, subj.ak_id, path);
	*rep = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "node", subj.node, "status", "approved", "ak_id",
			 subj.ak_id, "record", path, "approval", by);
	enroll_subject_release(&subj);
	return 200;
}

/* POST /v1/enrolments/ID/approve + the token: the operator's consent. */
static enum MHD_Result do_enrol_approve(struct serve *s, struct MHD_Connection *conn, const char *id)
{
	json_t *rep = NULL;
	unsigned st;
	const char *why;
	ingot_error e = { 0 };

	if (!authorized(s, conn, &st, &why))
		return reply_error(s, conn, st, "approve: %s", why);
	if ((st = enrol_approve(s, id, "operator", &rep, &e)) != 200)
		return reply_error(s, conn, st, "approve: %s", e.msg);
	return reply_json(s, conn, 200, rep);
}

/* POST /v1/enrolments/ID/answer: the TPM's proof; open too.  An EK
 * certificate that chained to ek-ca is approved here: the activation
 * just proved the AK is on the TPM holding that EK. */
static enum MHD_Result do_enrol_answer(struct serve *s, struct MHD_Connection *conn, const struct request *rq,
				       const char *id)
{
	_cleanup_json_ json_t *b = NULL;
	enum MHD_Result mr = parse_body(s, conn, rq, "answer", &b);
	json_t *rep = NULL;
	ingot_error e = { 0 };
	int by_ek_ca = 0;

	if (!b)
		return mr;
	struct db *d = pool_get(&s->pool);
	unsigned st = enrol_answer(d, id, b, now_s(), s->c->ek_ca, &rep, &by_ek_ca, &e);
	pool_put(&s->pool, d);
	if (st != 200 || !by_ek_ca) {
		if (st == 200)
			logf_(s, "enrolment %s: node %s: proven, awaiting the operator's approval (%s)", id,
			      json_string_value(json_object_get(rep, "node")),
			      json_string_value(json_object_get(rep, "approval")));
		return reply_enrol(s, conn, st, rep, &e);
	}
	json_decref(rep);
	rep = NULL;
	if ((st = enrol_approve(s, id, "ek-ca", &rep, &e)) != 200)
		return reply_error(s, conn, st, "answer: proven, but not approved by ek-ca: %s", e.msg);
	return reply_json(s, conn, 200, rep);
}

static enum MHD_Result route_enrol(struct serve *s, struct MHD_Connection *conn, const char *url, const char *method,
				   const struct request *rq)
{
	const char *rest = url + strlen("/v1/enrolments"), *op = strrchr(rest, '/');

	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return reply_error(s, conn, 405, "%s %.200s: expected POST", method, url);
	if (!s->c->enrolment_ca)
		return reply_error(s, conn, 403, "enrolments: enrolment over the API is off (no enrolment-ca configured)");
	if (!*rest)
		return do_enrol_request(s, conn, rq);
	if (*rest == '/' && op > rest) {
		_cleanup_free_ char *id = xstrndup(rest + 1, (size_t)(op - rest - 1));
		if (!strcmp(op, "/answer"))
			return do_enrol_answer(s, conn, rq, id);
		if (!strcmp(op, "/approve"))
			return do_enrol_approve(s, conn, id);
	}
	return reply_error(s, conn, 404, "%s %.200s: no such endpoint (docs/verifier.md)", method, url);
}

static enum MHD_Result do_metrics(struct serve *s, struct MHD_Connection *conn)
{
	_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
	_cleanup_json_ json_t *counts = NULL;
	ingot_error e = { 0 };

	strbuf_init(&m, 2048);
	strbuf_addstr(&m, "# HELP ingot_verdicts_total Verdicts stored, by verdict.\n# TYPE ingot_verdicts_total counter\n");
	for (size_t i = 0; i < ARRAY_SIZE(verdicts); i++)
		strbuf_addf(&m, "ingot_verdicts_total{verdict=\"%s\"} %llu\n", verdicts[i],
			    (unsigned long long)atomic_load(&s->by_verdict[i]));
	strbuf_addstr(&m, "# HELP ingot_http_responses_total HTTP responses, by status.\n"
			  "# TYPE ingot_http_responses_total counter\n");
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
		strbuf_addf(&m, "ingot_http_responses_total{status=\"%u\"} %llu\n", statuses[i],
			    (unsigned long long)atomic_load(&s->by_status[i]));
	strbuf_addf(&m, "# HELP ingot_nonces_issued_total Nonces issued.\n# TYPE ingot_nonces_issued_total counter\n"
			"ingot_nonces_issued_total %llu\n", (unsigned long long)atomic_load(&s->nonces_issued));
	strbuf_addf(&m, "# HELP ingot_hook_failures_total Hook runs that failed or timed out.\n"
			"# TYPE ingot_hook_failures_total counter\ningot_hook_failures_total %llu\n",
		    (unsigned long long)atomic_load(&s->hook_failures));
	strbuf_addf(&m, "# HELP ingot_evidence_seconds Time to judge and store one piece of evidence.\n"
			"# TYPE ingot_evidence_seconds summary\ningot_evidence_seconds_sum %.6f\n"
			"ingot_evidence_seconds_count %llu\n", atomic_load(&s->evidence_us) / 1e6,
		    (unsigned long long)atomic_load(&s->evidence_count));
	uint64_t commits, writes;
	db_group_counts(s->group, &commits, &writes);
	strbuf_addf(&m, "# HELP ingot_db_commits_total Write transactions committed.\n# TYPE ingot_db_commits_total counter\n"
			"ingot_db_commits_total %llu\n# HELP ingot_db_writes_total Requests' writes (nonces, verdicts), "
			"grouped into those commits.\n# TYPE ingot_db_writes_total counter\ningot_db_writes_total %llu\n",
		    (unsigned long long)commits, (unsigned long long)writes);
	struct db *d = pool_get(&s->pool);
	int r = d->ops->node_counts(d, &counts, &e);
	pool_put(&s->pool, d);
	if (r < 0)
		return reply_error(s, conn, 503, "metrics: %s", e.msg);
	strbuf_addstr(&m, "# HELP ingot_nodes Nodes, by the state of their last verdict.\n# TYPE ingot_nodes gauge\n");
	for (size_t i = 0; i < ARRAY_SIZE(verdicts); i++)
		strbuf_addf(&m, "ingot_nodes{state=\"%s\"} %lld\n", verdicts[i],
			    (long long)json_integer_value(json_object_get(counts, verdicts[i])));
	return reply_text(s, conn, 200, xstrdup(m.buf), "text/plain; version=0.0.4");
}

static enum MHD_Result route(struct serve *s, struct MHD_Connection *conn, const char *url, const char *method,
			     struct request *rq)
{
	int get = !strcmp(method, MHD_HTTP_METHOD_GET), post = !strcmp(method, MHD_HTTP_METHOD_POST);
	const char *node;

	if (!strcmp(url, "/v1/nonce"))
		return post ? do_nonce(s, conn, rq) : reply_error(s, conn, 405, "%s %s: expected POST", method, url);
	if (!strcmp(url, "/v1/evidence"))
		return post ? do_evidence(s, conn, rq) : reply_error(s, conn, 405, "%s %s: expected POST", method, url);
	if (!strcmp(url, "/metrics"))
		return get ? do_metrics(s, conn) : reply_error(s, conn, 405, "%s %s: expected GET", method, url);
	if (!strncmp(url, "/v1/enrolments", 14) && (!url[14] || url[14] == '/'))
		return route_enrol(s, conn, url, method, rq);
	if (!strncmp(url, "/v1/manifests/", 14))
		return get ? do_manifests(s, conn, url + 14) : reply_error(s, conn, 405, "%s %s: expected GET", method, url);
	if (!strncmp(url, "/v1/pools/", 10))
		return get ? do_pool(s, conn, url + 10) : reply_error(s, conn, 405, "%s %s: expected GET", method, url);
	if (!strncmp(url, "/v1/nodes/", 10)) {
		node = url + 10;
		const char *op = strrchr(node, '/');
		if (op && (!strcmp(op, "/drain") || !strcmp(op, "/admit"))) {
			_cleanup_free_ char *name = xstrndup(node, (size_t)(op - node));
			return post ? do_override(s, conn, rq, name, op + 1)
				    : reply_error(s, conn, 405, "%s %s: expected POST", method, url);
		}
		return get ? do_node(s, conn, node) : reply_error(s, conn, 405, "%s %s: expected GET", method, url);
	}
	return reply_error(s, conn, 404, "%s %.200s: no such endpoint (docs/verifier.md)", method, url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *data, size_t *size, void **con_cls)
{
	struct serve *s = cls;
	struct request *rq = *con_cls;

	(void)version;
	if (!rq) {
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		rq = *con_cls = xcalloc(1, sizeof(*rq));
		strbuf_init(&rq->body, 0);
		/* Refused before reading a byte of it. */
		if (cl && strtoull(cl, NULL, 10) > s->c->max_body) {
			rq->answered = 1;
			return reply_error(s, conn, 413, "body: %s bytes, expected at most %zu", cl, s->c->max_body);
		}
		return MHD_YES;
	}
	if (*size) {
		if (!rq->too_big && rq->body.len + *size <= s->c->max_body)
			strbuf_add(&rq->body, data, *size);
		else
			rq->too_big = 1;
		*size = 0;
		return MHD_YES;
	}
	if (rq->answered) {
		/* Called again once resumed: the write is committed, reply. */
		if (rq->answer && atomic_load(&rq->committed)) {
			enum MHD_Result (*answer)(struct serve *, struct MHD_Connection *, struct request *) = rq->answer;
			rq->answer = NULL;
			return answer(s, conn, rq);
		}
		return MHD_YES;
	}
	rq->answered = 1;
	if (rq->too_big)
		return reply_error(s, conn, 413, "body: expected at most %zu bytes", s->c->max_body);
	return route(s, conn, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls, (void)conn, (void)toe;
	if (rq) {
		strbuf_release(&rq->body);
		json_decref(rq->doc);
		free(rq->evidence);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- the sweep ---------------------------------------------------------------- */

static void *sweeper(void *arg)
{
	struct serve *s = arg;
	char reason[256];

	pthread_mutex_lock(&s->stop_mu);
	while (!s->stopping) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += s->c->sweep_interval;
		pthread_cond_timedwait(&s->stop_cv, &s->stop_mu, &until);
		if (s->stopping)
			break;
		pthread_mutex_unlock(&s->stop_mu);

		_cleanup_json_ json_t *drained = NULL;
		ingot_error e = { 0 };
		int64_t now = now_s();
		snprintf(reason, sizeof(reason), "stale: no admitted evidence for over %lld s", (long long)s->c->stale_after);
		struct db *d = pool_get(&s->pool);
		int r = s->c->stale_after ? d->ops->sweep_stale(d, now - s->c->stale_after, now, reason, &drained, &e) : 0;
		/* Nonces past their expiry are refused anyway; an hour later
		 * they are forgotten (a replay is then "not issued"). */
		if (r == 0)
			r = d->ops->nonce_forget(d, now - 3600, &e);
		pool_put(&s->pool, d);
		if (r < 0)
			logf_(s, "sweep: %s", e.msg);
		size_t i;
		json_t *n;
		json_array_foreach(drained, i, n) {
			count_verdict(s, "stale");
			logf_(s, "node %s: stale: %s", json_string_value(n), reason);
			run_hook(s, json_string_value(n), "stale", reason);
		}
		pthread_mutex_lock(&s->stop_mu);
	}
	pthread_mutex_unlock(&s->stop_mu);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------------- */

/* The token: one line in a file only its owner may read. */
static int read_token(const char *path, char **out, ingot_error *e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return ingot_fail(e, -errno, "%s: token-file: cannot read: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
		return ingot_fail(e, -EPERM, "%s: token-file: expected a regular file of mode 0600 or 0400, got mode %04o",
				  path, (unsigned)(st.st_mode & 07777));
	if ((r = read_file(path, TOKEN_MAX, &buf, &len, e)) < 0)
		return r;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (len < 16 || strlen(buf) != len || strpbrk(buf, " \t\r\n"))
		return ingot_fail(e, -EINVAL, "%s: token-file: expected one line of at least 16 characters, no spaces", path);
	*out = TAKE_PTR(buf);
	return 0;
}

static int bind_listen(struct serve *s, const char *spec, ingot_error *e)
{
	_cleanup_free_ char *host = xstrdup(spec);
	char *colon = strrchr(host, ':'), port[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1, r;

	*colon = '\0';
	char *h = host;
	if (*h == '[' && colon[-1] == ']')
		h++, colon[-1] = '\0';
	if ((r = getaddrinfo(h, colon + 1, &hints, &ai)) != 0)
		return ingot_fail(e, -EINVAL, "listen: expected a numeric HOST:PORT, got \"%s\": %s", spec, gai_strerror(r));
	s->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s->fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(s->fd, 4096) < 0 ||
	    getsockname(s->fd, (struct sockaddr *)&ss, &sl) < 0) {
		r = ingot_fail(e, -errno, "listen: %s: %s", spec, strerror(errno));
		freeaddrinfo(ai);
		return r;
	}
	freeaddrinfo(ai);
	char ip[INET6_ADDRSTRLEN];
	unsigned p = 0;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof(ip));
		p = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		snprintf(s->address, sizeof(s->address), "[%s]:%u", ip, p);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
		p = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		snprintf(s->address, sizeof(s->address), "%s:%u", ip, p);
	}
	(void)port;
	return 0;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve *s = cls;
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	logf_(s, "http: %s", line);
}

/* The key approved enrolments are signed with: one the enrolment role
 * trusts alone, else every record it made would be refused (the service
 * does not start rather than approve into nothing). */
static int load_enrol_key(struct serve *s, ingot_error *e)
{
	const struct keyring *kr;
	int r;

	if ((r = signing_key_load(s->c->enrolment_key, &s->enrol_key, e)) < 0)
		return ingot_prefix(e, "enrolment-key");
	if ((r = boot_trust_keyring(&s->trust, KEY_ROLE_ENROLMENT, &kr, e)) < 0)
		return ingot_prefix(e, "enrolment-key");
	if (!keyring_find(kr, s->enrol_key->keyid))
		return ingot_fail(e, -EPERM, "enrolment-key: %s: expected a key of the enrolment role, got key %s, "
				  "which it does not trust", s->c->enrolment_key, s->enrol_key->keyid);
	if (kr->threshold != 1)
		return ingot_fail(e, -EPERM, "enrolment-key: the enrolment role needs %u signatures, the verifier "
				  "makes one: sign records offline (ingot attest enroll finish)", kr->threshold);
	return 0;
}

static int load_trust(struct serve *s, ingot_error *e)
{
	const struct serve_config *c = s->c;
	size_t i;
	json_t *m;
	int r;

	struct boot_keyrings k = { .keyring = c->keyring };

	_Static_assert(SERVE_ROLES == BOOT_ROLES, "serve_config's roles");
	for (unsigned i = 0; i < BOOT_ROLES; i++) {
		k.role[i] = c->role_keyring[i];
		k.threshold[i] = c->role_threshold[i];
	}
	if ((r = boot_trust_init(&s->trust, &k, e)) < 0 ||
	    (c->enrolments && (r = boot_trust_add_dir(&s->trust, c->enrolments, false, e)) < 0) ||
	    (c->firmware_refs && (r = boot_trust_add_dir(&s->trust, c->firmware_refs, true, e)) < 0))
		return r;
	json_array_foreach(c->manifests, i, m)
		if ((r = boot_trust_add_manifest(&s->trust, json_string_value(m), time(NULL), e)) < 0)
			return r;
	/* One service serves one pool: an AMD and an NVIDIA image in it is a
	 * mistake unless the configuration says it is meant. */
	size_t a, b;
	if (!c->mixed_vendors && boot_trust_mixed_vendors(&s->trust, &a, &b))
		return ingot_fail(e, -EINVAL, "manifest: %s declares vendor %s, %s vendor %s: one pool's images are "
				  "expected to be one vendor's (mixed-vendors = allow to serve both)",
				  s->trust.mf[a]->name, boot_manifest_vendor(s->trust.mf[a]), s->trust.mf[b]->name,
				  boot_manifest_vendor(s->trust.mf[b]));
	return c->enrolment_key ? load_enrol_key(s, e) : 0;
}

/* A serve with its locks made and nothing loaded: serve_stop frees it
 * whatever happens next (serve_start and serve_check). */
static struct serve *serve_alloc(const struct serve_config *c)
{
	struct serve *s = xcalloc(1, sizeof(*s));

	s->c = c;
	s->fd = -1;
	pthread_mutex_init(&s->stop_mu, NULL);
	pthread_cond_init(&s->stop_cv, NULL);
	pthread_mutex_init(&s->rate_mu, NULL);
	pthread_mutex_init(&s->refused_mu, NULL);
	pthread_mutex_init(&s->issuing_mu, NULL);
	pthread_rwlock_init(&s->trust_mu, NULL);
	return s;
}

int serve_start(const struct serve_config *c, const struct serve_log *log, struct serve **out, ingot_error *e)
{
	struct serve *s = serve_alloc(c);
	int r;

	if (log)
		s->log = *log;
	if ((r = load_trust(s, e)) < 0 || (c->token_file && (r = read_token(c->token_file, &s->token, e)) < 0) ||
	    (r = pool_open(&s->pool, c->database, c->threads + 1, e)) < 0 ||
	    (r = db_group_open(c->database, &s->group, e)) < 0 || (r = bind_listen(s, c->listen, e)) < 0)
		goto fail;
	/* A thread per core, none of them waiting: a request whose write
	 * goes to the committer is suspended until it is durable. */
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
				  MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
				  on_request, s,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,   /* first: else MHD logs the rest itself */
				  MHD_OPTION_LISTEN_SOCKET, s->fd,
				  MHD_OPTION_THREAD_POOL_SIZE, c->threads,
				  MHD_OPTION_CONNECTION_LIMIT, c->max_connections,
				  MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 << 10),
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				  MHD_OPTION_END);
	if (!s->mhd) {
		r = ingot_fail(e, -EIO, "listen: %s: the HTTP server did not start", s->address);
		goto fail;
	}
	if (pthread_create(&s->sweeper, NULL, sweeper, s) != 0) {
		r = ingot_fail(e, -EAGAIN, "cannot start the staleness sweep");
		goto fail;
	}
	s->sweeping = 1;
	*out = s;
	return 0;
fail:
	serve_stop(s);
	return r;
}

int serve_check(const struct serve_config *c, ingot_error *e)
{
	struct serve *s = serve_alloc(c);
	int r;

	if ((r = load_trust(s, e)) == 0 && c->token_file)
		r = read_token(c->token_file, &s->token, e);
	if (r == 0)
		r = pool_open(&s->pool, c->database, 1, e);
	serve_stop(s);
	return r;
}

const char *serve_address(const struct serve *s)
{
	return s->address;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	/* Every handed-over write done and its connection resumed before
	 * the daemon stops (it must not stop with one suspended); later
	 * ones are refused at once (503). */
	db_group_stop(s->group);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	else if (s->fd >= 0)
		close(s->fd);
	if (s->sweeping) {
		pthread_mutex_lock(&s->stop_mu);
		s->stopping = 1;
		pthread_cond_signal(&s->stop_cv);
		pthread_mutex_unlock(&s->stop_mu);
		pthread_join(s->sweeper, NULL);
	}
	db_group_close(s->group);
	if (s->pool.free)
		pool_close(&s->pool);
	boot_trust_release(&s->trust);
	pthread_rwlock_destroy(&s->trust_mu);
	signing_key_free(s->enrol_key);
	free(s->token);
	pthread_mutex_destroy(&s->stop_mu);
	pthread_cond_destroy(&s->stop_cv);
	strmap_free(&s->rates, free);
	strmap_free(&s->refused, free);
	strmap_free(&s->issuing, free);
	pthread_mutex_destroy(&s->issuing_mu);
	pthread_mutex_destroy(&s->refused_mu);
	pthread_mutex_destroy(&s->rate_mu);
	free(s);
}
