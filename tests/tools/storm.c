/* storm: a boot storm of synthetic nodes against `ingot serve`, for the
 * bench's serve rows (bench/bench.py, docs/bench.md).  TEST-ONLY: the
 * nodes' AKs are software keys (tests/tools/swquote.h), enrolled through
 * records the enrolment key signs without the enrolment protocol, as
 * tests/tools/mkenrolment does.
 *
 *   storm enrol SIGNING_KEY COUNT OUT
 *     OUT/enrolments/node-NNNNNN.json for COUNT fresh P-256 AKs, and
 *     OUT/aks.der: their private keys (for `storm run`).
 *   storm run [-c CONC] [-p RATE] [-r EVERY] [-o RECEIVED] [-b BODIES] OUT EVIDENCE COUNT URL...
 *     COUNT nodes, CONC at a time (one keep-alive connection each, epoll,
 *     one thread); with -p, node i starts at RATE nodes a second (i / RATE
 *     s after the start, or once a connection is free: an open arrival,
 *     as nodes power on, instead of each connection's next node at once).
 *     Per node: POST /v1/nonce, a quote over that nonce signed by the
 *     node's AK (the signing is in the timed run: the nonce is the
 *     verifier's), POST /v1/evidence, and the verdict checked against the
 *     expected one.  EVIDENCE is boot-evidence.py's directory: the good
 *     boot's PCRs and event log.  Every EVERY-th node (0: none) sends
 *     evidence that must be refused: Secure Boot off (its log and PCRs),
 *     or, the next one, a quote signed by another node's AK.  A
 *     connection refused or reset (a replica killed) or a 5xx moves the
 *     node to the next URL and starts it over.  RECEIVED: one line per
 *     verdict a node heard, "NODE NONCE VERDICT".  BODIES: the evidence
 *     bodies of a tenth of the nodes, one a line, for a replay flood
 *     (bench/bench.py posts them again).  Prints one JSON
 *     object: wall time, verdicts right and wrong, latencies. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attest/enroll.h"
#include "attest/quote.h"
#include "keys/enrolment.h"
#include "keys/key.h"
#include "lib/base64.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "manifest/dsse.h"
#include "tests/tools/swquote.h"

#define BUF (64 << 10)
#define TRIES 20

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "storm: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

/* ---- enrol ---------------------------------------------------------------- */

static int enrol(const char *keypath, unsigned n, const char *out)
{
	struct signing_key *k = NULL;
	ingot_error e = { 0 };
	char path[4096];
	FILE *aks;

	snprintf(path, sizeof(path), "%s/enrolments", out);
	if (mkdir(out, 0755) < 0 && errno != EEXIST)
		die("cannot create %s", out);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("cannot create %s", path);
	if (signing_key_load(keypath, &k, &e) < 0)
		die("%s", e.msg);
	snprintf(path, sizeof(path), "%s/aks.der", out);
	if (!(aks = fopen(path, "wb")))
		die("cannot write %s", path);
	for (unsigned i = 0; i < n; i++) {
		struct enroll_subject s = { 0 };
		EVP_PKEY *ak = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		uint8_t *der = NULL;
		int len;
		BIO *b = BIO_new(BIO_s_mem());
		char *pem;
		long pl;
		json_t *env = NULL;

		if (!ak || !b || !PEM_write_bio_PUBKEY(b, ak) || (len = i2d_PrivateKey(ak, &der)) <= 0)
			die("%s", "key generation failed");
		pl = BIO_get_mem_data(b, &pem);
		s.ak_pem = strndup(pem, (size_t)pl);
		snprintf(s.node, sizeof(s.node), "node-%06u", i);
		memset(s.ek_cert_sha256, 'e', 64);
		memset(s.ca_bundle_sha256, 'c', 64);
		if (attest_ak_id_pem(s.ak_pem, s.ak_id, &e) < 0)
			die("%s", e.msg);
		snprintf(s.ak_name, sizeof(s.ak_name), "000b%s", s.ak_id);
		snprintf(path, sizeof(path), "%s/enrolments/%s.json", out, s.node);
		if (enrolment_sign(&s, 1764806400, k, &env, &e) < 0)
			die("%s", e.msg);
		/* Not json_write_file_as: its fsync per file would make 100,000
		 * records take minutes; a bench input is made again if lost. */
		size_t tl;
		char *text = envelope_canonical(env, &tl);
		FILE *f = fopen(path, "w");
		if (!text || !f || fwrite(text, 1, tl, f) != tl || fclose(f))
			die("cannot write %s", path);
		free(text);
		uint16_t l16 = (uint16_t)len;
		if (fwrite(&l16, 2, 1, aks) != 1 || fwrite(der, (size_t)len, 1, aks) != 1)
			die("%s", "write failed");
		json_decref(env);
		OPENSSL_free(der);
		free(s.ak_pem);
		BIO_free(b);
		EVP_PKEY_free(ak);
	}
	signing_key_free(k);
	return fclose(aks) ? 1 : 0;
}

/* ---- run ------------------------------------------------------------------ */

enum kind { GOOD, SB_OFF, OTHER_AK };
static const char *const expect[] = { "admit", "refuse", "refuse" };

/* What a case sends besides the quote: its PCRs (as a JSON text), their
 * mask and digest, its event log in base64. */
struct evcase {
	char *pcrs, *log64;
	uint32_t mask;
	uint8_t digest[32];
};

struct node {
	EVP_PKEY *ak;
	uint8_t name[34];     /* its TPM name (swquote_name) */
	char *pub;            /* ak_pub, JSON-escaped */
};

enum step { CONNECT, NONCE, EVIDENCE };

struct conn {
	int fd, url;
	enum step step;
	unsigned node, tries;
	int idle;   /* paced: waiting for its next node's time */
	char nonce[65];
	char out[BUF], in[BUF];
	size_t olen, osent, ilen;
	struct timespec t0, tnode;
};

struct storm {
	struct sockaddr_in *urls;
	char **hosts;
	unsigned nurls, count, every, next, done;
	int ep;
	/* Paced (-p): node i starts at t0 + i / rate, on a connection left
	 * idle by the node before it (idle[], nidle); 0: each connection
	 * starts its next node as soon as its last is judged. */
	double rate;
	struct timespec t0;
	struct conn **idle;
	unsigned nidle;
	struct node *nodes;
	struct evcase cases[2];
	FILE *received, *bodies;
	double *lat_nonce, *lat_ev, *lat_node;
	unsigned wrong, refused_ok, admitted, errors, retries, replies_bad;
};

static double since_ms(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static enum kind kind_of(const struct storm *st, unsigned i)
{
	if (!st->every)
		return GOOD;
	return i % st->every == 0 ? SB_OFF : i % st->every == 1 ? OTHER_AK : GOOD;
}

static char *json_escape_pem(const char *pem)
{
	char *o = malloc(2 * strlen(pem) + 1), *p = o;
	for (; *pem; pem++) {
		if (*pem == '\n')
			*p++ = '\\', *p++ = 'n';
		else
			*p++ = *pem;
	}
	*p = '\0';
	return o;
}

static void load_case(struct evcase *c, const char *dir, const char *name)
{
	char path[4096];
	json_error_t je;
	uint8_t *log = NULL;
	size_t len;
	ingot_error e = { 0 };

	snprintf(path, sizeof(path), "%s/quote-%s.json", dir, name);
	json_t *q = json_load_file(path, 0, &je), *pcrs = json_object_get(json_object_get(q, "pcrs"), "sha256");
	if (!pcrs)
		die("%s: expected a quote with pcrs.sha256", path);
	c->pcrs = json_dumps(json_object_get(q, "pcrs"), JSON_COMPACT);
	uint8_t cat[24 * 32];
	size_t n = 0;
	for (unsigned p = 0; p < 24; p++) {
		char k[4];
		snprintf(k, sizeof(k), "%u", p);
		const char *h = json_string_value(json_object_get(pcrs, k));
		if (!h)
			continue;
		if (strlen(h) != 64 || hex_decode(h, cat + 32 * n++, 32) < 0)
			die("%s: a PCR is not 64 hex digits", path);
		c->mask |= 1u << p;
	}
	sha256_buf(cat, 32 * n, c->digest);
	json_decref(q);
	snprintf(path, sizeof(path), "%s/log-%s.bin", dir, name);
	if (read_file(path, 1 << 20, (char **)&log, &len, &e) < 0)
		die("%s", e.msg);
	c->log64 = base64_encode(log, len, NULL);
	free(log);
}

static void load_nodes(struct storm *st, const char *out)
{
	char path[4096];
	uint8_t *all = NULL, *p;
	size_t len;
	ingot_error e = { 0 };

	snprintf(path, sizeof(path), "%s/aks.der", out);
	if (read_file(path, 1u << 30, (char **)&all, &len, &e) < 0)
		die("%s", e.msg);
	st->nodes = calloc(st->count, sizeof(*st->nodes));
	p = all;
	for (unsigned i = 0; i < st->count; i++) {
		uint16_t l;
		if ((size_t)(p - all) + 2 > len)
			die("%s: fewer keys than nodes", path);
		memcpy(&l, p, 2);
		const uint8_t *d = p + 2;
		p += 2 + l;
		if (!(st->nodes[i].ak = d2i_AutoPrivateKey(NULL, &d, l)) || swquote_name(st->nodes[i].ak, st->nodes[i].name) < 0)
			die("%s: a key does not parse", path);
		BIO *b = BIO_new(BIO_s_mem());
		char *pem;
		PEM_write_bio_PUBKEY(b, st->nodes[i].ak);
		long pl = BIO_get_mem_data(b, &pem);
		char *z = strndup(pem, (size_t)pl);
		st->nodes[i].pub = json_escape_pem(z);
		free(z);
		BIO_free(b);
	}
	free(all);
}

static void request(struct conn *c, const struct storm *st, const char *path, const char *body, size_t blen)
{
	int h = snprintf(c->out, sizeof(c->out),
			 "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
			 path, st->hosts[c->url], blen);
	if ((size_t)h + blen > sizeof(c->out))
		die("%s: request too large", path);
	memcpy(c->out + h, body, blen);
	c->olen = (size_t)h + blen;
	c->osent = c->ilen = 0;
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.ptr = c };
	if (c->fd >= 0 && epoll_ctl(st->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0 && errno != ENOENT)
		die("epoll_ctl: %s", strerror(errno));
}

static void send_nonce(struct conn *c, const struct storm *st)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "{\"node\":\"node-%06u\"}", c->node);
	c->step = NONCE;
	request(c, st, "/v1/nonce", body, (size_t)n);
}

static void send_evidence(struct conn *c, const struct storm *st)
{
	static char body[BUF];
	enum kind k = kind_of(st, c->node);
	const struct evcase *ec = &st->cases[k == SB_OFF];
	uint8_t nonce[32], abuf[sizeof(TPMS_ATTEST)], sbuf[sizeof(TPMT_SIGNATURE)];
	size_t alen, slen;
	const struct node *signer = &st->nodes[k == OTHER_AK ? (c->node + 1) % st->count : c->node];

	if (hex_decode(c->nonce, nonce, 32) < 0)
		die("nonce %s: expected 64 hex digits", c->nonce);
	if (swquote(signer->ak, signer->name, nonce, 32, ec->mask, ec->digest, abuf, &alen, sbuf, &slen) < 0)
		die("%s", "signing failed");
	char *ab = base64_encode(abuf, alen, NULL), *sb = base64_encode(sbuf, slen, NULL);
	int n = snprintf(body, sizeof(body),
			 "{\"node\":\"node-%06u\",\"nonce\":\"%s\",\"quote\":{\"format\":\"ingot.quote/v1\",\"nonce\":\"%s\","
			 "\"attest\":\"%s\",\"signature\":\"%s\",\"pcrs\":%s,\"ak_pub\":\"%s\"},\"eventlog\":\"%s\"}",
			 c->node, c->nonce, c->nonce, ab, sb, ec->pcrs, st->nodes[c->node].pub, ec->log64);
	free(ab);
	free(sb);
	c->step = EVIDENCE;
	if (st->bodies && c->node % 10 == 5)   /* a tenth, for a replay flood */
		fprintf(st->bodies, "%s\n", body);
	request(c, st, "/v1/evidence", body, (size_t)n);
}

static int conn_open(struct storm *st, struct conn *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&st->urls[c->url], sizeof(st->urls[0])) < 0 && errno != EINPROGRESS)
		return -1;
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN, .data.ptr = c };
	if (epoll_ctl(st->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	return 0;
}

/* When node i is due, paced: t0 + i / rate. */
static struct timespec due(const struct storm *st, unsigned i)
{
	double s = i / st->rate;
	struct timespec t = st->t0;
	long long ns = t.tv_nsec + (long long)((s - (long long)s) * 1e9);

	t.tv_sec += (time_t)s + (time_t)(ns / 1000000000);
	t.tv_nsec = ns % 1000000000;
	return t;
}

static void start_node(struct storm *st, struct conn *c)
{
	c->idle = 0;
	c->node = st->next++;
	c->tries = 0;
	/* Paced, the node's time runs from when it was due, so a node that
	 * waited for a free connection counts that wait. */
	if (st->rate > 0)
		c->tnode = due(st, c->node);
	else
		clock_gettime(CLOCK_MONOTONIC, &c->tnode);
	send_nonce(c, st);
}

/* The next node on this connection, or the connection closed when none is left. */
static void next_node(struct storm *st, struct conn *c)
{
	if (st->next >= st->count) {
		epoll_ctl(st->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
		return;
	}
	if (st->rate > 0) {   /* started by start_due when its time comes */
		c->idle = 1;
		st->idle[st->nidle++] = c;
		return;
	}
	start_node(st, c);
}

/* Paced: start every node that is due on an idle connection; the
 * milliseconds until the next one is due (-1: none waits for time). */
static int start_due(struct storm *st)
{
	while (st->next < st->count) {
		struct timespec t = due(st, st->next);
		double wait = -since_ms(&t);
		if (wait > 0)
			return (int)wait + 1;
		if (!st->nidle)
			return -1;   /* due, and every connection busy: it waits for one */
		start_node(st, st->idle[--st->nidle]);
	}
	return -1;
}

/* Start this node over, on a new connection to the next URL. */
static void retry(struct storm *st, struct conn *c, const char *why)
{
	if (st->retries < 5 || getenv("STORM_DEBUG"))
		fprintf(stderr, "storm: node-%06u: %s: starting it over on the next URL\n", c->node, why);
	if (++c->tries > TRIES)
		die("node %s: no verdict after many tries", why);
	st->retries++;
	epoll_ctl(st->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->url = (c->url + 1) % st->nurls;
	if (c->tries > st->nurls)
		usleep(20000);   /* every replica refused: wait for one to come back */
	while (conn_open(st, c) < 0) {
		close(c->fd);
		c->url = (c->url + 1) % st->nurls;
		usleep(20000);
	}
	send_nonce(c, st);
}

static void on_reply(struct storm *st, struct conn *c, int status, const char *body)
{
	double ms = since_ms(&c->t0);
	const char *v;

	if (status >= 500 || status == 429) {
		retry(st, c, body);
		return;
	}
	if (c->step == NONCE) {
		const char *n = strstr(body, "\"nonce\":\"");
		if (status != 200 || !n || strlen(n) < 9 + 64) {
			fprintf(stderr, "storm: node-%06u: nonce: HTTP %d: %.200s\n", c->node, status, body);
			st->replies_bad++;
			retry(st, c, "no nonce");
			return;
		}
		memcpy(c->nonce, n + 9, 64);
		c->nonce[64] = '\0';
		st->lat_nonce[c->node] = ms;
		send_evidence(c, st);
		return;
	}
	st->lat_ev[c->node] = ms;
	st->lat_node[c->node] = since_ms(&c->tnode);
	v = strstr(body, "\"verdict\":\"");
	char got[32] = "";
	if (status == 200 && v)
		sscanf(v + 11, "%31[^\"]", got);
	const char *want = expect[kind_of(st, c->node)];
	if (strcmp(got, want)) {
		if (st->wrong++ < 5)
			fprintf(stderr, "storm: node-%06u: expected %s, got HTTP %d: %.300s\n", c->node, want, status, body);
	} else if (!strcmp(got, "admit")) {
		st->admitted++;
	} else {
		st->refused_ok++;
	}
	if (status == 200 && st->received)
		fprintf(st->received, "node-%06u %s %s\n", c->node, c->nonce, got);
	st->done++;
	next_node(st, c);
}

/* A whole response in c->in: status and body, else 0. */
static int parse(struct conn *c, int *status, char **body)
{
	char *end = memmem(c->in, c->ilen, "\r\n\r\n", 4), *cl;
	if (!end)
		return 0;
	*end = '\0';
	cl = strcasestr(c->in, "\r\nContent-Length:");
	size_t blen = cl ? strtoul(cl + 17, NULL, 10) : 0;
	*end = '\r';
	if ((size_t)(end + 4 - c->in) + blen > c->ilen)
		return 0;
	*status = atoi(c->in + 9);
	*body = end + 4;
	(*body)[blen] = '\0';
	return 1;
}

static void on_event(struct storm *st, struct conn *c, uint32_t events)
{
	/* Paced, a connection waiting for its node's time that the server
	 * closed (its idle timeout) is opened again, still waiting. */
	if (c->idle) {
		char b[64];
		ssize_t r = events & EPOLLIN ? recv(c->fd, b, sizeof(b), MSG_DONTWAIT) : 1;
		if (events & (EPOLLERR | EPOLLHUP) || r == 0 || (r < 0 && errno != EAGAIN)) {
			epoll_ctl(st->ep, EPOLL_CTL_DEL, c->fd, NULL);
			close(c->fd);
			if (conn_open(st, c) < 0)
				die("connect: %s", strerror(errno));
		} else if (events & EPOLLOUT) {   /* connected: wait for a close only */
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
			epoll_ctl(st->ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		retry(st, c, "connection error");
		return;
	}
	if (events & EPOLLOUT && c->osent < c->olen) {
		ssize_t w = send(c->fd, c->out + c->osent, c->olen - c->osent, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN) {
			retry(st, c, strerror(errno));
			return;
		}
		if (w > 0)
			c->osent += (size_t)w;
		if (c->osent == c->olen) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
			epoll_ctl(st->ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
	if (events & EPOLLIN) {
		ssize_t r = recv(c->fd, c->in + c->ilen, sizeof(c->in) - 1 - c->ilen, 0);
		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			retry(st, c, r == 0 ? "connection closed" : strerror(errno));
			return;
		}
		if (r > 0)
			c->ilen += (size_t)r;
		int status;
		char *body;
		if (parse(c, &status, &body))
			on_reply(st, c, status, body);
		else if (c->ilen >= sizeof(c->in) - 1)
			die("%s", "a response larger than the buffer");
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void pct(FILE *f, const char *name, double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	fprintf(f, "\"%s\":{\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f}", name, v[n / 2], v[(size_t)(n * 0.99)], v[n - 1]);
}

static int run(int argc, char **argv)
{
	struct storm st = { 0 };
	unsigned conc = 1000;
	const char *recv_path = NULL;
	int i = 0;

	while (i < argc && argv[i][0] == '-' && i + 1 < argc) {
		if (!strcmp(argv[i], "-c"))
			conc = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-r"))
			st.every = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-o"))
			recv_path = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			st.rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-b")) {
			if (!(st.bodies = fopen(argv[i + 1], "w")))
				die("cannot write %s", argv[i + 1]);
		}
		else
			die("unknown option %s", argv[i]);
		i += 2;
	}
	if (argc - i < 4)
		die("%s", "usage: storm run [-c CONC] [-p RATE] [-r EVERY] [-o RECEIVED] [-b BODIES] OUT EVIDENCE COUNT URL...");
	const char *out = argv[i], *evdir = argv[i + 1];
	st.count = (unsigned)atoi(argv[i + 2]);
	st.nurls = (unsigned)(argc - i - 3);
	st.urls = calloc(st.nurls, sizeof(*st.urls));
	st.hosts = calloc(st.nurls, sizeof(*st.hosts));
	for (unsigned u = 0; u < st.nurls; u++) {
		const char *url = argv[i + 3 + u];
		char ip[64];
		unsigned port;
		if (sscanf(url, "http://%63[0-9.]:%u", ip, &port) != 2 || inet_pton(AF_INET, ip, &st.urls[u].sin_addr) != 1)
			die("%s: expected http://IPV4:PORT", url);
		st.urls[u].sin_family = AF_INET;
		st.urls[u].sin_port = htons((uint16_t)port);
		st.hosts[u] = strdup(url + 7);
	}
	if (conc > st.count)
		conc = st.count;
	struct rlimit rl = { conc + 64, conc + 64 };
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < conc + 64) {
		rl.rlim_cur = rl.rlim_max < conc + 64 ? rl.rlim_max : conc + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	load_case(&st.cases[0], evdir, "good");
	load_case(&st.cases[1], evdir, "sb-off");
	load_nodes(&st, out);
	if (recv_path && !(st.received = fopen(recv_path, "w")))
		die("cannot write %s", recv_path);
	st.lat_nonce = calloc(st.count, sizeof(double));
	st.lat_ev = calloc(st.count, sizeof(double));
	st.lat_node = calloc(st.count, sizeof(double));
	st.ep = epoll_create1(EPOLL_CLOEXEC);
	struct conn *conns = calloc(conc, sizeof(*conns));
	struct timespec t0;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st.idle = calloc(conc, sizeof(*st.idle));
	for (unsigned k = 0; k < conc; k++) {
		conns[k].url = (int)(k % st.nurls);
		if (conn_open(&st, &conns[k]) < 0)
			die("connect: %s", strerror(errno));
		conns[k].idle = 1;
		st.idle[st.nidle++] = &conns[k];
	}
	clock_gettime(CLOCK_MONOTONIC, &st.t0);   /* node 0 due once every connection is open */
	if (st.rate <= 0)
		while (st.nidle)
			start_node(&st, st.idle[--st.nidle]);
	struct epoll_event evs[256];
	while (st.done < st.count) {
		int wait = st.rate > 0 ? start_due(&st) : -1;
		int n = epoll_wait(st.ep, evs, 256, wait >= 0 && wait < 30000 ? wait : 30000);
		if (n == 0 && (wait < 0 || wait >= 30000))
			die("%s", "no progress in 30 s");
		for (int k = 0; k < n; k++)
			on_event(&st, evs[k].data.ptr, evs[k].events);
	}
	double wall = since_ms(&t0) / 1e3;
	/* The load generator's own CPU (its signing and HTTP): on a shared
	 * machine, what the storm cost beside the server's. */
	getrusage(RUSAGE_SELF, &ru1);
	double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		     (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	if ((st.received && fclose(st.received)) || (st.bodies && fclose(st.bodies)))
		die("cannot write %s", recv_path ? recv_path : "the bodies");
	printf("{\"test_only\":\"software AKs, enrolled without the enrolment protocol\",\"nodes\":%u,\"concurrency\":%u,"
	       "\"paced_nodes_per_s\":%.1f,"
	       "\"wall_s\":%.3f,\"admitted\":%u,\"refused_as_expected\":%u,\"verdicts_wrong\":%u,\"retries\":%u,"
	       "\"bad_replies\":%u,\"cpu_s\":%.3f,",
	       st.count, conc, st.rate, wall, st.admitted, st.refused_ok, st.wrong, st.retries, st.replies_bad, cpu);
	pct(stdout, "nonce_ms", st.lat_nonce, st.count);
	putchar(',');
	pct(stdout, "evidence_ms", st.lat_ev, st.count);
	putchar(',');
	pct(stdout, "node_ms", st.lat_node, st.count);
	printf("}\n");
	/* Freed, so that a sanitizer build's leak check stays meaningful. */
	for (unsigned i = 0; i < st.count; i++) {
		EVP_PKEY_free(st.nodes[i].ak);
		free(st.nodes[i].pub);
	}
	for (unsigned u = 0; u < st.nurls; u++)
		free(st.hosts[u]);
	for (int c = 0; c < 2; c++)
		free(st.cases[c].pcrs), free(st.cases[c].log64);
	free(st.nodes), free(st.hosts), free(st.urls), free(conns), free(st.idle);
	free(st.lat_nonce), free(st.lat_ev), free(st.lat_node);
	close(st.ep);
	return st.wrong ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "enrol"))
		return enrol(argv[2], (unsigned)atoi(argv[3]), argv[4]);
	if (argc > 2 && !strcmp(argv[1], "run"))
		return run(argc - 2, argv + 2);
	fprintf(stderr, "usage: storm enrol SIGNING_KEY COUNT OUT | storm run [-c CONC] [-r EVERY] [-o RECEIVED] [-b BODIES] OUT "
			"EVIDENCE COUNT URL...\n");
	return 64;
}
