/* Text table and HTML page of an audit result (audit/audit.h).  Node
 * names, pools and details come from node reports: the table escapes
 * them (lib/escape.h), the page HTML-escapes them. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit-private.h"
#include "lib/cleanup.h"
#include "lib/escape.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"

static const char *str(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

static const char *value_str(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (!v || json_is_null(v))
		return "(not found)";
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(buf, n, "%s", s ? s : "?");
	free(s);
	return buf;
}

/* "pool h100 serial 7, pool h100 serial 6" for a tuple digest. */
static void group_label(const struct audit_head *h, const char *digest, struct strbuf *sb)
{
	int n = 0;

	for (size_t i = 0; i < h->n_manifests; i++) {
		const struct audit_head_manifest *m = &h->manifests[i];
		if (strcmp(str(m->tuple_digest, "-"), digest) || strcmp(str(m->status, ""), "ok"))
			continue;
		strbuf_addf_escaped(sb, "%s%s serial %lld", n++ ? ", " : "", str(m->pool, "?"), m->serial);
	}
	if (!n)
		strbuf_addstr(sb, "no signed manifest");
}

static void summary_line(const struct audit_result *result, const struct audit_head *h, struct strbuf *sb)
{
	const char *k;
	json_t *v;
	int first = 1;

	strbuf_addf_escaped(sb, "%zu nodes:", result->n);
	json_object_foreach((json_t *)h->summary, k, v) {
		strbuf_addf_escaped(sb, "%s %lld %s", first ? "" : ",", (long long)json_integer_value(v), k);
		first = 0;
	}
}

/* Rows go out as they are rendered, a buffer at a time. */
#define FLUSH_AT (64u << 10)

void audit_print_table(const struct audit_result *result, FILE *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_ json_t *prev = NULL;   /* holds the current group's name */
	struct audit_head h;
	const char *group = NULL;
	size_t i;
	char buf[256], buf2[256];

	audit_head_decode(result->head, &h);
	strbuf_init(&sb, 1 << 16);
	strbuf_addstr(&sb, "ingot audit: ");
	summary_line(result, &h, &sb);
	strbuf_addf_escaped(&sb, " (at %s)\n", str(h.now, "?"));
	for (i = 0; i < h.n_manifests; i++) {
		const struct audit_head_manifest *m = &h.manifests[i];
		if (strcmp(str(m->status, ""), "ok"))
			strbuf_addf_escaped(&sb, "manifest %s: %s%s%s\n", str(m->file, "?"), str(m->status, "?"),
				    m->has_error ? ": " : "", str(m->error, ""));
	}
	/* Columns as wide as their widest value, so long pool names align. */
	int wn = 4, wp = 4;
	bool rings = false;   /* the RING column only with --promotions */
	for (i = 0; i < result->n; i++) {
		_cleanup_json_ json_t *row = audit_result_row(result, i);
		struct audit_row v;
		audit_row_decode(row, &v);
		rings = rings || v.has_ring;
		int a = (int)strlen(str(v.node, "?")), b = (int)strlen(str(v.pool, "-"));
		wn = a > wn ? (a < 64 ? a : 64) : wn;
		wp = b > wp ? (b < 64 ? b : 64) : wp;
		audit_row_release(&v);
	}
	for (i = 0; i < result->n; i++) {
		json_t *row = audit_result_row(result, i);
		struct audit_row v;
		audit_row_decode(row, &v);
		const char *g = str(v.group, "-");
		if (sb.len >= FLUSH_AT) {
			fwrite(sb.buf, 1, sb.len, out);
			strbuf_reset(&sb);
		}
		if (!group || strcmp(group, g)) {
			group = g;
			json_decref(prev);
			prev = json_incref(row);
			strbuf_addf_escaped(&sb, "\ntuple %.16s (", g);
			group_label(&h, g, &sb);
			strbuf_addf_escaped(&sb, ")\n  %-*s  %-*s  %-16s  %-16s  %s\n", wn, "NODE", wp, "POOL",
				    "TUPLE", "VERDICT", rings ? "SERIAL  RING" : "SERIAL");
		}
		strbuf_addf_escaped(&sb, "  %-*s  %-*s  %-16.16s  %-16s  %-*s%s%s\n", wn, str(v.node, "?"),
			    wp, str(v.pool, "-"), str(v.tuple_digest, "-"), str(v.verdict, "?"),
			    rings ? 6 : 0, v.has_serial ? (snprintf(buf, sizeof(buf), "%lld", v.serial), buf) : "-",
			    rings ? "  " : "", rings ? str(v.ring, "-") : "");
		for (size_t j = 0; j < v.n_drift; j++)
			strbuf_addf_escaped(&sb, "      ~ %s: manifest %s, node %s\n", str(v.drift[j].field, "?"),
				    value_str(v.drift[j].expected, buf, sizeof(buf)),
				    value_str(v.drift[j].actual, buf2, sizeof(buf2)));
		for (size_t j = 0; j < v.n_findings; j++)
			strbuf_addf_escaped(&sb, "      ! %s: %s\n", str(v.findings[j].code, "?"),
					    str(v.findings[j].detail, ""));
		audit_row_release(&v);
		json_decref(row);
	}
	json_t *it;
	json_array_foreach((json_t *)h.ignored, i, it)
		strbuf_addf_escaped(&sb, "ignored older report %s\n", json_string_value(it));
	fwrite(sb.buf, 1, sb.len, out);
	audit_head_release(&h);
}

static void html_esc(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

static const char css[] =
	"body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
	"table{border-collapse:collapse;width:100%}"
	"th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}"
	"th{background:#eee}td.mono,code{font-family:ui-monospace,monospace;font-size:90%}"
	"tr.group td{background:#dde6f0;font-weight:bold}"
	"tr.c0 td.verdict{color:#176f2c}tr.c1 td.verdict{color:#a15c00;font-weight:bold}"
	"tr.c2 td.verdict{color:#b00020;font-weight:bold}tr.c2{background:#fdecee}"
	"tr.c1{background:#fff6e5}tr.c3 td.verdict{color:#5a4a8a;font-weight:bold}tr.c3{background:#f1eefa}"
	"ul{margin:0;padding-left:1.2em}"
	"td.node,td.verdict,td.tuple{white-space:nowrap}li{overflow-wrap:anywhere}";

int audit_write_html(const struct audit_result *result, const char *path, ingot_error *e)
{
	_cleanup_atomic_ struct atomic_file af = { .fd = -1 };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_ json_t *prev = NULL;   /* holds the current group's name */
	__attribute__((cleanup(audit_head_release))) struct audit_head h;
	const char *group = NULL;
	size_t i;
	char buf[256], buf2[256];
	int r;

	audit_head_decode(result->head, &h);
	if ((r = atomic_open(&af, path, 0644, e)) < 0)
		return r;

	strbuf_init(&sb, 1 << 16);
	strbuf_addf(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
		    "<title>ingot audit %s</title><style>%s</style></head><body>\n",
		    str(h.now, ""), css);
	strbuf_addstr(&sb, "<h1>ingot audit</h1>\n<p id=\"summary\">");
	{
		struct strbuf s2 = STRBUF_INIT;
		strbuf_init(&s2, 256);
		summary_line(result, &h, &s2);
		html_esc(&sb, s2.buf);
		strbuf_release(&s2);
	}
	strbuf_addstr(&sb, " at ");
	html_esc(&sb, str(h.now, "?"));
	strbuf_addstr(&sb, "</p>\n<h2>Manifests</h2>\n<table id=\"manifests\"><tr><th>File</th><th>Pool</th>"
		      "<th>Serial</th><th>Tuple</th><th>Status</th></tr>\n");
	for (i = 0; i < h.n_manifests; i++) {
		const struct audit_head_manifest *m = &h.manifests[i];
		strbuf_addstr(&sb, "<tr><td class=\"mono\">");
		html_esc(&sb, str(m->file, "?"));
		strbuf_addstr(&sb, "</td><td>");
		html_esc(&sb, str(m->pool, "-"));
		strbuf_addf(&sb, "</td><td>%lld</td><td class=\"mono\">", m->serial);
		html_esc(&sb, str(m->tuple_digest, "-"));
		strbuf_addstr(&sb, "</td><td>");
		html_esc(&sb, str(m->status, "?"));
		if (m->has_error) {
			strbuf_addstr(&sb, ": ");
			html_esc(&sb, str(m->error, ""));
		}
		strbuf_addstr(&sb, "</td></tr>\n");
	}
	strbuf_addstr(&sb, "</table>\n<h2>Nodes</h2>\n<table id=\"nodes\"><thead><tr><th>Node</th>"
		      "<th>Pool</th><th>Tuple</th><th>Verdict</th><th>Details</th></tr></thead><tbody>\n");
	for (i = 0; i < result->n; i++) {
		_cleanup_json_ json_t *row = audit_result_row(result, i);
		__attribute__((cleanup(audit_row_release))) struct audit_row v;
		audit_row_decode(row, &v);
		const char *g = str(v.group, "-");
		if (sb.len >= FLUSH_AT) {
			if ((r = atomic_write(&af, sb.buf, sb.len, e)) < 0)
				return r;
			strbuf_reset(&sb);
		}
		if (!group || strcmp(group, g)) {
			struct strbuf lb = STRBUF_INIT;
			json_decref(prev);
			prev = json_incref(row);
			strbuf_init(&lb, 128);
			group_label(&h, g, &lb);
			group = g;
			strbuf_addstr(&sb, "<tr class=\"group\"><td colspan=\"5\">tuple <code>");
			html_esc(&sb, g);
			strbuf_addstr(&sb, "</code> (");
			html_esc(&sb, lb.buf);
			strbuf_addstr(&sb, ")</td></tr>\n");
			strbuf_release(&lb);
		}
		strbuf_addf(&sb, "<tr class=\"node c%lld\" data-verdict=\"", (long long)v.cls);
		html_esc(&sb, str(v.verdict, "?"));
		strbuf_addstr(&sb, "\"><td class=\"node\">");
		html_esc(&sb, str(v.node, "?"));
		strbuf_addstr(&sb, "</td><td>");
		html_esc(&sb, str(v.pool, "-"));
		strbuf_addstr(&sb, "</td><td class=\"mono tuple\" title=\"");
		html_esc(&sb, str(v.tuple_digest, "-"));
		strbuf_addf(&sb, "\">%.16s", str(v.tuple_digest, "-"));
		strbuf_addstr(&sb, "</td><td class=\"verdict\">");
		html_esc(&sb, str(v.verdict, "?"));
		strbuf_addstr(&sb, "</td><td><ul>");
		for (size_t j = 0; j < v.n_drift; j++) {
			strbuf_addstr(&sb, "<li class=\"drift\"><code>");
			html_esc(&sb, str(v.drift[j].field, "?"));
			strbuf_addstr(&sb, "</code>: manifest ");
			html_esc(&sb, value_str(v.drift[j].expected, buf, sizeof(buf)));
			strbuf_addstr(&sb, ", node ");
			html_esc(&sb, value_str(v.drift[j].actual, buf2, sizeof(buf2)));
			strbuf_addstr(&sb, "</li>");
		}
		for (size_t j = 0; j < v.n_findings; j++) {
			strbuf_addstr(&sb, "<li class=\"finding\">");
			html_esc(&sb, str(v.findings[j].code, "?"));
			strbuf_addstr(&sb, ": ");
			html_esc(&sb, str(v.findings[j].detail, ""));
			strbuf_addstr(&sb, "</li>");
		}
		strbuf_addstr(&sb, "</ul></td></tr>\n");
	}
	strbuf_addstr(&sb, "</tbody></table>\n</body></html>\n");
	if ((r = atomic_write(&af, sb.buf, sb.len, e)) < 0)
		return r;
	return atomic_commit(&af, e);
}
