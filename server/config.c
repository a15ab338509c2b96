/* The verifier's configuration file (server/serve.h). */
#include "server/serve.h"

#include <ctype.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/enroll.h"
#include "attest/quote.h"
#include "audit/audit.h"
#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"
#include "server/db.h"

#define CONFIG_MAX (1u << 20)

void serve_config_free(struct serve_config *c)
{
	free(c->listen);
	free(c->database);
	free(c->keyring);
	for (unsigned i = 0; i < SERVE_ROLES; i++)
		free(c->role_keyring[i]);
	free(c->enrolments);
	free(c->firmware_refs);
	json_decref(c->manifests);
	for (char **p = c->hook; p && *p; p++)
		free(*p);
	free(c->hook);
	free(c->token_file);
	free(c->enrolment_ca);
	free(c->ek_ca);
	free(c->enrolment_key);
	memset(c, 0, sizeof(*c));
}

/* A path relative to the config file's directory. */
static char *rel(const char *dir, const char *v)
{
	return v[0] == '/' ? xstrdup(v) : path_join(dir, v);
}

static int num(const char *v, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || *end || *out == 0 || *out > max ? -EINVAL : 0;
}

static char **split_argv(const char *v)
{
	char **argv = xcalloc(strlen(v) / 2 + 2, sizeof(*argv));
	_cleanup_free_ char *copy = xstrdup(v);
	char *tok, *save = NULL;
	size_t n = 0;

	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		argv[n++] = xstrdup(tok);
	return argv;
}

/* ROLE-keyring and ROLE-threshold for the verdict's roles (manifest,
 * enrolment, firmware-ref); -ENOENT: not one of them. */
static int role_key(struct serve_config *c, const char *dir, const char *k, const char *v, const char **want)
{
	const char *dash = strrchr(k, '-');
	char role[32];
	enum key_role r;
	unsigned long long n;

	if (!dash || (strcmp(dash, "-keyring") && strcmp(dash, "-threshold")) || (size_t)(dash - k) >= sizeof(role))
		return -ENOENT;
	snprintf(role, sizeof(role), "%.*s", (int)(dash - k), k);
	if (key_role_parse(role, &r) < 0 || r >= SERVE_ROLES)
		return -ENOENT;
	if (!strcmp(dash, "-keyring")) {
		*want = "a path";
		free(c->role_keyring[r]);
		c->role_keyring[r] = rel(dir, v);
		return 0;
	}
	*want = "1 to 256 (at most the role's keys)";
	if (num(v, KEYRING_MAX_KEYS, &n) < 0)
		return -EINVAL;
	c->role_threshold[r] = (unsigned)n;
	return 0;
}

/* One KEY = VALUE; 0, or -EINVAL with what was expected in *want. */
static int set(struct serve_config *c, const char *dir, const char *k, const char *v, const char **want)
{
	unsigned long long n;
	int64_t d;
	char **slot = NULL;

	if (role_key(c, dir, k, v, want) != -ENOENT)
		return role_key(c, dir, k, v, want) < 0 ? -EINVAL : 0;
	if (!strcmp(k, "listen")) {
		*want = "HOST:PORT";
		if (!strrchr(v, ':'))
			return -EINVAL;
		slot = &c->listen;
	} else if (!strcmp(k, "database") || !strcmp(k, "keyring") || !strcmp(k, "enrolments") ||
		   !strcmp(k, "firmware-refs") || !strcmp(k, "token-file") || !strcmp(k, "enrolment-ca") ||
		   !strcmp(k, "enrolment-key") || !strcmp(k, "ek-ca")) {
		*want = "a path";
		slot = !strcmp(k, "database") ? &c->database : !strcmp(k, "keyring") ? &c->keyring :
		       !strcmp(k, "enrolments") ? &c->enrolments : !strcmp(k, "firmware-refs") ? &c->firmware_refs :
		       !strcmp(k, "enrolment-ca") ? &c->enrolment_ca : !strcmp(k, "enrolment-key") ? &c->enrolment_key :
		       !strcmp(k, "ek-ca") ? &c->ek_ca : &c->token_file;
		if (slot == &c->database && !strncmp(v, "sqlite:", 7) && v[7])
			v += 7;
		free(*slot);
		/* A connection string is not a path. */
		*slot = slot == &c->database && !strncmp(v, DB_PG_PREFIX, strlen(DB_PG_PREFIX)) ? xstrdup(v) : rel(dir, v);
		return 0;
	} else if (!strcmp(k, "manifest")) {
		_cleanup_free_ char *m = rel(dir, v);
		json_array_append_new(c->manifests, json_string(m));
		return 0;
	} else if (!strcmp(k, "mixed-vendors")) {
		*want = "allow or refuse";
		if (strcmp(v, "allow") && strcmp(v, "refuse"))
			return -EINVAL;
		c->mixed_vendors = !strcmp(v, "allow");
		return 0;
	} else if (!strcmp(k, "accept-weak")) {
		*want = "a comma-separated list of weaknesses (sha1-signature, no-nonce, secure-boot-unjudged, unknown-firmware)";
		return attest_weakness_parse(v, &c->accept_weak, NULL) < 0 ? -EINVAL : 0;
	} else if (!strcmp(k, "nonce-lifetime") || !strcmp(k, "stale-after") || !strcmp(k, "sweep-interval") ||
		   !strcmp(k, "hook-timeout") || !strcmp(k, "enrolment-lifetime")) {
		*want = "a duration (N, Ns, Nm, Nh or Nd)";
		if (audit_parse_duration(v, &d) < 0 || (d == 0 && strcmp(k, "stale-after")))
			return -EINVAL;
		*(!strcmp(k, "nonce-lifetime") ? &c->nonce_lifetime : !strcmp(k, "stale-after") ? &c->stale_after :
		  !strcmp(k, "sweep-interval") ? &c->sweep_interval :
		  !strcmp(k, "enrolment-lifetime") ? &c->enrolment_ttl : &c->hook_timeout) = d;
		return 0;
	} else if (!strcmp(k, "hook")) {
		*want = "an absolute program path and its arguments";
		if (v[0] != '/')
			return -EINVAL;
		for (char **p = c->hook; p && *p; p++)
			free(*p);
		free(c->hook);
		c->hook = split_argv(v);
		return 0;
	} else if (!strcmp(k, "max-body")) {
		*want = "bytes, 1 to 67108864";
		if (num(v, 64u << 20, &n) < 0)
			return -EINVAL;
		c->max_body = n;
		return 0;
	} else if (!strcmp(k, "max-connections") || !strcmp(k, "connection-timeout") || !strcmp(k, "threads") ||
		   !strcmp(k, "max-nonces-per-node") || !strcmp(k, "max-evidence-per-minute")) {
		*want = !strcmp(k, "threads") ? "1 to 64" : "1 to 100000";
		if (num(v, !strcmp(k, "threads") ? 64 : 100000, &n) < 0)
			return -EINVAL;
		*(!strcmp(k, "threads") ? &c->threads : !strcmp(k, "max-connections") ? &c->max_connections :
		  !strcmp(k, "max-nonces-per-node") ? &c->max_nonces :
		  !strcmp(k, "max-evidence-per-minute") ? &c->max_evidence : &c->connection_timeout) = n;
		return 0;
	} else {
		*want = "a known key (docs/verifier.md)";
		return -ENOENT;
	}
	free(*slot);
	*slot = xstrdup(v);
	return 0;
}

int serve_config_load(const char *path, struct serve_config *c, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL, *pcopy = xstrdup(path);
	const char *dir = dirname(pcopy);
	size_t len, lineno = 0;
	char *next;
	int r;

	memset(c, 0, sizeof(*c));
	*c = (struct serve_config){
		.manifests = json_array(), .nonce_lifetime = 120, .sweep_interval = 60, .hook_timeout = 30,
		.max_body = 4u << 20, .max_connections = 1024, .connection_timeout = 10, .threads = 4, .max_nonces = 4,
		.max_evidence = 60, .enrolment_ttl = ENROLL_TTL_DEFAULT,
	};
	if ((r = read_file(path, CONFIG_MAX, &buf, &len, e)) < 0)
		return r;
	if (memchr(buf, '\0', len))
		return ingot_fail(e, -EINVAL, "%s: expected a text file, got a NUL byte", path);
	for (char *line = buf; line; line = next) {
		const char *want = "";
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *eq = strchr(line, '=');
		char *k = line, *v = eq ? eq + 1 : NULL;
		if (eq)
			*eq = '\0';
		while (isspace((unsigned char)*k))
			k++;
		for (char *t = k + strlen(k); t > k && isspace((unsigned char)t[-1]);)
			*--t = '\0';
		if (!*k && !v)
			continue;
		if (!v)
			return ingot_fail(e, -EINVAL, "%s:%zu: expected KEY = VALUE, got \"%.80s\"", path, lineno, k);
		while (isspace((unsigned char)*v))
			v++;
		for (char *t = v + strlen(v); t > v && isspace((unsigned char)t[-1]);)
			*--t = '\0';
		if (!*v || set(c, dir, k, v, &want) < 0)
			return ingot_fail(e, -EINVAL, "%s:%zu: %.80s: expected %s, got \"%.200s\"", path, lineno, k, want, v);
	}
	/* The manifests' keys: an untyped keyring or manifest-keyring (the
	 * other roles may have none: their records are refused then). */
	bool mkeys = c->keyring || c->role_keyring[KEY_ROLE_MANIFEST];
	if (!c->listen || !c->database || !mkeys || !json_array_size(c->manifests))
		return ingot_fail(e, -EINVAL, "%s: %s: expected it to be set", path,
				  !c->listen ? "listen" : !c->database ? "database" : !mkeys ? "keyring" : "manifest");
	/* Enrolment over the API makes records: it needs where they go, the
	 * key that signs them and the operator's token that approves them. */
	if ((c->enrolment_ca || c->enrolment_key || c->ek_ca) && (!c->enrolment_ca || !c->enrolment_key || !c->enrolments ||
						       !c->token_file))
		return ingot_fail(e, -EINVAL, "%s: %s: expected it to be set for enrolment over the API "
				  "(enrolment-ca, enrolment-key, enrolments, token-file)", path,
				  !c->enrolment_ca ? "enrolment-ca" : !c->enrolment_key ? "enrolment-key" :
				  !c->enrolments ? "enrolments" : "token-file");
	if (c->enrolment_ttl > 86400)
		return ingot_fail(e, -EINVAL, "%s: enrolment-lifetime: expected at most 1d, got %lld s", path,
				  (long long)c->enrolment_ttl);
	if (c->stale_after && c->stale_after < c->sweep_interval)
		c->sweep_interval = c->stale_after;
	return 0;
}
