/* `dcgmi diag -r N -j` output (DCGM 3.x):
 *   {"DCGM GPU Diagnostic": {"test_categories": [
 *       {"category": "Deployment", "tests": [
 *           {"name": "Denylist", "results": [{"status": "Pass"}]}, ...]},
 *       {"category": "Hardware", "tests": [
 *           {"name": "GPU Memory", "results": [{"gpu_id": "0", "status": "Pass"}, ...]}]}]},
 *    "Driver Version Detected": "580.95.05", "version": "3.3.7"}
 * A result's "warnings" ([{"warning": text, "error_id": n}]) say why it failed. */
#include "ops/evidence.h"

#include <string.h>
#include <strings.h>

#include "lib/cleanup.h"
#include "lib/json.h"

#define DCGM_ROOT "DCGM GPU Diagnostic"
#define DCGM_MAX_TESTS 1024

static const char *const statuses[] = { "pass", "fail", "skip", "warn" };

static const char *status_of(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
		if (!strcasecmp(s, statuses[i]))
			return statuses[i];
	return NULL;
}

/* Severity order: a test is as bad as its worst GPU. */
static int rank_of(const char *st)
{
	return !strcmp(st, "fail") ? 3 : !strcmp(st, "warn") ? 2 : !strcmp(st, "pass") ? 1 : 0;
}

static int parse_test(const char *name, size_t c, size_t t, const json_t *test, json_t *tests,
		      const char *category, ingot_error *e)
{
	const char *tname = json_string_value(json_object_get(test, "name"));
	const json_t *results = json_object_get(test, "results");
	const char *worst = "skip";
	json_t *warnings = json_array(), *res;
	size_t i;

	if (!warnings)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (!tname || !json_is_array(results) || !json_array_size(results)) {
		json_decref(warnings);
		return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu].tests[%zu]: "
				  "expected {\"name\": string, \"results\": [at least one]}", name, c, t);
	}
	json_array_foreach(results, i, res) {
		const char *raw = json_string_value(json_object_get(res, "status"));
		const char *st = raw ? status_of(raw) : NULL;
		const json_t *w, *ws = json_object_get(res, "warnings");
		size_t k;
		if (!st) {
			json_decref(warnings);
			return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu].tests[%zu]"
					  ".results[%zu].status: expected Pass, Fail, Skip or Warn, "
					  "got %s%.32s%s", name, c, t, i, raw ? "\"" : "",
					  raw ? raw : "no string", raw ? "\"" : "");
		}
		if (rank_of(st) > rank_of(worst))
			worst = st;
		json_array_foreach(ws, k, w)
			if (json_is_string(json_object_get(w, "warning")) && json_array_size(warnings) < 8)
				json_array_append(warnings, json_object_get(w, "warning"));
	}
	json_t *entry = json_pack("{s:s,s:s,s:s,s:I,s:o}", "category", category, "name", tname,
				  "status", worst, "gpus", (json_int_t)json_array_size(results),
				  "warnings", warnings);
	if (!entry || json_array_append_new(tests, entry) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

int evidence_parse_dcgm(const char *name, const char *buf, size_t len, unsigned level,
			json_t **result, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL, *tests = json_array();
	const json_t *diag, *cats, *cat, *list, *test;
	size_t c, t, n[ARRAY_SIZE(statuses)] = { 0 };
	int r;

	if (!tests)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (level < 1 || level > 4)
		return ingot_fail(e, -EINVAL, "%s: diagnostic level %u: expected 1 to 4 (dcgmi diag -r)",
				  name, level);
	r = json_read_buf(name, buf, len, &doc, e);
	if (r < 0)
		return r;
	diag = json_object_get(doc, DCGM_ROOT);
	cats = json_object_get(diag, "test_categories");
	if (!json_is_object(diag) || !json_is_array(cats) || !json_array_size(cats))
		return ingot_fail(e, -EINVAL, "%s: expected {\"" DCGM_ROOT "\": {\"test_categories\": "
				  "[...]}} (the output of dcgmi diag -j)", name);
	json_array_foreach(cats, c, cat) {
		const char *category = json_string_value(json_object_get(cat, "category"));
		list = json_object_get(cat, "tests");
		if (!category || !json_is_array(list))
			return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu]: expected "
					  "{\"category\": string, \"tests\": [...]}", name, c);
		json_array_foreach(list, t, test) {
			if (json_array_size(tests) == DCGM_MAX_TESTS)
				return ingot_fail(e, -E2BIG, "%s: more than %u tests", name, DCGM_MAX_TESTS);
			r = parse_test(name, c, t, test, tests, category, e);
			if (r < 0)
				return r;
		}
	}
	json_array_foreach(tests, t, test)
		for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
			n[i] += !strcmp(json_string_value(json_object_get(test, "status")), statuses[i]);
	const json_t *ver = json_object_get(doc, "version");
	const json_t *drv = json_object_get(doc, "Driver Version Detected");
	*result = json_pack("{s:I,s:O,s:O,s:O,s:{s:I,s:I,s:I,s:I},s:b}", "level", (json_int_t)level,
			    "dcgm_version", json_is_string(ver) ? ver : json_null(),
			    "driver", json_is_string(drv) ? drv : json_null(), "tests", tests,
			    "counts", "pass", (json_int_t)n[0], "fail", (json_int_t)n[1],
			    "skip", (json_int_t)n[2], "warn", (json_int_t)n[3],
			    "passed", n[1] == 0 && n[0] > 0);
	return *result ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}
