#include "verify/node-report.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/escape.h"
#include "lib/json.h"
#include "lib/meta.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

static const char *const names[CHECK__COUNT] = {
	[CHECK_SIGNATURE] = "signature", [CHECK_IMAGE] = "image", [CHECK_FILES] = "files",
	[CHECK_TPM] = "tpm", [CHECK_TUPLE] = "tuple", [CHECK_RULES] = "rules", [CHECK_RING] = "ring",
};

const char *check_name(enum check_id id) { return names[id]; }

const char *check_status_name(enum check_status s)
{
	switch (s) {
	case ST_PASS: return "pass";
	case ST_WARN: return "warn";
	case ST_FAIL: return "fail";
	case ST_SKIP: return "skip";
	case ST_ERROR: return "error";
	}
	return "error";
}

void report_init(struct verify_report *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < CHECK__COUNT; i++) {
		r->checks[i].status = ST_SKIP;
		r->checks[i].summary = xstrdup("not run");
		r->checks[i].evidence = json_array();
	}
}

void report_free(struct verify_report *r)
{
	for (int i = 0; i < CHECK__COUNT; i++) {
		free(r->checks[i].summary);
		json_decref(r->checks[i].evidence);
		json_decref(r->checks[i].details);
	}
	json_decref(r->node);
	json_decref(r->manifest);
	json_decref(r->probe);
	json_decref(r->attestation);
	free(r->time);
	free(r->pool);
	free(r->tuple_digest);
	free(r->reason);
	memset(r, 0, sizeof(*r));
}

void report_set(struct verify_report *r, enum check_id id, enum check_status st,
		const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	strbuf_init(&sb, 128);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(r->checks[id].summary);
	r->checks[id].summary = strbuf_detach(&sb, NULL);
	r->checks[id].status = st;
}

void report_evidence(struct verify_report *r, enum check_id id, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	strbuf_init(&sb, 128);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	json_array_append_new(r->checks[id].evidence, json_string(sb.buf));
	strbuf_release(&sb);
}

static int refuses(const struct verify_report *r, int i)
{
	return r->checks[i].status == ST_FAIL || (r->fail_on_warn && r->checks[i].status == ST_WARN);
}

void report_finish(struct verify_report *r)
{
	int decided = -1;
	for (int i = 0; i < CHECK__COUNT && decided < 0; i++)
		if (refuses(r, i))
			decided = i;
	free(r->reason);
	if (decided >= 0) {
		r->verdict = "refuse";
		r->outcome = REPORT_REFUSE;
		r->decided = (enum check_id)decided;
		r->reason = xstrdup(r->checks[decided].summary);
		return;
	}
	for (int i = 0; i < CHECK__COUNT; i++)
		if (r->checks[i].status == ST_ERROR) {
			r->verdict = "could-not-check";
			r->outcome = REPORT_CANNOT_CHECK;
			r->reason = xasprintf("%s: %s", names[i], r->checks[i].summary);
			return;
		}
	r->verdict = "admit";
	r->outcome = REPORT_ADMIT;
	r->reason = xstrdup("all checks passed");
}

json_t *report_to_json(const struct verify_report *r)
{
	json_t *checks = json_array();
	for (int i = 0; i < CHECK__COUNT; i++) {
		const struct check_result *c = &r->checks[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:O}", "name", names[i],
				      "status", check_status_name(c->status),
				      "summary", c->summary ? c->summary : "",
				      "evidence", c->evidence);
		if (c->details)
			json_object_set(o, "details", c->details);
		json_array_append_new(checks, o);
	}
	return json_pack("{s:s, s:s, s:O, s:s, s:O, s:o, s:o, s:s, s:i, s:s, s:o, s:O, s:O}",
		"schema", "ingot.report/v1",
		"ingot_version", INGOT_VERSION,
		"node", r->node ? r->node : json_null(),
		"time", r->time ? r->time : "",
		"manifest", r->manifest ? r->manifest : json_null(),
		"pool", r->pool ? json_string(r->pool) : json_null(),
		"tuple_digest", r->tuple_digest ? json_string(r->tuple_digest) : json_null(),
		"verdict", r->verdict ? r->verdict : "could-not-check",
		"exit_status", r->exit_status,
		"reason", r->reason ? r->reason : "",
		"checks", checks,
		"probe", r->probe ? r->probe : json_null(),
		"attestation", r->attestation ? r->attestation : json_null());
}

void report_print_text(const struct verify_report *r, FILE *out)
{
	const char *id = NULL;
	/* Paths and versions in summaries come from the manifest and the
	 * node: escaped (lib/escape.h) before they reach a terminal or log. */
	struct strbuf sb = STRBUF_INIT;

	json_unpack(r->node, "{s?s}", "id", &id);   /* NULL unless a string */
	strbuf_addf_escaped(&sb, "ingot verify: %s (exit %d): %s\n", r->verdict, r->exit_status,
		r->reason ? r->reason : "");
	strbuf_addf_escaped(&sb, "  node %s, pool %s, tuple %.16s\n", id ? id : "?", r->pool ? r->pool : "?",
		r->tuple_digest ? r->tuple_digest : "-");
	for (int i = 0; i < CHECK__COUNT; i++) {
		const struct check_result *c = &r->checks[i];
		size_t k, n = json_array_size(c->evidence);
		json_t *v;
		strbuf_addf_escaped(&sb, "  %-5s %-9s %s\n", check_status_name(c->status), names[i],
			c->summary ? c->summary : "");
		/* Passing checks keep their evidence in --json; failures show it. */
		if (c->status == ST_PASS || c->status == ST_SKIP)
			continue;
		json_array_foreach(c->evidence, k, v) {
			if (!strncmp(json_string_value(v), "ok: ", 4))
				continue;   /* what matched is in --json */
			if (k == 20) {
				strbuf_addf_escaped(&sb, "          ... %zu more (see --json)\n", n - k);
				break;
			}
			strbuf_addf_escaped(&sb, "          %s\n", json_string_value(v));
		}
	}
	fputs(sb.buf, out);
	strbuf_release(&sb);
}

/* ---- a node report read back (the one reader of the JSON) ------------- */

/* Each object's members are listed in one json_unpack, all optional and
 * taken as they are ("o"): a member of another type reads as absent
 * below (json_string_value and friends give NULL, 0 or false), so one
 * odd member never hides the others. */

static bool int_of(const json_t *v, int64_t *out)
{
	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return true;
}

/* The probe probe_to_json described. */
static struct node_probe *decode_probe(const json_t *probe)
{
	struct node_probe *p = xcalloc(1, sizeof(*p));
	json_t *facts = NULL, *f;
	size_t i;

	json_unpack((json_t *)probe, "{s?o}", "facts", &facts);
	json_array_foreach(facts, i, f) {
		json_t *key = NULL, *value = NULL, *source = NULL, *unreadable = NULL;
		const char *src;

		json_unpack(f, "{s?o s?o s?o s?o}", "key", &key, "value", &value, "source", &source,
			    "unreadable", &unreadable);
		if (!json_is_string(key))
			continue;
		src = json_is_string(source) ? json_string_value(source) : "report";
		if (json_is_true(unreadable))
			probe_set_unreadable(p, json_string_value(key), "%s", src);
		else
			probe_set(p, json_string_value(key), json_string_value(value), src);
	}
	return p;
}

/* A files check's lists: changed entries are objects, missing and
 * extra plain paths; an entry without a string path is left out. */
static void decode_paths(struct report_check *c, const json_t *details)
{
	static const char *const lists_named[] = { "changed", "missing", "extra" };
	json_t *lists[ARRAY_SIZE(lists_named)] = { NULL }, *v;
	size_t n = 0, i;

	json_unpack((json_t *)details, "{s?o s?o s?o}", lists_named[0], &lists[0],
		    lists_named[1], &lists[1], lists_named[2], &lists[2]);
	for (size_t k = 0; k < ARRAY_SIZE(lists); k++)
		n += json_array_size(lists[k]);
	if (!n)
		return;
	c->paths = xcalloc(n, sizeof(*c->paths));
	for (size_t k = 0; k < ARRAY_SIZE(lists); k++)
		json_array_foreach(lists[k], i, v) {
			json_t *path = k ? v : NULL, *field = NULL, *expected = NULL, *got = NULL;
			struct report_path *p = &c->paths[c->n_paths];

			if (!k)
				json_unpack(v, "{s?o s?o s?o s?o}", "path", &path, "field", &field,
					    "expected", &expected, "got", &got);
			if (!json_is_string(path))
				continue;
			c->n_paths++;
			p->list = lists_named[k];
			p->path = json_string_value(path);
			p->path_len = json_string_length(path);
			p->field = json_string_value(field);
			p->expected = expected;
			p->got = got;
		}
}

static void decode_check(struct report_check *c, const json_t *j)
{
	json_t *name = NULL, *status = NULL, *summary = NULL, *d = NULL;
	json_t *ring = NULL, *serial = NULL, *seen = NULL;

	json_unpack((json_t *)j, "{s?o s?o s?o s?o}", "name", &name, "status", &status, "summary",
		    &summary, "details", &d);
	c->name = json_string_value(name);
	c->status = json_string_value(status);
	c->summary = json_string_value(summary);
	if (c->name && !strcmp(c->name, "files"))
		decode_paths(c, d);
	if (c->name && !strcmp(c->name, "ring")) {
		json_unpack(d, "{s?o s?o s?o}", "ring", &ring, "ring_serial", &serial,
			    "ring_serial_seen", &seen);
		c->ring = json_string_value(ring);
		c->has_ring_serial = int_of(serial, &c->ring_serial);
		c->has_ring_serial_seen = int_of(seen, &c->ring_serial_seen);
	}
}

struct node_report *node_report_decode(json_t *doc)
{
	struct node_report *r = xcalloc(1, sizeof(*r));
	json_t *schema = NULL, *time = NULL, *pool = NULL, *verdict = NULL, *digest = NULL;
	json_t *node = NULL, *id = NULL, *hostname = NULL, *machine_id = NULL;
	json_t *checks = NULL, *probe = NULL, *att = NULL, *mode = NULL, *quote = NULL, *eventlog = NULL;
	json_t *nonce = NULL, *pcrs = NULL, *c;
	size_t i;

	r->doc = json_incref(doc);
	json_unpack(doc, "{s?o s?o s?o s?o s?o s?o s?o s?o s?o}", "schema", &schema, "time", &time,
		    "pool", &pool, "verdict", &verdict, "tuple_digest", &digest, "node", &node,
		    "checks", &checks, "probe", &probe, "attestation", &att);
	json_unpack(node, "{s?o s?o s?o}", "id", &id, "hostname", &hostname, "machine_id", &machine_id);
	json_unpack(att, "{s?o s?o s?o}", "mode", &mode, "quote", &quote, "eventlog", &eventlog);
	json_unpack(quote, "{s?o s?o}", "nonce", &nonce, "pcrs", &pcrs);
	r->schema = json_string_value(schema);
	r->time = json_string_value(time);
	r->pool = json_string_value(pool);
	r->verdict = json_string_value(verdict);
	r->tuple_digest = json_string_value(digest);
	r->node_id = json_string_value(id);
	r->hostname = json_string_value(hostname);
	r->machine_id = json_string_value(machine_id);
	if (json_array_size(checks))
		r->checks = xcalloc(json_array_size(checks), sizeof(*r->checks));
	json_array_foreach(checks, i, c)
		decode_check(&r->checks[r->n_checks++], c);
	r->probe = decode_probe(probe);
	r->attestation.present = json_is_object(att);
	r->attestation.mode = json_string_value(mode);
	r->attestation.quote = json_is_object(quote) ? quote : NULL;
	r->attestation.nonce = json_string_value(nonce);
	r->attestation.pcrs = pcrs;
	r->attestation.eventlog = json_string_value(eventlog);
	return r;
}

int node_report_load(const char *path, struct node_report **out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r = json_read_file(path, &doc, e);

	if (r < 0)
		return r;
	*out = node_report_decode(doc);
	return 0;
}

void node_report_free(struct node_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_checks; i++)
		free(r->checks[i].paths);
	free(r->checks);
	node_probe_free(r->probe);
	json_decref(r->doc);
	free(r);
}
