/* The verifier's protocol from the node's side (server/client.h). */
#include "server/client.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "keys/envelope.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"
#include "manifest/typed.h"

#define REPLY_MAX (1u << 20)

struct gathered {
	struct strbuf sb;
	size_t max;
};

static size_t gather(char *p, size_t size, size_t n, void *arg)
{
	struct gathered *g = arg;

	if (g->sb.len + size * n > g->max)
		return 0;   /* a reply that large is not the verifier's */
	strbuf_add(&g->sb, p, size * n);
	return size * n;
}

#define PUMP_WRITE_MS 30000

/* All of buf to fd, waiting (bounded) while a full stream pushes back. */
static int pump_write(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w > 0) {
			buf += w, n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd p = { fd, POLLOUT, 0 };
		if (poll(&p, 1, PUMP_WRITE_MS) == 0)
			return -1;
	}
	return 0;
}

/* Copy bytes between libcurl's connection on the private socket (from
 * this process only) and the stream, both ways, until verifier_close
 * shuts the socket down.  libcurl 7.88 does not reuse a connection to a
 * Unix socket ("still name resolving"), so each request may come on a
 * new one; the exchange is strictly request then response, so the
 * newest connection is the one the stream answers. */
static void *pump(void *arg)
{
	struct verifier *v = arg;
	struct pollfd p[3] = { { v->lfd, POLLIN, 0 }, { -1, POLLIN, 0 }, { v->via, POLLIN, 0 } };
	struct ucred cred;
	socklen_t len;
	char buf[16384];
	ssize_t n;
	int c;

	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			if ((c = accept4(v->lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
				break;   /* shut down by verifier_close */
			len = sizeof(cred);
			if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid != getpid() ||
			    p[2].fd < 0) {
				close(c);   /* someone else found the name, or the stream is gone */
				continue;
			}
			if (v->conn >= 0)
				close(v->conn);
			p[1].fd = v->conn = c;
			continue;
		}
		if (p[1].fd >= 0 && p[1].revents) {
			if ((n = read(v->conn, buf, sizeof(buf))) <= 0 || pump_write(v->via, buf, (size_t)n) < 0) {
				close(v->conn);   /* libcurl is done with it, or the stream pushed back too long */
				p[1].fd = v->conn = -1;
			}
		}
		if (p[2].revents & POLLIN) {
			if ((n = read(v->via, buf, sizeof(buf))) > 0 && v->conn >= 0)
				pump_write(v->conn, buf, (size_t)n);
		} else if (p[2].revents) {
			/* hung up (no relay on the other side), or an error: the
			 * waiting request reads EOF, later ones are refused */
			p[2].fd = -1;
			if (v->conn >= 0)
				close(v->conn);
			p[1].fd = v->conn = -1;
		}
	}
	return NULL;
}

int verifier_open(struct verifier *v, const char *base, const char *via, ingot_error *e)
{
	*v = (struct verifier){ .base = base, .via = -1, .lfd = -1, .conn = -1 };
	if (via) {
		/* libcurl 7.88 cannot be handed a connected socket
		 * (CURL_SOCKOPT_ALREADY_CONNECTED still connects): it dials
		 * a private abstract-namespace socket instead. */
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		uint8_t rnd[12];
		char hex[2 * sizeof(rnd) + 1];
		int r;

		if ((v->via = open(via, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) < 0)
			return ingot_fail_kind(e, -errno, VERIFIER_FAIL_TRANSPORT, "%s: %s", via, strerror(errno));
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return r = -errno, verifier_close(v),
			       ingot_fail_kind(e, r, VERIFIER_FAIL_TRANSPORT, "%s: getrandom: %s", via, strerror(-r));
		hex_encode(rnd, sizeof(rnd), hex);
		snprintf(v->name, sizeof(v->name), "ingot-push-%s", hex);
		memcpy(sa.sun_path + 1, v->name, strlen(v->name));
		if ((v->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    bind(v->lfd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
								       strlen(v->name))) < 0 ||
		    listen(v->lfd, 4) < 0)
			return r = -errno, verifier_close(v),
			       ingot_fail_kind(e, r, VERIFIER_FAIL_TRANSPORT, "%s: local socket: %s", via, strerror(-r));
		if ((r = pthread_create(&v->pump, NULL, pump, v)))
			return verifier_close(v),
			       ingot_fail_kind(e, -r, VERIFIER_FAIL_TRANSPORT, "%s: thread: %s", via, strerror(r));
		v->pumping = true;
	}
	if (!(v->curl = curl_easy_init())) {
		verifier_close(v);
		return ingot_fail_kind(e, -ENOMEM, VERIFIER_FAIL_TRANSPORT, "%s: out of memory", base);
	}
	if (via)
		curl_easy_setopt(v->curl, CURLOPT_ABSTRACT_UNIX_SOCKET, v->name);
	return 0;
}

void verifier_close(struct verifier *v)
{
	if (v->curl)
		curl_easy_cleanup(v->curl);   /* closes libcurl's end: the pump reads EOF */
	v->curl = NULL;
	if (v->lfd >= 0)
		shutdown(v->lfd, SHUT_RDWR);   /* a pump still waiting for libcurl stops */
	if (v->pumping)
		pthread_join(v->pump, NULL);
	v->pumping = false;
	if (v->conn >= 0)
		close(v->conn);
	if (v->lfd >= 0)
		close(v->lfd);
	if (v->via >= 0)
		close(v->via);
	v->conn = v->lfd = v->via = -1;
}

/* BASE PATH into g (at most g->max bytes): POST text when given, else GET. */
static int transfer(struct verifier *v, const char *path, const char *text, long timeout, struct gathered *g,
		    long *status, char **url, ingot_error *e)
{
	const char *base = v->base;
	char err[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	CURLcode cr;
	CURL *c = v->curl;
	size_t bl = strlen(base);

	*url = xasprintf("%.*s%s", (int)(bl && base[bl - 1] == '/' ? bl - 1 : bl), base, path);
	strbuf_init(&g->sb, 1024);
	if (text)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (v->token) {
		_cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s", v->token);
		h = curl_slist_append(h, auth);   /* copied */
	}
	curl_easy_setopt(c, CURLOPT_URL, *url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (text)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
	else
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gather);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, g);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	cr = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(h);
	if (cr != CURLE_OK)
		return ingot_fail_kind(e, -EIO, VERIFIER_FAIL_TRANSPORT, "%s: %s", *url,
				       cr == CURLE_WRITE_ERROR ? "reply over the size limit" : err[0] ? err : curl_easy_strerror(cr));
	return 0;
}

/* A refusal's one line (the service's {"error": ...}), kind by status. */
static int refused(const char *url, long status, const json_t *reply, ingot_error *e)
{
	const char *why = json_string_value(json_object_get(reply, "error"));
	int kind = status == 404 || status == 409 || status == 410 ? VERIFIER_FAIL_NONCE : VERIFIER_FAIL_REFUSED;

	return ingot_fail_kind(e, -EPERM, kind, "%s: HTTP %ld: %s", url, status, why ? why : "(no error line)");
}

/* POST body to BASE PATH; *reply the JSON object answered (any status). */
static int call(struct verifier *v, const char *path, const json_t *body, long timeout, long *status,
		json_t **reply, ingot_error *e)
{
	_cleanup_free_ char *url = NULL, *text = json_dumps(body, JSON_COMPACT);
	struct gathered g = { .max = REPLY_MAX };
	json_error_t je;
	int r;

	if (!text)
		return ingot_fail_kind(e, -ENOMEM, VERIFIER_FAIL_TRANSPORT, "%s%s: out of memory", v->base, path);
	r = transfer(v, path, text, timeout, &g, status, &url, e);
	if (r < 0) {
		strbuf_release(&g.sb);
		return r;
	}
	*reply = json_loadb(g.sb.buf, g.sb.len, 0, &je);
	if (!json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		r = ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s: HTTP %ld: expected a JSON object, got %.80s",
				    url, *status, g.sb.len ? g.sb.buf : "nothing");
		strbuf_release(&g.sb);
		return r;
	}
	strbuf_release(&g.sb);
	if (*status != 200) {
		r = refused(url, *status, *reply, e);
		json_decref(*reply);
		*reply = NULL;
		return r;
	}
	return 0;
}

int verifier_get(struct verifier *v, const char *path, size_t max, long timeout, char **body, size_t *len,
		 ingot_error *e)
{
	_cleanup_free_ char *url = NULL;
	struct gathered g = { .max = max };
	long status = 0;
	int r;

	*body = NULL;
	if ((r = transfer(v, path, NULL, timeout, &g, &status, &url, e)) < 0) {
		strbuf_release(&g.sb);
		return r;
	}
	if (status != 200) {
		_cleanup_json_ json_t *j = json_loadb(g.sb.buf, g.sb.len, 0, NULL);
		strbuf_release(&g.sb);
		return json_is_object(j) ? refused(url, status, j, e)
					 : ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s: HTTP %ld", url, status);
	}
	*len = g.sb.len;
	*body = strbuf_detach(&g.sb, NULL);
	return 0;
}

int verifier_post(struct verifier *v, const char *path, const json_t *body, long timeout, json_t **reply,
		  ingot_error *e)
{
	long status = 0;

	return call(v, path, body, timeout, &status, reply, e);
}

int verifier_nonce(struct verifier *v, const char *node, long timeout, char hex[2 * NONCE_MAX + 1], ingot_error *e)
{
	_cleanup_json_ json_t *req = json_pack("{s:s}", "node", node), *rep = NULL;
	uint8_t raw[NONCE_MAX];
	size_t len;
	long status = 0;
	int r;

	if ((r = call(v, "/v1/nonce", req, timeout, &status, &rep, e)) < 0) {
		e->kind = e->kind == VERIFIER_FAIL_NONCE ? VERIFIER_FAIL_REFUSED : e->kind;   /* no nonce yet */
		return r;
	}
	const char *n = json_string_value(json_object_get(rep, "nonce"));
	if (!n || nonce_parse(n, raw, &len, NULL) < 0)
		return ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s/v1/nonce: nonce: expected 16-128 hex digits",
				       v->base);
	hex_encode(raw, len, hex);
	return 0;
}

int verifier_evidence(struct verifier *v, const char *node, const char *nonce_hex, const json_t *quote,
		      const void *log, size_t log_len, const json_t *report, long timeout,
		      struct verifier_verdict *out, ingot_error *e)
{
	_cleanup_free_ char *b64 = base64_encode(log, log_len, NULL);
	_cleanup_json_ json_t *req = NULL, *rep = NULL;
	long status = 0;
	int r;

	req = json_pack("{s:s,s:s,s:O,s:s}", "node", node, "nonce", nonce_hex, "quote", quote, "eventlog", b64);
	if (!req)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (report)
		json_object_set(req, "report", (json_t *)report);
	if ((r = call(v, "/v1/evidence", req, timeout, &status, &rep, e)) < 0)
		return r;
	const char *word = json_string_value(json_object_get(rep, "verdict"));
	const char *why = json_string_value(json_object_get(rep, "reason"));
	if (!word || !why)
		return ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s/v1/evidence: expected verdict and reason",
				       v->base);
	snprintf(out->verdict, sizeof(out->verdict), "%s", word);
	snprintf(out->reason, sizeof(out->reason), "%s", why);
	return 0;
}

/* One path segment, escaped for the URL (malloc'd). */
static char *segment(struct verifier *v, const char *s)
{
	char *esc = curl_easy_escape(v->curl, s, 0);
	char *r = xstrdup(esc ? esc : "");

	curl_free(esc);
	return r;
}

int verifier_fetch_manifest(struct verifier *v, const char *pool, const char *root, const struct keyring *kr,
			    time_t now, const char *out, struct fetched_manifest *fm, ingot_error *e)
{
	_cleanup_free_ char *pseg = segment(v, pool), *path = NULL, *env_text = NULL, *list = NULL, *dir = NULL,
			    *list_path = NULL;
	_cleanup_json_ json_t *env = NULL;
	_cleanup_atomic_ struct atomic_file af_env = { .fd = -1 }, af_list = { .fd = -1 };
	struct verify_policy p = { .now = now, .file_list_use = FILE_LIST_HEAD };
	struct verified_manifest vm;
	struct verify_outcome vo;
	size_t env_len, list_len = 0;
	json_error_t je;
	int r;

	memset(fm, 0, sizeof(*fm));
	path = xasprintf("/v1/manifests/%s?root=%s", pseg, root);
	if ((r = verifier_get(v, path, ENVELOPE_FILE_MAX, 60, &env_text, &env_len, e)) < 0)
		return r;
	free(path);
	path = xasprintf("%s/v1/manifests/%s", v->base, pseg);   /* names it in messages */
	if (!(env = json_loadb(env_text, env_len, JSON_REJECT_DUPLICATES, &je)) || !json_is_object(env))
		return ingot_fail_kind(e, -EBADMSG, ENVELOPE_FAIL_MALFORMED, "%s: expected a DSSE envelope (JSON object)",
				       path);
	/* Signatures by the image's keys first; nothing in it is read before. */
	r = envelope_verify_manifest(path, env, kr, &p, &vm, &vo, e);
	if (r == 0) {
		_cleanup_manifest_ struct manifest *m = manifest_decode(path, vm.manifest, MANIFEST_FULL);
		snprintf(fm->recipe, sizeof(fm->recipe), "%s", vo.recipe);
		snprintf(fm->root, sizeof(fm->root), "%s", m->have & MF_VERITY ? m->verity.root_hex : "");
		snprintf(fm->file_list, sizeof(fm->file_list), "%s", vm.ref.name);
		snprintf(fm->file_list_sha256, sizeof(fm->file_list_sha256), "%s", vm.ref.sha256);
		fm->serial = vo.serial;
	}
	verified_manifest_free(&vm);
	if (r < 0)
		return r;
	/* The verifier chose it; the node checks it describes this image. */
	if (strcmp(fm->recipe, pool) || strcmp(fm->root, root))
		return ingot_fail_kind(e, -EPERM, VERIFIER_FAIL_OTHER_IMAGE,
				       "%s: the manifest (signed, serial %llu) is of pool %s, image root %.16s...: expected "
				       "pool %s, root %.16s... (the booted image)", path, (unsigned long long)fm->serial,
				       fm->recipe, fm->root, pool, root);
	dir = path_dirname(out);
	if (fm->file_list[0]) {
		_cleanup_free_ char *lseg = segment(v, fm->file_list), *lpath = xasprintf("/v1/manifests/%s/%s", pseg, lseg);
		uint8_t d[32];
		char hex[65];

		if ((r = verifier_get(v, lpath, MANIFEST_FILE_MAX, 120, &list, &list_len, e)) < 0)
			return r;
		sha256_buf(list, list_len, d);
		hex_encode(d, sizeof(d), hex);
		if (strcmp(hex, fm->file_list_sha256))
			return ingot_fail_kind(e, -EILSEQ, ENVELOPE_FAIL_DIGEST,
					       "%s/%s: sha256: expected %s (the signed statement's), got %s", path,
					       fm->file_list, fm->file_list_sha256, hex);
		list_path = path_join(dir, fm->file_list);
		if ((r = atomic_open(&af_list, list_path, 0644, e)) < 0 ||
		    (r = atomic_write(&af_list, list, list_len, e)) < 0)
			return ingot_set_kind(e, r, ENVELOPE_FAIL_IO);
	}
	if ((r = atomic_open(&af_env, out, 0644, e)) < 0 || (r = atomic_write(&af_env, env_text, env_len, e)) < 0 ||
	    (list_path && (r = atomic_commit(&af_list, e)) < 0))
		return ingot_set_kind(e, r, ENVELOPE_FAIL_IO);
	if ((r = atomic_commit(&af_env, e)) < 0) {
		if (list_path)
			unlink(list_path);   /* nothing half-written */
		return ingot_set_kind(e, r, ENVELOPE_FAIL_IO);
	}
	return 0;
}
