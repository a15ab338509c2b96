/* The checks of one node report: quote, AK, nonce, event log, image and
 * tuple.  A problem is a finding on the node's row, never an error. */
#include "audit/audit-private.h"
#include "ops/ring.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attest/eventlog.h"
#include "attest/judge.h"
#include "attest/pcrs.h"
#include "attest/predict.h"
#include "attest/quote.h"
#include "attest/verdict.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/escape.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "verify/node-report.h"
#include "verify/nodeprobe.h"
#include "verify/tuplecheck.h"

json_t *audit_new_row(const char *node, const char *pool, const char *file)
{
	return json_pack("{s:s,s:s?,s:s?,s:s,s:n,s:[],s:[]}", "node", node, "pool", pool, "report",
			 file, "tuple_digest", "-", "serial", "findings", "drift");
}

/* The report's event log, raw; -1 (and a finding) when it is missing or
 * not base64. */
static int report_log_bytes(const struct node_report *rep, uint8_t **raw, size_t *len, json_t *row)
{
	const char *s = rep->attestation.eventlog;

	if (!s || base64_decode(s, strlen(s), raw, len) < 0) {
		audit_add_finding(row, "log-mismatch", "attestation.eventlog: missing or not base64");
		return -1;
	}
	return 0;
}

/* The report's event log, parsed; NULL (and a finding) when it is
 * missing or does not parse. */
static struct eventlog *report_log(const struct node_report *rep, struct eventlog *log, json_t *row)
{
	_cleanup_free_ uint8_t *raw = NULL;
	ingot_error e = { 0 };
	size_t len;

	if (report_log_bytes(rep, &raw, &len, row) < 0)
		return NULL;
	if (eventlog_parse("eventlog", raw, len, log, &e) < 0) {
		audit_add_finding(row, "log-mismatch", "%s", e.msg);
		return NULL;
	}
	return log;
}

/* The nonce issued to this node, decoded once for the judge or the
 * verdict: *out NULL without --nonces (then only the quote's own claim
 * is checked, and the evidence is weak).  -1 (a finding added) when it
 * does not decode, which the loader's check already ruled out. */
static int issued_nonce(const struct audit_ctx *c, const char *node, json_t *row, unsigned *accept,
			struct nonce *buf, const struct nonce **out)
{
	const char *want;
	ingot_error e = { 0 };

	*out = NULL;
	if (!c->nonces)
		return 0;
	want = json_string_value(json_object_get(c->nonces, node));
	if (!want) {
		audit_add_finding(row, "nonce-mismatch", "no nonce was issued to this node");
		*accept |= WEAK_NO_NONCE;   /* already a worse finding */
		return 0;
	}
	if (nonce_decode(want, buf, &e) < 0) {
		audit_add_finding(row, "nonce-mismatch", "%s", e.msg);
		return -1;
	}
	*out = buf;
	return 0;
}

/* Post-boot reports only: the AK must be enrolled (a record for this
 * node), or at least on the --aks list, which proves no TPM.  Without
 * either no AK is known to be a TPM's: at best unverified. */
static void check_enrolled(const struct audit_ctx *c, const char *node, const char *akid, json_t *row)
{
	const char *bound;

	if (boot_trust_enrolled(c->trust, node))
		return;   /* the quote was judged with the enrolled AK */
	if (!c->aks) {
		audit_add_finding(row, "unverified", "AK %.16s: no enrolment record (--enrolments) and no enrolled AKs (--aks), so nothing shows "
				  "the quote came from a TPM", akid);
		return;
	}
	bound = json_string_value(json_object_get(c->aks, akid));
	if (!bound)
		audit_add_finding(row, "ak-not-enrolled", "AK %.16s is not enrolled", akid);
	else if (*bound && strcmp(bound, node))
		audit_add_finding(row, "ak-not-enrolled", "AK %.16s is enrolled for node %s", akid, bound);
}

/* A refused quote as a finding.  1 when the quoted PCRs are still
 * proven (the signature, nonce and digest held). */
static int judged(enum attest_verdict reason, const char *msg, json_t *row)
{
	switch (reason) {
	case VERDICT_OK:
		return 1;
	case VERDICT_NONCE:
		audit_add_finding(row, "nonce-mismatch", "%s", msg);
		return 0;
	case VERDICT_PCR_SELECTION:
	case VERDICT_PCR_DIGEST:
		audit_add_finding(row, "pcr-mismatch", "%s", msg);
		return 0;
	case VERDICT_LOG_MISMATCH:
		audit_add_finding(row, "log-mismatch", "%s", msg);
		return 1;
	case VERDICT_WEAK:
		audit_add_finding(row, "unverified", "%s", msg);
		return 1;
	default:
		audit_add_finding(row, "forged-quote", "%s (%s)", msg, attest_verdict_name(reason));
		return 0;
	}
}

/* Which signed image does the quoted PCR prove? */
static const struct audit_manifest *quoted_image(const struct audit_ctx *c, const struct pcr_values *pcrs, json_t *row)
{
	const struct pcr_bank *b = pcr_values_find(pcrs, 0x000B /* TPM2_ALG_SHA256 */);
	const struct audit_manifest *hit = NULL, *bare = NULL;
	unsigned pcr = ATTEST_DEFAULT_PCR;
	char have[SHA256_HEX_LEN + 1] = "";

	for (size_t i = 0; i < c->n_mf && !hit; i++) {
		const struct audit_manifest *pm = &c->mf[i];
		unsigned at = pm->ok ? pm->m->measurement.pcr : PCR_COUNT;
		if (!b || at >= PCR_COUNT || !(b->mask & (1u << at)))
			continue;
		hex_encode(b->value[at], 32, have);
		pcr = at;
		if (!strcmp(have, pm->predicted))
			hit = pm;
	}
	if (hit)
		return hit;
	if (b && (b->mask & (1u << pcr)))
		hex_encode(b->value[pcr], 32, have);
	for (size_t i = 0; i < c->n_mf && !bare; i++)
		if (c->mf[i].unsigned_only && c->mf[i].predicted && *have && !strcmp(have, c->mf[i].predicted))
			bare = &c->mf[i];
	if (bare)
		audit_add_finding(row, "unknown-image", "quoted sha256 PCR %u %.16s is the image of "
				  "%s, which nobody signed", pcr, have, bare->file);
	else
		audit_add_finding(row, "unknown-image", "quoted sha256 PCR %u %.16s matches no signed manifest",
				  pcr, *have ? have : "(not quoted)");
	return NULL;
}

/* A measured boot, judged by the one verdict (attest/verdict.h).  The
 * manifest and firmware reference are picked by the PCRs the quote
 * claims; the verdict then proves them or refuses. */
static const struct audit_manifest *check_measured_boot(struct audit_ctx *c, struct ak_cache *aks, const char *node,
						   const struct node_report *rep, const struct nonce *nonce, unsigned accept,
						   json_t *row)
{
	const json_t *quote = rep->attestation.quote;
	const struct enrolled_ak *en = boot_trust_enrolled(c->trust, node);
	const struct audit_manifest *hit;
	struct pcr_values claimed;
	_cleanup_free_ uint8_t *raw = NULL;
	size_t len;
	struct boot_proof p;
	struct boot_evidence ev;
	struct boot_result res;
	ingot_error e = { 0 };

	if (pcr_values_from_json(rep->attestation.pcrs, "attestation.quote.pcrs", &claimed, &e) < 0) {
		audit_add_finding(row, "forged-quote", "%s", e.msg);
		return NULL;
	}
	if (!(hit = quoted_image(c, &claimed, row)))
		return NULL;
	if (!(hit->m->have & MF_BOOT)) {
		audit_add_finding(row, "boot-unchecked", "measured boot not checked: %s has no boot object", hit->file);
		return NULL;
	}
	if (report_log_bytes(rep, &raw, &len, row) < 0)
		return NULL;
	/* The nonce follows the one rule already (checked with --nonces),
	 * so only the log can fail to parse here. */
	if (boot_proof_parse(&p, "eventlog", quote, raw, len, nonce, &e) < 0) {
		boot_proof_release(&p);
		audit_add_finding(row, "log-mismatch", "%s", e.msg);
		return NULL;
	}
	/* The image is the one the quoted PCR names among the pool's
	 * manifests (quoted_image), an expired one included. */
	struct boot_pick pick = { .ak = en, .manifest = hit->m, .fw = boot_trust_firmware(c->trust, &claimed) };
	boot_inputs_evidence(&p, &pick, node, accept, &ev);
	ev.aks = aks;
	attest_boot_verdict(&ev, &res);
	boot_proof_release(&p);
	if (res.qi.ak_id[0])
		json_object_set_new(row, "ak", json_string(res.qi.ak_id));
	switch (res.verdict) {
	case BOOT_ADMIT:
		return hit;
	case BOOT_UNVERIFIED:
		audit_add_finding(row, "unverified", "%s", res.reason);
		return hit;
	case BOOT_NOT_MADE:
		audit_add_finding(row, "boot-unchecked", "%s", res.reason);
		return NULL;
	case BOOT_REFUSE:
		break;
	}
	if (res.quote_reason == VERDICT_WRONG_AK && en) {
		audit_add_finding(row, "ak-not-enrolled", "%s", res.reason);
		return NULL;
	}
	if (res.quote_reason == VERDICT_OK) {
		audit_add_finding(row, "boot-refused", "%s", res.reason);
		return hit;
	}
	return judged(res.quote_reason, res.reason, row) ? hit : NULL;
}

/* Quote, AK, nonce, event log and image.  Returns the manifest the
 * quoted PCR proves the node booted, or NULL. */
static const struct audit_manifest *check_attestation(struct audit_ctx *c, struct ak_cache *aks, const char *node,
						 const struct node_report *rep, json_t *row)
{
	const json_t *quote = rep->attestation.quote;
	const struct enrolled_ak *en = boot_trust_enrolled(c->trust, node);
	struct attest_expect x = { .accept_weak = c->o->accept_weak, .log_quoted = 1, .ak_pem = en ? en->pem : NULL,
				  .aks = aks };
	const struct audit_manifest *hit;
	struct eventlog log = { 0 };
	struct quote_info qi;
	struct nonce issued;
	ingot_error e = { 0 };
	const char *claimed;
	int proven;

	if (!quote) {
		audit_add_finding(row, "unquoted", "report carries no TPM quote");
		return NULL;
	}
	claimed = rep->attestation.nonce;
	if (!claimed) {
		audit_add_finding(row, "forged-quote", "attestation.quote: no nonce");
		return NULL;
	}
	json_object_set_new(row, "nonce", json_string(claimed));
	if (issued_nonce(c, node, row, &x.accept_weak, &issued, &x.nonce) < 0)
		return NULL;
	if (!strcmp(rep->attestation.mode ?: "", "measured-boot"))
		return check_measured_boot(c, aks, node, rep, x.nonce, x.accept_weak, row);
	/* ingot's post-boot PCR 15 measure: the log must replay to exactly
	 * what the TPM quoted. */
	x.log = report_log(rep, &log, row);
	proven = attest_judge(quote, &x, &qi, &e) == 0;
	if (qi.ak_id[0]) {
		json_object_set_new(row, "ak", json_string(qi.ak_id));
		check_enrolled(c, node, qi.ak_id, row);
	}
	if (!proven && !judged(qi.reason, e.msg, row)) {
		eventlog_free(&log);
		return NULL;
	}
	hit = quoted_image(c, &qi.pcrs, row);
	eventlog_free(&log);
	return hit;
}

/* A probed value as one line of plain text (new reference): the node
 * chose those bytes, and the table prints them. */
static json_t *plain_text(const json_t *v)
{
	if (!json_is_string(v))
		return v ? json_incref((json_t *)v) : json_null();
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_add_escaped(&sb, json_string_value(v), json_string_length(v));
	return json_string(sb.buf) ?: json_null();
}

/* Paths of a node's failed files check listed in the row, at most: the
 * node writes the list, so it must not grow the row without bound. */
#define REFUSED_PATHS_MAX 8

/* The paths a node's failed files check names, as drift entries. */
static void refused_paths(const struct report_check *c, json_t *row)
{
	for (size_t i = 0; i < c->n_paths && i < REFUSED_PATHS_MAX; i++) {
		const struct report_path *p = &c->paths[i];
		_cleanup_strbuf_ struct strbuf field = STRBUF_INIT;
		strbuf_add_escaped(&field, p->path, p->path_len);
		if (!strcmp(p->list, "changed")) {
			strbuf_addf_escaped(&field, " %s", p->field ? p->field : "?");
			audit_add_drift(row, field.buf, plain_text(p->expected), plain_text(p->got));
		} else {
			bool missing = !strcmp(p->list, "missing");
			audit_add_drift(row, field.buf, json_string(missing ? "listed" : "not listed"),
					json_string(missing ? "missing" : "present"));
		}
	}
}

/* The node's word on itself.  A check it reports failed is believed: a
 * node can only hurt itself by saying so, and the audit has neither the
 * image nor the node's disk to redo the image and files checks, nor its
 * rules.  A pass proves nothing beyond what the quote proves, so it is
 * never read.  The tuple and ring checks are redone from the facts and
 * ring serials the report carries (check_tuple, audit_ring_report). */
static void check_refusals(const struct node_report *rep, json_t *row)
{
	static const char *const believed[] = { "signature", "image", "files", "tpm", "rules" };
	unsigned seen = 0;

	for (size_t i = 0; i < rep->n_checks; i++) {
		const struct report_check *c = &rep->checks[i];
		const char *name = c->name;
		size_t k = 0;

		while (name && k < ARRAY_SIZE(believed) && strcmp(name, believed[k]))
			k++;
		/* each check once: a report cannot grow its row by repeating one */
		if (!name || k == ARRAY_SIZE(believed) || (seen & (1u << k)) || !c->status ||
		    strcmp(c->status, "fail"))
			continue;
		seen |= 1u << k;
		audit_add_finding(row, "drifted", "the node's own %s check failed: %s", name,
				  c->summary ? c->summary : "(no summary)");
		if (!strcmp(name, "files"))
			refused_paths(c, row);
	}
}

static void check_tuple(const struct audit_manifest *want, const struct node_report *report, json_t *row)
{
	struct verify_report vr;

	report_init(&vr);
	/* an unreadable fact stays unreadable (node_report_decode): verify
	 * reported it as not made, so the audit must not call it absent */
	tuplecheck_run(want->m->tuple, report->probe, &vr);
	const char *k;
	json_t *fields = NULL, *v;
	json_unpack(vr.checks[CHECK_TUPLE].details, "{s?o}", "fields", &fields);
	json_object_foreach(fields, k, v) {
		json_t *match = NULL, *manifest = NULL, *node = NULL;

		json_unpack(v, "{s?o s?o s?o}", "match", &match, "manifest", &manifest, "node", &node);
		if (json_is_true(match))
			continue;
		audit_add_drift(row, k, json_incref(manifest), plain_text(node));
	}
	if (vr.checks[CHECK_TUPLE].status == ST_FAIL)
		audit_add_finding(row, "drifted", "tuple: %s", vr.checks[CHECK_TUPLE].summary);
	else if (vr.checks[CHECK_TUPLE].status == ST_ERROR)
		/* not made (no GPU driver loaded, a fact unreadable): never healthy */
		audit_add_finding(row, "unverified", "tuple: could not check: %s", vr.checks[CHECK_TUPLE].summary);
	report_free(&vr);
}

json_t *audit_node_report(struct audit_ctx *c, struct ak_cache *aks, const char *path, const char *file)
{
	_cleanup_node_report_ struct node_report *rep = NULL;
	ingot_error e = { 0 };

	if (node_report_load(path, &rep, &e) < 0) {
		json_t *row = audit_new_row(file, NULL, file);
		audit_add_finding(row, "malformed", "%s", e.msg);
		return row;
	}
	return audit_node_check(c, aks, rep, file, NULL);
}

json_t *audit_node_check(struct audit_ctx *c, struct ak_cache *aks, const struct node_report *rep, const char *file,
			 const char *stale)
{
	const char *node, *pool, *when;
	time_t t;

	node = rep->node_id;
	pool = rep->pool;
	/* Names go into tables and file-like keys: printable, no spaces. */
	if (node && !attest_name_ok(node)) {
		json_t *row = audit_new_row(file, NULL, file);
		audit_add_finding(row, "malformed", "%s: node.id: expected 1-255 printable characters "
				  "without spaces", file);
		return row;
	}
	if (pool && !attest_name_ok(pool))
		pool = NULL;
	if (c->nodes && json_string_length(json_object_get(c->nodes, node ? node : "")))
		pool = json_string_value(json_object_get(c->nodes, node));
	json_t *row = audit_new_row(node ? node : file, pool, file);
	if (!node || !rep->schema || strcmp(rep->schema, "ingot.report/v1")) {
		audit_add_finding(row, "malformed", "%s: expected schema ingot.report/v1 with node.id", file);
		return row;
	}
	when = rep->time;
	json_object_set_new(row, "time", when ? json_string(when) : json_null());
	if (!when || audit_parse_time(when, &t) < 0)
		audit_add_finding(row, "stale", "report time %s is not RFC 3339", when ? when : "(missing)");
	else if (c->o->max_age && c->o->now - t > c->o->max_age)
		audit_add_finding(row, "stale", "report is %lld s old, limit %lld s",
			    (long long)(c->o->now - t), (long long)c->o->max_age);
	if (stale)
		audit_add_finding(row, "stale", "%s", stale);

	audit_ring_report(rep, row);
	check_refusals(rep, row);
	const struct audit_manifest *runs = NULL;
	if (!rep->attestation.present)
		audit_add_finding(row, "unquoted", "report carries no attestation");
	else
		runs = check_attestation(c, aks, node, rep, row);

	/* The row has the pool it was made with; else the booted image's. */
	if (!pool && runs && (pool = runs->m->recipe.name))
		json_object_set_new(row, "pool", json_string(pool));
	const struct audit_manifest *cur = audit_pool_current(c, pool);
	if (runs) {
		json_object_set_new(row, "tuple_digest", json_string(runs->tuple_digest));
		json_object_set_new(row, "serial", json_integer((json_int_t)runs->m->serial));
		rings_of_manifest(c->rings, runs->m, row);
		if (runs->expired)
			audit_add_finding(row, "expired-manifest", "runs %s serial %lld, which has expired",
				    runs->m->recipe.name, (long long)runs->m->serial);
	}
	if (!cur) {
		audit_add_finding(row, "unknown-pool", "no signed manifest for pool %s", pool ? pool : "(none)");
		return row;
	}
	json_object_set_new(row, "expected_tuple_digest", json_string(cur->tuple_digest));
	if (cur->mixed[0])
		audit_add_finding(row, "mixed-vendors", "pool %s mixes vendors: %s declares %s, %s declares %s "
				  "(--allow-mixed-vendors %s if meant)", cur->m->recipe.name, cur->mixed[0]->file,
				  boot_manifest_vendor(cur->mixed[0]->m), cur->mixed[1]->file,
				  boot_manifest_vendor(cur->mixed[1]->m), cur->m->recipe.name);
	if (runs && runs != cur) {
		if (strcmp(runs->m->recipe.name, cur->m->recipe.name))
			audit_add_finding(row, "drifted", "boots pool %s's image, expected pool %s", runs->m->recipe.name,
					  cur->m->recipe.name);
		else
			audit_add_finding(row, "drifted", "boots serial %lld, pool's current is %lld",
				    (long long)runs->m->serial, (long long)cur->m->serial);
	}
	check_tuple(cur, rep, row);
	return row;
}

