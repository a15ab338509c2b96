/* Units for the evidence parsers (ops/evidence-nccl.c, evidence-dcgm.c,
 * evidence.c) on real-format samples in tests/fixtures/evidence/ and on
 * hostile variants of them. */
#include "tests/unit/helpers.h"

#include "ops/evidence.h"
#include "lib/json.h"

#define FX "tests/fixtures/evidence/"

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	ingot_error e = { 0 };
	if (read_file(path, EVIDENCE_INPUT_MAX, &buf, len, &e) < 0)
		fail_msg("%s", e.msg);
	return buf;
}

static json_t *nccl_ok(const char *text)
{
	json_t *res = NULL;
	ingot_error e = { 0 };
	if (evidence_parse_nccl("t.txt", text, strlen(text), &res, &e) < 0)
		fail_msg("%s", e.msg);
	return res;
}

static void nccl_bad(const char *text, const char *want)
{
	json_t *res = NULL;
	ingot_error e = { 0 };
	assert_int_equal(evidence_parse_nccl("t.txt", text, strlen(text), &res, &e), -EINVAL);
	assert_null(res);
	if (!strstr(e.msg, want))
		fail_msg("expected \"%s\" in \"%s\"", want, e.msg);
}

static void test_nccl_two_nodes(void **state)
{
	size_t len;
	_cleanup_free_ char *buf = slurp(FX "all_reduce_perf-2node.txt", &len);
	_cleanup_json_ json_t *res = NULL;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(evidence_parse_nccl("x", buf, len, &res, &e), 0);
	assert_int_equal(json_integer_value(json_object_get(res, "ranks")), 16);
	assert_int_equal(json_array_size(json_object_get(res, "nodes")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(res, "gpus"), 0)),
			    "NVIDIA H100 80GB HBM3");
	/* The NCCL INFO line wins over the library code of the header. */
	assert_string_equal(json_string_value(json_object_get(res, "nccl_version")), "2.27.7");
	assert_string_equal(json_string_value(json_object_get(res, "nccl_tests_version")), "2.13.11");
	json_t *rows = json_object_get(res, "rows"), *last = json_array_get(rows, 30);
	assert_int_equal(json_array_size(rows), 31);
	assert_int_equal(json_integer_value(json_object_get(last, "size")), 8589934592LL);
	assert_int_equal(json_integer_value(json_object_get(last, "root")), -1);
	assert_string_equal(json_string_value(json_object_get(last, "redop")), "sum");
	json_t *ip = json_object_get(last, "in_place");
	assert_true(json_real_value(json_object_get(ip, "busbw")) > 370.3 &&
		    json_real_value(json_object_get(ip, "busbw")) < 370.4);
	assert_int_equal(json_integer_value(json_object_get(ip, "wrong")), 0);
	assert_true(json_is_true(json_object_get(res, "out_of_bounds_ok")));
	assert_true(json_real_value(json_object_get(res, "avg_busbw")) > 125.8);
}

static const char head[] =
	"# nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105\n"
	"# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 5\n"
	"#  Rank  0 Group  0 Pid   101 on      nodeA device  0 [0x18] NVIDIA H100 80GB HBM3\n"
	"#  Rank  1 Group  0 Pid   102 on      nodeB device  0 [0x18] NVIDIA H100 80GB HBM3\n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
static const char row1[] =
	"  1073741824     268435456     float     sum      -1   5468.6  196.35  368.15      0   5473.0  196.19  367.86      0\n";
static const char tail_ok[] =
	"# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 368.0\n#\n";

static char *cat3(const char *a, const char *b, const char *c)
{
	char *s = NULL;
	assert_true(asprintf(&s, "%s%s%s", a, b, c) > 0);
	return s;
}

static void test_nccl_variants(void **state)
{
	(void)state;
	/* Library code 22105 -> 2.21.5 when no NCCL INFO line says it. */
	_cleanup_free_ char *t = cat3(head, row1, tail_ok);
	_cleanup_json_ json_t *r = nccl_ok(t);
	assert_string_equal(json_string_value(json_object_get(r, "nccl_version")), "2.21.5");

	/* -c 0 runs print N/A for #wrong: recorded as null, not as 0. */
	_cleanup_free_ char *na = cat3(head, "  1073741824  268435456  float  sum  -1  5468.6  196.35  "
				       "368.15  N/A  5473.0  196.19  367.86  N/A\n", tail_ok);
	_cleanup_json_ json_t *rn = nccl_ok(na);
	assert_true(json_is_null(json_object_get(json_object_get(json_array_get(
		json_object_get(rn, "rows"), 0), "out_of_place"), "wrong")));

	/* Out-of-bounds failures are recorded as such. */
	_cleanup_free_ char *oob = cat3(head, row1, "# Out of bounds values : 2 FAILED\n"
					"# Avg bus bandwidth    : 368.0\n");
	_cleanup_json_ json_t *ro = nccl_ok(oob);
	assert_false(json_is_true(json_object_get(ro, "out_of_bounds_ok")));
	assert_int_equal(json_integer_value(json_object_get(ro, "out_of_bounds")), 2);

	/* NCCL's own log lines may sit between rows; trailing text is ignored. */
	_cleanup_free_ char *mixed = cat3(head, "nodeA:101:101 [0] NCCL INFO Channel 00/24 : 0 1\n",
					  row1);
	_cleanup_free_ char *mixed2 = cat3(mixed, tail_ok, "mpirun: job done\n");
	_cleanup_json_ json_t *rm = nccl_ok(mixed2);
	assert_int_equal(json_array_size(json_object_get(rm, "rows")), 1);
}

static void test_nccl_refused(void **state)
{
	(void)state;
	_cleanup_free_ char *short_row = cat3(head, "  1073741824  268435456  float  sum  -1  5468.6\n",
					      tail_ok);
	nccl_bad(short_row, "t.txt:7: expected 13 columns");
	_cleanup_free_ char *text_bw = cat3(head, "  1073741824  268435456  float  sum  -1  5468.6  "
					    "fast  368.15  0  5473.0  196.19  367.86  0\n", tail_ok);
	nccl_bad(text_bw, "t.txt:7: expected numbers for time, algbw, busbw");
	_cleanup_free_ char *no_avg = cat3(head, row1, "# Out of bounds values : 0 OK\n");
	nccl_bad(no_avg, "no \"# Avg bus bandwidth\" line");
	_cleanup_free_ char *no_rows = cat3(head, "", tail_ok);
	nccl_bad(no_rows, "no result rows");
	nccl_bad("hello world\n", "t.txt:1: expected the table header before data rows");
	nccl_bad("# just a comment\n", "no \"# nThread N nGpus N ...\" header");
	_cleanup_free_ char *alltoall = cat3("# nThread 1 nGpus 1\n#       size  count  type  time "
					     "algbw busbw #wrong\n", "", tail_ok);
	nccl_bad(alltoall, "t.txt:2: expected the all_reduce_perf table header");
	_cleanup_free_ char *rank = cat3("# nThread 1 nGpus 1\n#  Rank  x Group\n", row1, tail_ok);
	nccl_bad(rank, "t.txt:2: expected a device line");

	/* Found by fuzzing: a root beyond int64 and bytes that are not text. */
	_cleanup_free_ char *big_root = cat3(head, "  1073741824  268435456  float  sum  "
					     "-22222222222222222222222  5468.6  196.35  368.15  0  "
					     "5473.0  196.19  367.86  0\n", tail_ok);
	nccl_bad(big_root, "t.txt:7: expected integer size, count and root columns");
	nccl_bad("# nThread 1 nGpus 1\n#  Rank  0 Group  0 Pid  1 on \xff\xff device  0 [0x18] X\n",
		 "t.txt:2: byte 0xff: expected printable ASCII text");

	/* Issue 24: only the number forms nccl-tests prints (%f in the table,
	 * %g for the average); hex floats, signs, nan and inf are refused with
	 * file:line, never recorded as a value or as a silent null. */
	static const char *const bad_bw[] = { "0x1p30", "-368.15", "+368.15", "nan", "inf", "1e5",
					      "368.", ".5", "368,15", "-nan" };
	for (size_t i = 0; i < sizeof(bad_bw) / sizeof(*bad_bw); i++) {
		_cleanup_free_ char *row = NULL;
		assert_true(asprintf(&row, "  1073741824  268435456  float  sum  -1  5468.6  196.35  "
				     "%s  0  5473.0  196.19  367.86  0\n", bad_bw[i]) > 0);
		_cleanup_free_ char *t = cat3(head, row, tail_ok);
		nccl_bad(t, "t.txt:7: expected numbers for time, algbw, busbw as nccl-tests prints them");
	}
	static const char *const bad_avg[] = { "nan", "-nan", "inf", "0x1p30", "-3", "", "368.0 GB/s",
					       "1e999" };
	for (size_t i = 0; i < sizeof(bad_avg) / sizeof(*bad_avg); i++) {
		_cleanup_free_ char *tail = NULL;
		assert_true(asprintf(&tail, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %s\n",
				     bad_avg[i]) > 0);
		_cleanup_free_ char *t = cat3(head, row1, tail);
		nccl_bad(t, "t.txt:9: expected \"# Avg bus bandwidth : N\" with N in GB/s");
	}
	_cleanup_free_ char *neg_oob = cat3(head, row1, "# Out of bounds values : -1 OK\n"
					    "# Avg bus bandwidth    : 368.0\n");
	nccl_bad(neg_oob, "t.txt:8: expected \"# Out of bounds values : N OK|FAILED\"");
	/* %g's exponent form is what nccl-tests prints for a large average. */
	_cleanup_free_ char *exp_avg = cat3(head, row1, "# Out of bounds values : 0 OK\n"
					    "# Avg bus bandwidth    : 1.5e+06 \n");
	_cleanup_json_ json_t *re = nccl_ok(exp_avg);
	assert_true(json_real_value(json_object_get(re, "avg_busbw")) == 1.5e6);

	json_t *res = NULL;
	ingot_error e = { 0 };
	assert_int_equal(evidence_parse_nccl("bin", "# nThread\0\n", 11, &res, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "NUL byte"));
}

static json_t *dcgm(const char *path, unsigned level, int want, const char *msg)
{
	size_t len;
	_cleanup_free_ char *buf = slurp(path, &len);
	json_t *res = NULL;
	ingot_error e = { 0 };
	assert_int_equal(evidence_parse_dcgm("d.json", buf, len, level, &res, &e), want);
	if (msg && !strstr(e.msg, msg))
		fail_msg("expected \"%s\" in \"%s\"", msg, e.msg);
	return res;
}

static void test_dcgm(void **state)
{
	(void)state;
	_cleanup_json_ json_t *ok = dcgm(FX "dcgmi-diag-r3.json", 3, 0, NULL);
	json_t *counts = json_object_get(ok, "counts");
	assert_true(json_is_true(json_object_get(ok, "passed")));
	assert_int_equal(json_integer_value(json_object_get(ok, "level")), 3);
	assert_int_equal(json_integer_value(json_object_get(counts, "pass")), 14);
	assert_int_equal(json_integer_value(json_object_get(counts, "skip")), 1);
	assert_string_equal(json_string_value(json_object_get(ok, "dcgm_version")), "3.3.9");
	assert_string_equal(json_string_value(json_object_get(ok, "driver")), "580.95.05");

	/* One GPU failing makes the test fail, with DCGM's warning kept. */
	_cleanup_json_ json_t *bad = dcgm(FX "dcgmi-diag-r3-fail.json", 3, 0, NULL);
	assert_false(json_is_true(json_object_get(bad, "passed")));
	json_t *t, *diag = NULL;
	size_t i;
	json_array_foreach(json_object_get(bad, "tests"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "name")), "Diagnostic"))
			diag = t;
	assert_non_null(diag);
	assert_string_equal(json_string_value(json_object_get(diag, "status")), "fail");
	assert_int_equal(json_integer_value(json_object_get(diag, "gpus")), 8);
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(diag, "warnings"), 0)),
			       "double-bit ECC"));
}

static void dcgm_text_bad(const char *text, const char *want)
{
	json_t *res = NULL;
	ingot_error e = { 0 };
	assert_int_equal(evidence_parse_dcgm("d.json", text, strlen(text), 3, &res, &e) < 0, 1);
	assert_null(res);
	if (!strstr(e.msg, want))
		fail_msg("expected \"%s\" in \"%s\"", want, e.msg);
}

static void test_dcgm_refused(void **state)
{
	(void)state;
	json_t *none = dcgm(FX "dcgmi-diag-r3.json", 0, -EINVAL, "expected 1 to 4");
	assert_null(none);
	dcgm_text_bad("{\"DCGM GPU Diagnostic\": {\n  \"test_categories\": [}", "d.json:2:");
	dcgm_text_bad("{\"version\": \"3.3.9\"}", "expected {\"DCGM GPU Diagnostic\"");
	dcgm_text_bad("{\"DCGM GPU Diagnostic\":{\"test_categories\":[{\"category\":\"Hardware\","
		      "\"tests\":[{\"name\":\"GPU Memory\",\"results\":[{\"status\":\"Pass\"},"
		      "{\"status\":\"Meh\"}]}]}]}}",
		      "test_categories[0].tests[0].results[1].status: expected Pass, Fail, Skip or Warn, "
		      "got \"Meh\"");
	dcgm_text_bad("{\"DCGM GPU Diagnostic\":{\"test_categories\":[{\"category\":\"Hardware\","
		      "\"tests\":[{\"name\":\"GPU Memory\",\"results\":[]}]}]}}",
		      "test_categories[0].tests[0]: expected {\"name\": string, \"results\"");
	dcgm_text_bad("{\"DCGM GPU Diagnostic\":{\"test_categories\":[{\"tests\":[]}]}}",
		      "test_categories[0]: expected {\"category\": string");
}

static void test_rollback_json(void **state)
{
	static const char sha[] = "a3f5c6d7e8f90112233445566778899aabbccddeeff00112233445566778899a";
	json_t *res = NULL;
	ingot_error e = { 0 };
	char buf[256];
	(void)state;

	snprintf(buf, sizeof(buf), "{\"result\":\"pass\",\"rolled_back_to\":\"%s\"}", sha);
	assert_int_equal(evidence_parse_json("r.json", "rollback", buf, strlen(buf), &res, &e), 0);
	json_decref(res);
	res = NULL;
	snprintf(buf, sizeof(buf), "{\"result\":\"ok\",\"rolled_back_to\":\"%s\"}", sha);
	assert_int_equal(evidence_parse_json("r.json", "rollback", buf, strlen(buf), &res, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "r.json: result: expected \"pass\" or \"fail\""));
	snprintf(buf, sizeof(buf), "{\"result\":\"pass\",\"rolled_back_to\":\"v1\"}");
	assert_int_equal(evidence_parse_json("r.json", "rollback", buf, strlen(buf), &res, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "rolled_back_to: expected the sha256"));
	assert_int_equal(evidence_parse_json("c.json", "custom", "[1]", 3, &res, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "c.json: expected a JSON object"));
}

/* The predicate promote judges, decoded once: the two-node run's rows
 * as numbers, and a member of another type read as absent. */
static void test_evidence_read(void **state)
{
	size_t len;
	_cleanup_free_ char *buf = slurp(FX "all_reduce_perf-2node.txt", &len);
	_cleanup_json_ json_t *res = NULL, *pred = NULL;
	struct evidence ev;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(evidence_parse_nccl("x", buf, len, &res, &e), 0);
	pred = json_pack("{s:s,s:s,s:O}", "kind", "nccl-tests", "nccl_version", "2.27.7", "result", res);
	evidence_read(pred, &ev);
	assert_string_equal(ev.kind, "nccl-tests");
	assert_string_equal(ev.nccl_version, "2.27.7");
	assert_int_equal(ev.nodes, 2);
	assert_true(ev.has_out_of_bounds && ev.out_of_bounds_ok);
	assert_int_equal(ev.n_rows, 31);
	assert_int_equal(ev.rows[30].size, 8589934592LL);
	assert_true(ev.rows[30].in_place.validated);
	assert_int_equal(ev.rows[30].in_place.wrong, 0);
	assert_true(ev.rows[30].in_place.busbw > 370.3 && ev.rows[30].in_place.busbw < 370.4);
	evidence_release(&ev);

	json_object_set_new(res, "out_of_bounds_ok", json_string("yes"));
	json_object_set_new(json_object_get(json_array_get(json_object_get(res, "rows"), 0), "in_place"),
			    "wrong", json_string("N/A"));
	json_object_set_new(pred, "kind", json_integer(1));
	evidence_read(pred, &ev);
	assert_null(ev.kind);
	assert_false(ev.has_out_of_bounds);
	assert_false(ev.rows[0].in_place.validated);
	assert_true(ev.rows[0].out_of_place.validated);
	evidence_release(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nccl_two_nodes),
		cmocka_unit_test(test_nccl_variants),
		cmocka_unit_test(test_nccl_refused),
		cmocka_unit_test(test_dcgm),
		cmocka_unit_test(test_dcgm_refused),
		cmocka_unit_test(test_rollback_json),
		cmocka_unit_test(test_evidence_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
