/* Units for audit/: durations and times of the audit command line,
 * inspect_document on manifests and envelopes, the errors of audit_run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/audit-private.h"
#include "image/inspect-doc.h"
#include "manifest/mdoc.h"
#include "manifest/dsse.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"

static void test_duration(void **state)
{
	int64_t v;
	(void)state;
	assert_int_equal(audit_parse_duration("90s", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(audit_parse_duration("30m", &v), 0);
	assert_int_equal(v, 1800);
	assert_int_equal(audit_parse_duration("24h", &v), 0);
	assert_int_equal(v, 86400);
	assert_int_equal(audit_parse_duration("7d", &v), 0);
	assert_int_equal(v, 604800);
	assert_int_equal(audit_parse_duration("15", &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(audit_parse_duration("", &v), -EINVAL);
	assert_int_equal(audit_parse_duration("m", &v), -EINVAL);
	assert_int_equal(audit_parse_duration("5w", &v), -EINVAL);
	assert_int_equal(audit_parse_duration("-1s", &v), -EINVAL);
	assert_int_equal(audit_parse_duration("5mm", &v), -EINVAL);
	assert_int_equal(audit_parse_duration("99999999999999999d", &v), -ERANGE);
}

static void test_time(void **state)
{
	time_t t;
	(void)state;
	assert_int_equal(audit_parse_time("2026-12-01T00:00:00Z", &t), 0);
	assert_int_equal((long long)t, 1796083200LL);
	assert_int_equal(audit_parse_time("2026-12-01T02:00:00+02:00", &t), 0);
	assert_int_equal((long long)t, 1796083200LL);
	assert_int_equal(audit_parse_time("2026-11-30T23:30:00.123-00:30", &t), 0);
	assert_int_equal((long long)t, 1796083200LL);
	assert_int_equal(audit_parse_time("1796083200", &t), 0);
	assert_int_equal((long long)t, 1796083200LL);
	assert_int_equal(audit_parse_time("2026-12-01", &t), -EINVAL);
	assert_int_equal(audit_parse_time("2026-12-01T00:00:00", &t), -EINVAL);
	assert_int_equal(audit_parse_time("2026-12-01T00:00:00Zjunk", &t), -EINVAL);
	assert_int_equal(audit_parse_time("", &t), -EINVAL);
}

static const char manifest[] =
	"{\"schema\":\"ingot.manifest/v1\",\"recipe\":{\"name\":\"h100\",\"version\":\"7\"},"
	"\"serial\":7,\"expires\":\"2027-01-31T00:00:00Z\","
	"\"tuple\":{\"vendor\":\"nvidia\",\"driver\":{\"version\":\"580.95.05\"}},"
	"\"artifacts\":[{\"name\":\"a\"}],\"files\":[{\"path\":\"/x\"},{\"path\":\"/y\"}],"
	"\"image\":{\"file\":\"h100.sqfs\",\"sha256\":\"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\",\"size\":4096}}";

static char *write_tmp(const char *content)
{
	char *p = strdup("/tmp/test_audit.XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	return p;
}

static char *inspect(const char *path, int json, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	ingot_error e = { 0 };
	FILE *f = open_memstream(&buf, &len);
	*rc = inspect_document(path, f, json, &e);
	fclose(f);
	if (*rc < 0) {
		free(buf);
		return strdup(e.msg);
	}
	return buf;
}

static void test_inspect_manifest(void **state)
{
	_cleanup_free_ char *p = write_tmp(manifest);
	_cleanup_free_ char *txt = NULL, *js = NULL;
	int rc;
	(void)state;

	txt = inspect(p, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(txt, "kind             manifest\n"));
	assert_non_null(strstr(txt, "serial           7\n"));
	assert_non_null(strstr(txt, "expires          2027-01-31T00:00:00Z\n"));
	assert_non_null(strstr(txt, "  driver.version 580.95.05\n"));
	assert_non_null(strstr(txt, "files            2\n"));
	assert_null(strstr(txt, "keyid"));

	js = inspect(p, 1, &rc);
	assert_int_equal(rc, 0);
	_cleanup_json_ json_t *j = json_loads(js, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "recipe")), "h100");
	assert_string_equal(json_string_value(json_object_get(j, "image_sha256")),
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_true(json_is_null(json_object_get(j, "verity_root")));
	unlink(p);
}

static void test_inspect_envelope(void **state)
{
	_cleanup_json_ json_t *m = json_loads(manifest, 0, NULL);
	_cleanup_json_ json_t *st = json_pack("{s:s,s:[{s:s}],s:s,s:O}", "_type",
		"https://in-toto.io/Statement/v1", "subject", "name", "h100.sqfs", "predicateType",
		MANIFEST_PREDICATE_TYPE, "predicate", m);
	_cleanup_free_ char *body = json_compact(st, NULL);
	_cleanup_free_ char *b64 = base64_encode(body, strlen(body), NULL);
	_cleanup_json_ json_t *env = json_pack("{s:s,s:s,s:[{s:s,s:s},{s:s,s:s}]}", "payloadType",
		ENVELOPE_PAYLOAD_TYPE, "payload", b64, "signatures", "keyid", "k1", "sig", "AA==",
		"keyid", "k2", "sig", "AA==");
	_cleanup_free_ char *doc = json_compact(env, NULL);
	_cleanup_free_ char *p = write_tmp(doc);
	_cleanup_free_ char *txt = NULL, *bad = NULL;
	int rc;
	(void)state;

	txt = inspect(p, 0, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(txt, "kind             envelope\n"));
	assert_non_null(strstr(txt, "subject          h100.sqfs\n"));
	assert_non_null(strstr(txt, "signatures       2 (not verified"));
	assert_non_null(strstr(txt, "  keyid          k1\n  keyid          k2\n"));
	unlink(p);

	_cleanup_free_ char *q = write_tmp("{\"schema\":\"x\"}");
	bad = inspect(q, 0, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(bad, "schema: expected \"ingot.manifest/v1\", got \"x\""));
	unlink(q);
}

static void test_run_errors(void **state)
{
	struct audit_opts o = { .keyring = "/nonexistent/keyring.json", .manifests_dir = "/tmp",
				.reports_dir = "/tmp", .now = 0 };
	struct audit_result *out = NULL;
	ingot_error e = { 0 };
	(void)state;

	assert_true(audit_run(&o, &out, &e) < 0);
	assert_null(out);
	assert_non_null(strstr(e.msg, "/nonexistent/keyring.json"));
}

/* Node ids, pools and findings come from the reports, i.e. from the
 * nodes: the page must show them as text, never as markup. */
static void test_html_escapes(void **state)
{
	_cleanup_json_ json_t *res = json_pack(
		"{s:s,s:[],s:{s:i},s:[{s:s,s:s,s:s,s:s,s:s,s:i,s:[{s:s,s:s}],s:[{s:s,s:s,s:n}]}]}",
		"now", "2026-12-01T00:00:00Z", "manifests", "summary", "drifted", 1, "nodes",
		"node", "<img src=x onerror=alert(1)>", "pool", "p&q", "tuple_digest", "-",
		"group", "-", "verdict", "drifted", "class", 1,
		"findings", "code", "drifted", "detail", "\"quoted\" <b>",
		"drift", "field", "driver.version", "expected", "1'2", "actual");
	char path[] = "/tmp/test_audit_html.XXXXXX";
	int fd = mkstemp(path);
	ingot_error e = { 0 };
	_cleanup_free_ char *buf = NULL;
	size_t len;
	(void)state;

	_cleanup_audit_result_ struct audit_result *r = audit_result_from_json(res);
	assert_non_null(r);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(audit_write_html(r, path, &e), 0);
	assert_int_equal(read_file(path, 1 << 20, &buf, &len, &e), 0);
	unlink(path);
	assert_null(strstr(buf, "<img"));
	assert_null(strstr(buf, "<b>"));
	assert_non_null(strstr(buf, "&lt;img src=x onerror=alert(1)&gt;"));
	assert_non_null(strstr(buf, "p&amp;q"));
	assert_non_null(strstr(buf, "&quot;quoted&quot; &lt;b&gt;"));
	assert_non_null(strstr(buf, "manifest 1&#39;2, node (not found)"));
	assert_null(strstr(buf, "<script"));
}

/* A row and a head read back as types (audit/audit-row.c): members of
 * another type read as absent, drift and findings in the row's order. */
static void test_row_decode(void **state)
{
	(void)state;
	_cleanup_json_ json_t *row = json_loads("{\"node\":\"n1\",\"pool\":7,\"serial\":\"3\",\"class\":2,"
		"\"ring\":null,\"ring_serial\":{\"ring\":\"prod\",\"serial\":4},"
		"\"drift\":[{\"field\":\"cuda\",\"expected\":\"12.4\",\"actual\":null},{\"field\":1}],"
		"\"findings\":[{\"code\":\"drifted\",\"detail\":\"x\"},{\"code\":\"stale\"}]}", 0, NULL);
	struct audit_row v;

	assert_non_null(row);
	audit_row_decode(row, &v);
	assert_string_equal(v.node, "n1");
	assert_null(v.pool);
	assert_false(v.has_serial);
	assert_int_equal(v.cls, 2);
	assert_true(v.has_ring);
	assert_null(v.ring);
	assert_true(v.has_ring_serial);
	assert_string_equal(v.ring_serial_ring, "prod");
	assert_int_equal(v.ring_serial, 4);
	assert_int_equal(v.n_drift, 2);
	assert_string_equal(v.drift[0].field, "cuda");
	assert_string_equal(json_string_value(v.drift[0].expected), "12.4");
	assert_true(json_is_null(v.drift[0].actual));
	assert_null(v.drift[1].field);
	assert_null(v.drift[1].expected);
	assert_int_equal(v.n_findings, 2);
	assert_string_equal(v.findings[1].code, "stale");
	assert_null(v.findings[1].detail);
	audit_row_release(&v);

	_cleanup_json_ json_t *head = json_loads("{\"now\":\"t\",\"summary\":{\"healthy\":1},"
		"\"manifests\":[{\"file\":\"a\",\"serial\":5,\"error\":null},{\"pool\":\"p\"}]}", 0, NULL);
	struct audit_head h;
	audit_head_decode(head, &h);
	assert_string_equal(h.now, "t");
	assert_int_equal(h.n_manifests, 2);
	assert_true(h.manifests[0].has_error);
	assert_null(h.manifests[0].error);
	assert_int_equal(h.manifests[0].serial, 5);
	assert_false(h.manifests[1].has_error);
	assert_string_equal(h.manifests[1].pool, "p");
	assert_null(h.ignored);
	audit_head_release(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_inspect_manifest),
		cmocka_unit_test(test_inspect_envelope),
		cmocka_unit_test(test_run_errors),
		cmocka_unit_test(test_html_escapes),
		cmocka_unit_test(test_row_decode),
	};
	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
