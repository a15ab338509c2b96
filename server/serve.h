/* ingot serve: the verifier off the node (docs/verifier.md).  A node asks
 * for a nonce, quotes, and sends the quote and its firmware event log;
 * the service judges them by the one boot verdict (attest/verdict.h) on
 * the inputs loaded once (verify/boot-inputs.h), stores the verdict
 * (consuming the nonce in the same transaction, server/db.h) before it
 * answers, and runs the scheduler hook.  A sweep drains nodes whose last
 * admission is older than the staleness interval. */
#ifndef INGOT_SERVER_SERVE_H
#define INGOT_SERVER_SERVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* The roles of the verdict's statements: manifest, enrolment, firmware-ref
 * (BOOT_ROLES, checked where both are seen). */
#define SERVE_ROLES 3

struct serve_config {
	char *listen;              /* HOST:PORT; port 0 picks a free one */
	char *database;            /* a path, sqlite:PATH or postgresql:CONNINFO */
	char *keyring;             /* a keyring with roles, or the manifest role's (untyped) */
	/* manifest-, enrolment-, firmware-ref-keyring and -threshold, by
	 * KEY_ROLE_* (verify/boot-inputs.h boot_keyrings): NULL, 0 for none */
	char *role_keyring[SERVE_ROLES];
	unsigned role_threshold[SERVE_ROLES];
	char *enrolments;          /* directory of enrolment records, or NULL */
	char *firmware_refs;       /* directory of firmware references, or NULL */
	json_t *manifests;         /* array of manifest envelope paths */
	bool mixed_vendors;        /* mixed-vendors = allow: the manifests may declare two vendors */
	unsigned accept_weak;      /* enum attest_weakness bits */
	int64_t nonce_lifetime;    /* seconds */
	int64_t stale_after;       /* seconds; 0: no staleness sweep */
	int64_t sweep_interval;    /* seconds */
	char **hook;               /* argv prefix, NULL-terminated, or NULL: none */
	int64_t hook_timeout;      /* seconds */
	char *token_file;          /* NULL: trust-changing operations refused */
	/* enrolment over the API (server/enrol.h): on when enrolment_ca is set */
	char *enrolment_ca;        /* PEM bundle EK certificates must chain to */
	char *ek_ca;               /* PEM bundle whose EKs are approved without the operator, or NULL */
	char *enrolment_key;       /* the enrolment role's signing key */
	int64_t enrolment_ttl;     /* seconds a challenge stays answerable */
	size_t max_body;           /* bytes */
	unsigned max_connections;
	unsigned connection_timeout;   /* seconds a connection may idle */
	unsigned threads;
	unsigned max_nonces;       /* unused, unexpired nonces one node may hold */
	unsigned max_evidence;     /* pieces of evidence one node may send in a minute */
};

/* KEY = VALUE lines ('#' comments; docs/verifier.md "Configuration");
 * relative paths are taken from the file's directory.  Every problem is
 * one line: FILE:LINE: KEY: expected X, got Y. */
int serve_config_load(const char *path, struct serve_config *c, ingot_error *e);
void serve_config_free(struct serve_config *c);

/* Where the service's log lines go (the CLI: stderr, the journal). */
struct serve_log {
	void (*line)(void *arg, const char *line);
	void *arg;
};

struct serve;

/* Load the trust, open the database, read the token, listen and start
 * serving on threads of its own.  On return the socket accepts. */
int serve_start(const struct serve_config *c, const struct serve_log *log, struct serve **out, ingot_error *e);
/* What serve_start loads and opens (trust, token, database), then closed:
 * a configuration check that binds no socket. */
int serve_check(const struct serve_config *c, ingot_error *e);
/* The address actually bound ("127.0.0.1:PORT"). */
const char *serve_address(const struct serve *s);
/* Stop accepting, finish the requests in flight, stop the sweep, close. */
void serve_stop(struct serve *s);

/* Run argv (no shell) with the node, the verdict and the reason appended,
 * waiting at most timeout seconds (then killed).  0, or -1 and why in e. */
int serve_run_hook(char *const *argv, const char *node, const char *verdict, const char *reason, int64_t timeout,
		   ingot_error *e);

#endif
