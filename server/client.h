/* The node's side of the verifier's protocol (docs/verifier.md), on
 * libcurl: ask for a nonce, send the evidence, read the verdict.  The
 * quote itself is the caller's (a TPM, attest/tpm.h). */
#ifndef INGOT_SERVER_CLIENT_H
#define INGOT_SERVER_CLIENT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "attest/nonce.h"
#include "keys/keyring.h"
#include "lib/err.h"
#include "manifest/dsse.h"

/* What failed (e->kind), for the caller's exit status. */
enum verifier_fail {
	VERIFIER_FAIL_TRANSPORT = 101,   /* not reached, timed out, not HTTP, not JSON */
	VERIFIER_FAIL_REFUSED = 102,     /* the service refused the request (4xx/5xx): its one line */
	VERIFIER_FAIL_NONCE = 103,       /* the nonce was used, expired or never issued (404/409/410) */
	VERIFIER_FAIL_OTHER_IMAGE = 104, /* a manifest, signed, of another pool or image root */
};

struct verifier_verdict {
	char verdict[32];               /* admit | refuse | unverified | not-made */
	char reason[INGOT_ERR_MSG];
};

/* One session with the verifier: one libcurl handle, so the nonce and
 * the evidence travel on one kept-alive HTTP/1.1 connection.  With a
 * `via` stream (a character device such as a virtio-serial port, or a
 * tty, that a relay carries to the verifier) that connection is the
 * stream: libcurl connects to a private local socket, and a thread
 * copies bytes between that connection and the stream, in which the
 * requests and responses follow each other as on one connection. */
struct verifier {
	const char *base;
	void *curl;
	int via;          /* the stream, or -1 */
	int lfd;          /* the private socket libcurl connects to */
	int conn;         /* libcurl's newest connection, accepted */
	char name[48];    /* its abstract name */
	bool pumping;
	pthread_t pump;
	const char *token;   /* sent as "Authorization: Bearer TOKEN" when set (the operator's calls) */
};

/* BASE: the verifier's URL (with VIA, it only names the Host header
 * and path: use a numeric address, nothing is resolved or dialled).
 * VIA: NULL, or the path of the stream. */
int verifier_open(struct verifier *v, const char *base, const char *via, ingot_error *e);
void verifier_close(struct verifier *v);

/* POST BASE/v1/nonce {"node": node}: the nonce, lower-case hex. */
int verifier_nonce(struct verifier *v, const char *node, long timeout, char hex[2 * NONCE_MAX + 1], ingot_error *e);

/* POST BASE/v1/evidence: the quote document, the firmware log's bytes
 * and the node report (or NULL). */
int verifier_evidence(struct verifier *v, const char *node, const char *nonce_hex, const json_t *quote,
		      const void *log, size_t log_len, const json_t *report, long timeout,
		      struct verifier_verdict *out, ingot_error *e);

/* POST body to BASE PATH: *reply the JSON object of a 200 (a refusal
 * fails, its one line in e, kind VERIFIER_FAIL_REFUSED, or
 * VERIFIER_FAIL_NONCE for 404, 409 and 410). */
int verifier_post(struct verifier *v, const char *path, const json_t *body, long timeout, json_t **reply,
		  ingot_error *e);

/* GET BASE PATH: the body of a 200 (at most max bytes: a larger one
 * fails), *body malloc'd; a refusal fails as verifier_post's does. */
int verifier_get(struct verifier *v, const char *path, size_t max, long timeout, char **body, size_t *len,
		 ingot_error *e);

/* What verifier_fetch_manifest fetched and checked. */
struct fetched_manifest {
	char recipe[256];                                /* the pool, recipe.name */
	uint64_t serial;
	char root[65];                                   /* verity.root_hash */
	char file_list[MANIFEST_REF_NAME_MAX + 1];       /* v2: the bound file's name ("" for v1) */
	char file_list_sha256[65];
};

/* The node's signed manifest from the verifier (GET /v1/manifests/POOL,
 * docs/verifier.md), trusted only as far as the node's own keys go:
 * signed by kr's threshold (the manifest role's keys, from the image),
 * unexpired at now, of pool and describing the image root (the booted
 * one: 64 hex digits), and the file list it binds (fetched too) of the
 * signed sha256.  Then written, atomically: the envelope's bytes as
 * signed to out, the file list beside it under its subject name, where
 * `ingot verify --manifest out` finds it.  Nothing is written on a
 * failure; e->kind: VERIFIER_FAIL_TRANSPORT or _REFUSED (not reached,
 * or no manifest: not checked), ENVELOPE_FAIL_* (signature, expiry,
 * shape, the file list's digest), VERIFIER_FAIL_OTHER_IMAGE. */
int verifier_fetch_manifest(struct verifier *v, const char *pool, const char *root, const struct keyring *kr,
			    time_t now, const char *out, struct fetched_manifest *fm, ingot_error *e);

#endif
