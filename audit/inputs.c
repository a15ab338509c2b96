/* Inputs of an audit: the keyring, the auditor's side files and the pool
 * manifests, each checked once before any report is read. */
#include "audit/audit-private.h"
#include "ops/ring.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attest/verdict.h"
#include "attest/nonce.h"
#include "attest/predict.h"
#include "keys/envelope.h"
#include "keys/key.h"
#include "lib/cleanup.h"
#include "lib/str.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/time.h"
#include "lib/xalloc.h"

void audit_ctx_free(struct audit_ctx *c)
{
	for (size_t i = 0; i < c->n_mf; i++) {
		free(c->mf[i].file);
		manifest_free(c->mf[i].m);
	}
	free(c->mf);
	boot_trust_release(&c->own);
	json_decref(c->nonces);
	json_decref(c->aks);
	json_decref(c->nodes);
	json_decref(c->manifests_out);
	rings_free(c->rings);
}

/* ---- small parsers ---------------------------------------------------- */

int audit_parse_duration(const char *s, int64_t *out)
{
	char *end;
	long long v;
	int64_t mul = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v < 0)
		return -EINVAL;
	if (*end) {
		if (end[1])
			return -EINVAL;
		switch (*end) {
		case 's': mul = 1; break;
		case 'm': mul = 60; break;
		case 'h': mul = 3600; break;
		case 'd': mul = 86400; break;
		default: return -EINVAL;
		}
	}
	if (v > INT64_MAX / mul)
		return -ERANGE;
	*out = (int64_t)v * mul;
	return 0;
}

int audit_parse_time(const char *s, time_t *out)
{
	return s ? time_parse(s, out) : -EINVAL;   /* one RFC 3339 parser: lib/time.h */
}

/* "KEY [VALUE]" lines; '#' starts a comment.  check_key / check_value
 * (optional) validate the columns; a key listed twice is an error, since
 * it would silently shadow the first line.  Result: key -> value ("" when
 * absent). */
static int parse_pairs(const char *path, char *buf, int (*check_key)(const char *),
		       int (*check_value)(const char *), const char *expected, json_t **out,
		       ingot_error *e)
{
	_cleanup_json_ json_t *obj = json_object();
	size_t lineno = 0;
	char *next;

	for (char *line = buf; line; line = next) {
		char *tok, *comment;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		comment = strchr(line, '#');
		if (comment)
			*comment = '\0';
		char *k = strtok_r(line, " \t\r", &tok);
		if (!k)
			continue;
		char *v = strtok_r(NULL, " \t\r", &tok);
		if (strtok_r(NULL, " \t\r", &tok) || (check_key && check_key(k) < 0) ||
		    (check_value && (!v || check_value(v) < 0)))
			return ingot_fail(e, -EINVAL, "%s:%zu: expected %s, got \"%.80s%s%.80s\"", path,
					  lineno, expected, k, v ? " " : "", v ? v : "");
		if (json_object_get(obj, k))
			return ingot_fail(e, -EINVAL, "%s:%zu: %.80s: listed twice, expected once",
					  path, lineno, k);
		json_object_set_new(obj, k, json_string(v ? v : ""));
	}
	*out = TAKE_PTR(obj);
	return 0;
}

static int read_pairs(const char *path, int (*check_key)(const char *),
		      int (*check_value)(const char *), const char *expected, json_t **out,
		      ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, 64u << 20, &buf, &len, e);
	if (r < 0)
		return r;
	return parse_pairs(path, buf, check_key, check_value, expected, out, e);
}

static int check_sha256(const char *s) { return is_sha256_hex(s) ? 0 : -EINVAL; }

/* --aks: "SHA256 [NODE]" lines, or the AKs' public keys themselves as PEM
 * blocks (enrolled for any node).  Each block is replaced by its key id
 * on its END line, so line numbers in messages stay those of the file. */
static int read_aks(const char *path, json_t **out, ingot_error *e)
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----", end[] = "-----END PUBLIC KEY-----";
	_cleanup_free_ char *buf = NULL;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	const char *block = NULL;
	size_t len, lineno = 0;
	char *next;
	int r;

	r = read_file(path, 16u << 20, &buf, &len, e);
	if (r < 0)
		return r;
	strbuf_init(&text, len + 1);
	for (char *line = buf; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else if (!*line)
			break;   /* after the last newline */
		lineno++;
		size_t l = strcspn(line, "\r");
		if (!block && !strncmp(line, begin, l) && l == sizeof(begin) - 1) {
			block = line;
		} else if (block && !strncmp(line, end, l) && l == sizeof(end) - 1) {
			_cleanup_public_key_ struct public_key *k = NULL;
			_cleanup_strbuf_ struct strbuf pem = STRBUF_INIT;
			/* The block's lines were split in place; rejoin them. */
			strbuf_init(&pem, 1024);
			for (const char *p = block; p <= line; p += strlen(p) + 1)
				strbuf_addf(&pem, "%s\n", p);
			if (public_key_from_pem(path, pem.buf, pem.len, &k, e) < 0)
				return ingot_prefix(e, "%s:%zu", path, lineno);
			strbuf_addf(&text, "%s\n", k->keyid);
			block = NULL;
			continue;
		}
		if (block)
			strbuf_addch(&text, '\n');
		else
			strbuf_addf(&text, "%s\n", line);
	}
	if (block)
		return ingot_fail(e, -EINVAL, "%s:%zu: expected %s, got the end of the file", path, lineno, end);
	return parse_pairs(path, text.buf, check_sha256, NULL,
			   "AK_SHA256_HEX [NODE] or a PEM PUBLIC KEY block", out, e);
}

/* An issued nonce follows the one nonce rule (attest/nonce.h). */
static int check_nonce(const char *s)
{
	uint8_t n[NONCE_MAX];
	size_t len;

	return nonce_parse(s, n, &len, NULL);
}

/* The nonces issued for reports in memory, as --nonces gives them: with
 * one, every report's quote must carry its own. */
static int report_nonces(struct audit_ctx *c, ingot_error *e)
{
	for (size_t i = 0; i < c->o->n_reports; i++) {
		const struct audit_report *ar = &c->o->reports[i];
		json_t *id = NULL;
		const char *node;

		json_unpack((json_t *)ar->report, "{s?{s?o}}", "node", "id", &id);
		node = json_string_value(id);
		if (!ar->nonce || !node)
			continue;
		if (check_nonce(ar->nonce) < 0)
			return ingot_fail(e, -EINVAL, "%s: nonce: expected 8-64 bytes in hex, got \"%.80s\"", ar->name,
					  ar->nonce);
		if (!c->nonces)
			c->nonces = json_object();
		json_object_set_new(c->nonces, node, json_string(ar->nonce));
	}
	return 0;
}

/* ---- manifests -------------------------------------------------------- */

int audit_list_dir(const char *dir, const char *suffix, struct dirent ***out, int *n, ingot_error *e)
{
	*n = scandir(dir, out, NULL, alphasort);
	if (*n < 0)
		return ingot_fail(e, -errno, "%s: cannot read directory: %s", dir, strerror(errno));
	int k = 0;
	for (int i = 0; i < *n; i++) {
		if ((*out)[i]->d_name[0] != '.' && ends_with((*out)[i]->d_name, suffix))
			(*out)[k++] = (*out)[i];
		else
			free((*out)[i]);
	}
	*n = k;
	return 0;
}

/* An envelope verified the way `ingot verify-manifest` does it (trusted
 * signatures, statement, subject, schema); an expired one still counts
 * as authentic, so nodes running it are reported as such. */
static void load_one_manifest(struct audit_ctx *c, const char *path, struct audit_manifest *pm)
{
	_cleanup_json_ json_t *doc = NULL;
	/* Everything the audit judges is in the signed head: a v2 file
	 * list is not read (docs/signing.md). */
	struct verify_policy pol = { .now = c->o->now, .file_list_use = FILE_LIST_HEAD };
	const struct keyring *kr = NULL;
	ingot_error e = { 0 };
	int r;

	pm->file = xstrdup(path);
	r = manifest_read_file(path, &doc, NULL, &e);
	if (r == 0 && (r = boot_trust_keyring(c->trust, KEY_ROLE_MANIFEST, &kr, &e)) < 0)
		ingot_prefix(&e, "%s", path);
	if (r == 0) {
		r = envelope_verify_json(path, doc, kr, &pol, &pm->m, NULL, &e);
		if (r < 0 && e.kind == ENVELOPE_FAIL_EXPIRED) {
			pm->expired = 1;
			pol.now = 0;
			ingot_error_clear(&e);
			r = envelope_verify_json(path, doc, kr, &pol, &pm->m, NULL, &e);
		}
	}
	/* The prediction is recomputed from the signed content (a head
	 * alone carries the file list's digest, signed, in its place). */
	if (r == 0)
		r = pm->m->have & MF_FILES ? attest_check_measurement(pm->m->doc, NULL, &e)
							 : attest_check_head_measurement(pm->m->doc, NULL, &e);
	if (r == 0) {
		/* A UKI image's PCR 15 holds its init's event (attest/verdict.h). */
		pm->predicted = manifest_boot_pcr15(pm->m);
		if (!pm->predicted && (pm->m->have & MF_PREDICTED))
			pm->predicted = pm->m->measurement.predicted_hex;
		if (!pm->predicted)
			r = ingot_fail(&e, -EINVAL, "%s: recipe.name or measurement.predicted.sha256 missing", path);
	}
	if (r < 0) {
		manifest_free(pm->m);
		pm->m = NULL;
		pm->ok = 0;
		snprintf(pm->error, sizeof(pm->error), "%s", e.msg);
		return;
	}
	const json_t *t = pm->m->tuple;
	if (t) {
		_cleanup_free_ char *s = json_compact(t, NULL);
		uint8_t dg[32];
		sha256_buf(s, strlen(s), dg);
		hex_encode(dg, 32, pm->tuple_digest);
	} else {
		strcpy(pm->tuple_digest, "-");
	}
	pm->ok = 1;
}

/* A bare manifest beside the envelopes proves nothing, but a node that
 * booted it is worth naming: its prediction is kept for that. */
static void load_unsigned_manifest(const char *path, struct audit_manifest *pm)
{
	_cleanup_json_ json_t *doc = NULL;
	ingot_error e = { 0 };

	pm->file = xstrdup(path);
	pm->unsigned_only = 1;
	if (manifest_read_file(path, &doc, NULL, &e) < 0 || attest_check_measurement(doc, NULL, &e) < 0) {
		snprintf(pm->error, sizeof(pm->error), "%s", e.msg);
		return;
	}
	/* Only named, never trusted: decoded as it is (its measurement, the
	 * one thing used, was just checked). */
	pm->m = manifest_decode(path, doc, MANIFEST_REVIEW);
	pm->predicted = pm->m->have & MF_PREDICTED ? pm->m->measurement.predicted_hex : NULL;
	snprintf(pm->error, sizeof(pm->error), "a bare manifest, not a signed envelope");
}

static const char *manifest_status(const struct audit_manifest *pm)
{
	if (pm->unsigned_only)
		return "unsigned";
	return !pm->ok ? "invalid" : pm->expired ? "expired" : "ok";
}

static int mixed_ok(const struct audit_opts *o, const char *pool)
{
	for (size_t i = 0; i < o->n_mixed_ok; i++)
		if (!strcmp(o->mixed_ok[i], pool))
			return 1;
	return 0;
}

/* A pool's valid manifests of two GPU vendors: marked on each of them,
 * once, for every node of the pool to be told. */
static void mark_mixed_vendors(struct audit_ctx *c)
{
	for (size_t i = 0; i < c->n_mf; i++) {
		struct audit_manifest *a = &c->mf[i];
		const char *va = a->ok ? boot_manifest_vendor(a->m) : NULL;
		for (size_t j = i + 1; va && j < c->n_mf && !a->mixed[0]; j++) {
			const struct audit_manifest *b = &c->mf[j];
			const char *vb = b->ok ? boot_manifest_vendor(b->m) : NULL;
			if (!vb || strcmp(a->m->recipe.name, b->m->recipe.name) || !strcmp(va, vb) ||
			    mixed_ok(c->o, a->m->recipe.name))
				continue;
			for (size_t k = 0; k < c->n_mf; k++)
				if (c->mf[k].ok && !c->mf[k].mixed[0] && !strcmp(c->mf[k].m->recipe.name, a->m->recipe.name)) {
					c->mf[k].mixed[0] = a;
					c->mf[k].mixed[1] = b;
				}
		}
	}
}

/* One manifest (an envelope, or a bare one: listed, never trusted), its
 * row in the document named by name. */
static void add_manifest(struct audit_ctx *c, const char *path, const char *name, int envelope)
{
	struct audit_manifest *pm = &c->mf[c->n_mf++];

	if (envelope)
		load_one_manifest(c, path, pm);
	else
		load_unsigned_manifest(path, pm);
	json_array_append_new(c->manifests_out, json_pack("{s:s,s:s?,s:I,s:s,s:s,s:b,s:s*}",
		"file", name, "pool", audit_manifest_pool(pm), "serial", (json_int_t)audit_manifest_serial(pm),
		"tuple_digest", pm->ok ? pm->tuple_digest : "-",
		"status", manifest_status(pm),
		"expired", pm->expired, "error", pm->ok ? NULL : pm->error));
}

/* The manifests named one by one (signed envelopes), rows named by
 * their file's base name as a directory's are. */
static int load_manifest_files(struct audit_ctx *c)
{
	const struct audit_opts *o = c->o;

	c->mf = xcalloc(o->n_manifest_files + 1, sizeof(*c->mf));
	c->manifests_out = json_array();
	for (size_t i = 0; i < o->n_manifest_files; i++) {
		const char *slash = strrchr(o->manifest_files[i], '/');
		add_manifest(c, o->manifest_files[i], slash ? slash + 1 : o->manifest_files[i], 1);
	}
	mark_mixed_vendors(c);
	return 0;
}

static int load_manifests(struct audit_ctx *c, ingot_error *e)
{
	struct dirent **env = NULL, **bare = NULL;
	int n_env, n_bare, r;

	if (!c->o->manifests_dir)
		return load_manifest_files(c);
	r = audit_list_dir(c->o->manifests_dir, ".dsse.json", &env, &n_env, e);
	if (r < 0)
		return r;
	r = audit_list_dir(c->o->manifests_dir, ".manifest.json", &bare, &n_bare, e);
	if (r < 0) {
		for (int i = 0; i < n_env; i++)
			free(env[i]);
		free(env);
		return r;
	}
	c->mf = xcalloc((size_t)(n_env + n_bare) + 1, sizeof(*c->mf));
	c->manifests_out = json_array();
	for (int i = 0; i < n_env + n_bare; i++) {
		const char *name = i < n_env ? env[i]->d_name : bare[i - n_env]->d_name;
		_cleanup_free_ char *p = path_join(c->o->manifests_dir, name);
		add_manifest(c, p, name, i < n_env);
	}
	for (int i = 0; i < n_env; i++)
		free(env[i]);
	for (int i = 0; i < n_bare; i++)
		free(bare[i]);
	free(env);
	free(bare);
	mark_mixed_vendors(c);
	return 0;
}

const struct audit_manifest *audit_pool_current(const struct audit_ctx *c, const char *pool)
{
	const struct audit_manifest *best = NULL;
	for (size_t i = 0; i < c->n_mf; i++)
		if (c->mf[i].ok && pool && !strcmp(c->mf[i].m->recipe.name, pool) &&
		    (!best || c->mf[i].m->serial > best->m->serial))
			best = &c->mf[i];
	return best;
}


int audit_load_inputs(struct audit_ctx *c, ingot_error *e)
{
	const struct audit_opts *o = c->o;
	int r;

	struct boot_keyrings k = { .keyring = o->keyring };

	k.role[KEY_ROLE_ENROLMENT] = o->enrolment_keyring;
	k.role[KEY_ROLE_FIRMWARE_REF] = o->firmware_ref_keyring;
	c->trust = o->trust ? o->trust : &c->own;
	if (!o->trust && (r = boot_trust_init(&c->own, &k, e)) < 0)
		return r;
	if (o->nonces && (r = read_pairs(o->nonces, NULL, check_nonce, "NODE NONCE_HEX (8-64 bytes)", &c->nonces, e)) < 0)
		return r;
	if (!o->reports_dir && (r = report_nonces(c, e)) < 0)
		return r;
	if (o->aks && (r = read_aks(o->aks, &c->aks, e)) < 0)
		return r;
	if (o->nodes && (r = read_pairs(o->nodes, NULL, NULL, "NODE [POOL]", &c->nodes, e)) < 0)
		return r;
	/* A record that does not verify is an error: an auditor who named a
	 * directory expects all of it to count. */
	if (!o->trust && ((o->enrolments_dir && (r = boot_trust_add_dir(&c->own, o->enrolments_dir, false, e)) < 0) ||
			  (o->firmware_refs_dir && (r = boot_trust_add_dir(&c->own, o->firmware_refs_dir, true, e)) < 0)))
		return r;
	return load_manifests(c, e);
}
