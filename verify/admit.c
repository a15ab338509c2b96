#include "verify/admit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest/predict.h"
#include "keys/envelope.h"
#include "keys/keyring.h"
#include "keys/statement.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/time.h"
#include "lib/xalloc.h"
#include "manifest/schema.h"
#include "verify/checks.h"
#include "verify/filecheck.h"
#include "verify/nodeprobe.h"
#include "verify/tuplecheck.h"

static char *rfc3339(time_t t)
{
	char buf[TIME_RFC3339_LEN];
	return xstrdup(time_format(t, buf));
}

static char *read_node_line(const char *root, const char *abs)
{
	_cleanup_free_ char *p = path_join(root, abs + 1);
	char *buf = NULL;
	size_t len = 0;
	ingot_error e = { 0 };
	if (!p || read_file(p, 4096, &buf, &len, &e) < 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static json_t *node_identity(const struct verify_opts *o, const char *root)
{
	_cleanup_free_ char *host = read_node_line(root, "/etc/hostname");
	_cleanup_free_ char *mid = read_node_line(root, "/etc/machine-id");
	char hn[256] = "";
	if (!strcmp(root, "/") && gethostname(hn, sizeof(hn) - 1) == 0 && hn[0]) {
		free(host);
		host = xstrdup(hn);
	}
	const char *id = o->node_id ? o->node_id : host && *host ? host : mid && *mid ? mid : "unknown";
	return json_pack("{s:s, s:o, s:o}", "id", id,
			 "hostname", host && *host ? json_string(host) : json_null(),
			 "machine_id", mid && *mid ? json_string(mid) : json_null());
}

/* The header's members the manifest's document passes on as written
 * (manifest/typed.h: the report header reads doc), whatever their type
 * in an unverified one, in the header's order. */
enum { H_RECIPE, H_SERIAL, H_EXPIRES, H_IMAGE_SHA256, H_VERITY_ROOT, H__N };
static const char *const header_keys[H__N] = {
	"recipe", "serial", "expires", "image_sha256", "verity_root_hash",
};

static void header_members(const json_t *doc, json_t *v[H__N])
{
	json_t *image = NULL, *verity = NULL;

	memset(v, 0, H__N * sizeof(*v));
	json_unpack((json_t *)doc, "{s?o s?o s?o s?o s?o}", "recipe", &v[H_RECIPE], "serial",
		    &v[H_SERIAL], "expires", &v[H_EXPIRES], "image", &image, "verity", &verity);
	json_unpack(image, "{s?o}", "sha256", &v[H_IMAGE_SHA256]);
	json_unpack(verity, "{s?o}", "root_hash", &v[H_VERITY_ROOT]);
}

/* Manifest facts for the report header, whatever the signature says. */
static void describe_manifest(struct verify_report *r, const char *path, const char *file_sha256,
			      const struct manifest *m, const uint8_t *content_digest)
{
	uint8_t cd[32], d[32];
	char chex[65], hex[65];
	json_t *hv[H__N];

	r->manifest = json_pack("{s:s}", "path", path);
	if (*file_sha256)
		json_object_set_new(r->manifest, "sha256", json_string(file_sha256));
	if (!m)
		return;
	if (content_digest)
		memcpy(cd, content_digest, sizeof(cd));
	/* An unverified v2 head has no files[]: its digest would be of something else. */
	if (content_digest || ((m->have & MF_FILES) && attest_content_digest(m->doc, cd) == 0)) {
		hex_encode(cd, 32, chex);
		json_object_set_new(r->manifest, "content_digest", json_string(chex));
	}
	header_members(m->doc, hv);
	for (size_t i = 0; i < H__N; i++)
		json_object_set(r->manifest, header_keys[i], hv[i] ? hv[i] : json_null());
	if (m->recipe.name)
		r->pool = xstrdup(m->recipe.name);
	if (json_is_object(m->tuple)) {
		size_t len = 0;
		_cleanup_free_ char *c = json_compact(m->tuple, &len);
		if (c) {
			sha256_buf(c, len, d);
			hex_encode(d, 32, hex);
			r->tuple_digest = xstrdup(hex);
		}
	}
}

/* The predicate of an envelope whose signatures did not hold (or could
 * not be checked), so the other checks can still describe the node;
 * parsed only then, and never trusted. */
static struct manifest *unverified_manifest(const char *path, const json_t *doc)
{
	_cleanup_statement_ struct statement st = { 0 };
	ingot_error e = { 0 };

	if (statement_peek(path, doc, &st, &e) < 0)
		return NULL;
	return manifest_decode(path, (json_t *)st.predicate, MANIFEST_REVIEW);
}

/* Signature, expiry and rollback through the keyring; *m gets the
 * manifest (the verified one, or the unverified payload so the other
 * checks can still describe the node) and, when verified, cd its
 * content digest (*have_cd set).  The file is read once: its sha256
 * (file_sha256, "" if unread) is of the bytes verified. */
static void check_signature(const struct verify_opts *o, struct verify_report *r, struct manifest **m,
			    char file_sha256[SHA256_HEX_LEN + 1], uint8_t cd[32], bool *have_cd)
{
	_cleanup_json_ json_t *doc = NULL;
	uint8_t d[SHA256_LEN];
	ingot_error e = { 0 };

	*m = NULL;
	*have_cd = false;
	*file_sha256 = '\0';
	if (manifest_read_file(o->manifest_path, &doc, d, &e) < 0) {
		report_set(r, CHECK_SIGNATURE, ST_ERROR, "cannot read manifest: %s", e.msg);
		return;
	}
	hex_encode(d, sizeof(d), file_sha256);
	if (!json_object_get(doc, "payloadType")) {
		/* A plain manifest: its content can be checked, its origin cannot. */
		if (manifest_parse(o->manifest_path, doc, MANIFEST_FULL, m, &e) < 0) {
			report_set(r, CHECK_SIGNATURE, ST_ERROR, "%s", e.msg);
			return;
		}
		if (o->allow_unsigned)
			report_set(r, CHECK_SIGNATURE, ST_SKIP,
				   "unsigned manifest accepted (--allow-unsigned)");
		else
			report_set(r, CHECK_SIGNATURE, ST_FAIL,
				   "manifest is not signed: a DSSE envelope is required");
		report_evidence(r, CHECK_SIGNATURE, "%s: plain manifest, no payloadType", o->manifest_path);
		return;
	}

	if (!o->keyring_path) {
		*m = unverified_manifest(o->manifest_path, doc);
		report_set(r, CHECK_SIGNATURE, ST_ERROR, "no keyring given (--keyring): "
			   "cannot check the envelope's signatures");
		return;
	}
	_cleanup_keyring_ struct keyring *kr = NULL;
	if (keyring_load_role(o->keyring_path, KEY_ROLE_MANIFEST, true, &kr, &e) < 0) {
		*m = unverified_manifest(o->manifest_path, doc);
		report_set(r, CHECK_SIGNATURE, ST_ERROR, "%s", e.msg);
		return;
	}
	struct verify_policy pol = {
		.now = o->have_now ? o->now : time(NULL),
		.state_path = o->state_path,
	};
	struct verify_outcome out;
	struct verified_manifest vm;
	memset(&out, 0, sizeof(out));
	ingot_error_clear(&e);
	if (envelope_verify_manifest(o->manifest_path, doc, kr, &pol, &vm, &out, &e) < 0 ||
	    (o->state_path && envelope_record_state(o->state_path, &out, &e) < 0)) {
		verified_manifest_free(&vm);
		*m = unverified_manifest(o->manifest_path, doc);
		/* I/O trouble is "could not check"; anything else is a forgery,
		 * an expired or a rolled-back manifest. */
		report_set(r, CHECK_SIGNATURE, e.kind == ENVELOPE_FAIL_IO ? ST_ERROR : ST_FAIL,
			   "%s", e.msg);
		report_evidence(r, CHECK_SIGNATURE, "envelope_verify exit class %d", e.kind);
		return;
	}
	*m = manifest_decode(o->manifest_path, vm.manifest, MANIFEST_FULL);
	memcpy(cd, vm.content_digest, sizeof(vm.content_digest));
	*have_cd = true;
	verified_manifest_free(&vm);
	report_set(r, CHECK_SIGNATURE, ST_PASS, "%u of %u required trusted signatures valid, serial %llu",
		   out.valid, out.threshold, (unsigned long long)out.serial);
	json_t *signers = json_array();
	for (unsigned i = 0; i < out.valid && i < VERIFY_MAX_SIGNERS; i++) {
		report_evidence(r, CHECK_SIGNATURE, "signed by %s (%s)", out.signers[i],
				out.signer_names[i] ? out.signer_names[i] : "?");
		json_array_append_new(signers, json_string(out.signers[i]));
	}
	r->checks[CHECK_SIGNATURE].details = json_pack("{s:o, s:I, s:I, s:o}", "signers", signers,
		"serial", (json_int_t)out.serial, "last_serial", (json_int_t)out.last_serial,
		"expires", out.has_expiry ? json_integer((json_int_t)out.expires) : json_null());
}

static void check_files(const struct verify_opts *o, const char *root, const struct manifest *m,
			struct verify_report *r)
{
	struct files_result fr;
	ingot_error e = { 0 };

	if (!o->check_files) {
		report_set(r, CHECK_FILES, ST_SKIP, "files check not requested (--no-files)");
		return;
	}
	if (files_check(root, m, o->ignore, &fr, &e) < 0) {
		report_set(r, CHECK_FILES, ST_ERROR, "%s", e.msg);
		return;
	}
	json_decref(r->checks[CHECK_FILES].evidence);
	r->checks[CHECK_FILES].evidence = json_incref(fr.evidence);
	r->checks[CHECK_FILES].details = json_incref(fr.details);
	json_object_set_new(fr.details, "checked", json_integer((json_int_t)fr.checked));
	if (!files_result_clean(&fr))
		report_set(r, CHECK_FILES, ST_FAIL, "root %s differs from the manifest: "
			   "%zu changed, %zu missing, %zu extra", root, fr.changed, fr.missing, fr.extra);
	else
		report_set(r, CHECK_FILES, ST_PASS, "%zu entries under %s match the manifest",
			   fr.checked, root);
	files_result_free(&fr);
}

int verify_node(const struct verify_opts *o, struct verify_report *r, ingot_error *e)
{
	const char *root = o->root && *o->root ? o->root : "/";
	_cleanup_manifest_ struct manifest *m = NULL;
	struct node_probe *probe = NULL;
	int ret;

	r->fail_on_warn = o->fail_on_warn;
	r->time = rfc3339(o->have_now ? o->now : time(NULL));
	r->node = node_identity(o, root);

	char file_sha256[SHA256_HEX_LEN + 1];

	uint8_t cd[32];
	bool have_cd;

	check_signature(o, r, &m, file_sha256, cd, &have_cd);
	describe_manifest(r, o->manifest_path, file_sha256, m, have_cd ? cd : NULL);

	/* Check before use: the probe runs the image's tools (nvidia-smi can
	 * load nvidia.ko through nvidia-modprobe), so it runs none when the
	 * files check was asked for and did not pass. */
	if (m)
		check_files(o, root, m, r);
	if (m && o->check_files && r->checks[CHECK_FILES].status != ST_PASS)
		ret = node_probe_run_no_tools(root, &probe, e);
	else
		ret = node_probe_run(root, &probe, e);
	if (ret < 0)
		return ret;
	r->probe = probe_to_json(probe);

	if (!m) {
		for (int i = CHECK_IMAGE; i < CHECK__COUNT; i++)
			report_set(r, i, ST_ERROR, "no usable manifest");
	} else {
		check_image(o, m, r);
		check_tpm(o, m, r);
		tuplecheck_run(m->tuple, probe, r);
		check_rules(o, m, probe, r);
		check_ring(o, m, r);
	}
	node_probe_free(probe);
	report_finish(r);
	return 0;
}
