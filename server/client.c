/* The verifier's protocol from the node's side (server/client.h). */
#include "server/client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

#define REPLY_MAX (1u << 20)

static size_t gather(char *p, size_t size, size_t n, void *arg)
{
	struct strbuf *sb = arg;

	if (sb->len + size * n > REPLY_MAX)
		return 0;   /* a reply that large is not the verifier's */
	strbuf_add(sb, p, size * n);
	return size * n;
}

/* POST body to BASE PATH; *reply the JSON object answered (any status). */
static int call(const char *base, const char *path, const json_t *body, long timeout, long *status, json_t **reply,
		ingot_error *e)
{
	_cleanup_free_ char *url = NULL, *text = json_dumps(body, JSON_COMPACT);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char err[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	json_error_t je;
	CURLcode cr;
	CURL *c;

	size_t bl = strlen(base);
	url = xasprintf("%.*s%s", (int)(bl && base[bl - 1] == '/' ? bl - 1 : bl), base, path);
	if (!text || !(c = curl_easy_init()))
		return ingot_fail_kind(e, -ENOMEM, VERIFIER_FAIL_TRANSPORT, "%s: out of memory", url);
	strbuf_init(&sb, 1024);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, gather);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sb);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	cr = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (cr != CURLE_OK)
		return ingot_fail_kind(e, -EIO, VERIFIER_FAIL_TRANSPORT, "%s: %s", url, err[0] ? err : curl_easy_strerror(cr));
	*reply = json_loadb(sb.buf, sb.len, 0, &je);
	if (!json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		return ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s: HTTP %ld: expected a JSON object, got %.80s",
				       url, *status, sb.len ? sb.buf : "nothing");
	}
	if (*status != 200) {
		const char *why = json_string_value(json_object_get(*reply, "error"));
		int kind = *status == 404 || *status == 409 || *status == 410 ? VERIFIER_FAIL_NONCE : VERIFIER_FAIL_REFUSED;
		int r = ingot_fail_kind(e, -EPERM, kind, "%s: HTTP %ld: %s", url, *status, why ? why : "(no error line)");
		json_decref(*reply);
		*reply = NULL;
		return r;
	}
	return 0;
}

int verifier_nonce(const char *base, const char *node, long timeout, char hex[2 * NONCE_MAX + 1], ingot_error *e)
{
	_cleanup_json_ json_t *req = json_pack("{s:s}", "node", node), *rep = NULL;
	uint8_t raw[NONCE_MAX];
	size_t len;
	long status = 0;
	int r;

	if ((r = call(base, "/v1/nonce", req, timeout, &status, &rep, e)) < 0) {
		e->kind = e->kind == VERIFIER_FAIL_NONCE ? VERIFIER_FAIL_REFUSED : e->kind;   /* no nonce yet */
		return r;
	}
	const char *n = json_string_value(json_object_get(rep, "nonce"));
	if (!n || nonce_parse(n, raw, &len, NULL) < 0)
		return ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s/v1/nonce: nonce: expected 16-128 hex digits",
				       base);
	hex_encode(raw, len, hex);
	return 0;
}

int verifier_evidence(const char *base, const char *node, const char *nonce_hex, const json_t *quote,
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
	if ((r = call(base, "/v1/evidence", req, timeout, &status, &rep, e)) < 0)
		return r;
	const char *v = json_string_value(json_object_get(rep, "verdict"));
	const char *why = json_string_value(json_object_get(rep, "reason"));
	if (!v || !why)
		return ingot_fail_kind(e, -EBADMSG, VERIFIER_FAIL_TRANSPORT, "%s/v1/evidence: expected verdict and reason",
				       base);
	snprintf(out->verdict, sizeof(out->verdict), "%s", v);
	snprintf(out->reason, sizeof(out->reason), "%s", why);
	return 0;
}
