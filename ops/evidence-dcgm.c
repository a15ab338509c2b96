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
#include "lib/xalloc.h"

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

/* dcgmi's output, decoded once (decode_diag): what the evidence says,
 * written from this, not from the JSON.  Strings and warnings are
 * borrowed from the document. */
#define DCGM_MAX_WARNINGS 8
struct dcgm_test {
	const char *category, *name;
	const char *status;        /* the worst of its results, one of statuses[] */
	size_t gpus;               /* its results */
	json_t *warnings[DCGM_MAX_WARNINGS];
	size_t n_warnings;
};
struct dcgm_diag {
	json_t *version, *driver;  /* strings, or NULL */
	struct dcgm_test tests[DCGM_MAX_TESTS];
	size_t n_tests;
};

static int decode_test(const char *name, size_t c, size_t t, json_t *test, struct dcgm_test *dt,
		       ingot_error *e)
{
	json_t *tname = NULL, *results = NULL, *res;
	size_t i;

	json_unpack(test, "{s?o s?o}", "name", &tname, "results", &results);
	if (!json_is_string(tname) || !json_is_array(results) || !json_array_size(results))
		return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu].tests[%zu]: "
				  "expected {\"name\": string, \"results\": [at least one]}", name, c, t);
	dt->name = json_string_value(tname);
	dt->status = "skip";
	dt->gpus = json_array_size(results);
	json_array_foreach(results, i, res) {
		json_t *status = NULL, *ws = NULL, *w;
		const char *raw, *st;
		size_t k;

		json_unpack(res, "{s?o s?o}", "status", &status, "warnings", &ws);
		raw = json_string_value(status);
		st = raw ? status_of(raw) : NULL;
		if (!st)
			return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu].tests[%zu]"
					  ".results[%zu].status: expected Pass, Fail, Skip or Warn, "
					  "got %s%.32s%s", name, c, t, i, raw ? "\"" : "",
					  raw ? raw : "no string", raw ? "\"" : "");
		if (rank_of(st) > rank_of(dt->status))
			dt->status = st;
		json_array_foreach(ws, k, w) {
			json_t *text = NULL;

			json_unpack(w, "{s?o}", "warning", &text);
			if (json_is_string(text) && dt->n_warnings < DCGM_MAX_WARNINGS)
				dt->warnings[dt->n_warnings++] = text;
		}
	}
	return 0;
}

static int decode_diag(const char *name, json_t *doc, struct dcgm_diag *d, ingot_error *e)
{
	json_t *diag = NULL, *cats = NULL, *cat, *test;
	size_t c, t;
	int r;

	json_unpack(doc, "{s?o s?o s?o}", DCGM_ROOT, &diag, "version", &d->version,
		    "Driver Version Detected", &d->driver);
	json_unpack(diag, "{s?o}", "test_categories", &cats);
	if (!json_is_object(diag) || !json_is_array(cats) || !json_array_size(cats))
		return ingot_fail(e, -EINVAL, "%s: expected {\"" DCGM_ROOT "\": {\"test_categories\": "
				  "[...]}} (the output of dcgmi diag -j)", name);
	if (!json_is_string(d->version))
		d->version = NULL;
	if (!json_is_string(d->driver))
		d->driver = NULL;
	json_array_foreach(cats, c, cat) {
		json_t *category = NULL, *list = NULL;

		json_unpack(cat, "{s?o s?o}", "category", &category, "tests", &list);
		if (!json_is_string(category) || !json_is_array(list))
			return ingot_fail(e, -EINVAL, "%s: " DCGM_ROOT ".test_categories[%zu]: expected "
					  "{\"category\": string, \"tests\": [...]}", name, c);
		json_array_foreach(list, t, test) {
			if (d->n_tests == DCGM_MAX_TESTS)
				return ingot_fail(e, -E2BIG, "%s: more than %u tests", name, DCGM_MAX_TESTS);
			d->tests[d->n_tests].category = json_string_value(category);
			r = decode_test(name, c, t, test, &d->tests[d->n_tests], e);
			if (r < 0)
				return r;
			d->n_tests++;
		}
	}
	return 0;
}

static json_t *test_to_json(const struct dcgm_test *dt)
{
	json_t *warnings = json_array();

	for (size_t i = 0; i < dt->n_warnings; i++)
		json_array_append(warnings, dt->warnings[i]);
	return json_pack("{s:s,s:s,s:s,s:I,s:o}", "category", dt->category, "name", dt->name,
			 "status", dt->status, "gpus", (json_int_t)dt->gpus, "warnings", warnings);
}

int evidence_parse_dcgm(const char *name, const char *buf, size_t len, unsigned level,
			json_t **result, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL, *tests = json_array();
	_cleanup_free_ struct dcgm_diag *d = xcalloc(1, sizeof(*d));
	size_t n[ARRAY_SIZE(statuses)] = { 0 };
	int r;

	if (!tests)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (level < 1 || level > 4)
		return ingot_fail(e, -EINVAL, "%s: diagnostic level %u: expected 1 to 4 (dcgmi diag -r)",
				  name, level);
	r = json_read_buf(name, buf, len, &doc, e);
	if (r < 0)
		return r;
	r = decode_diag(name, doc, d, e);
	if (r < 0)
		return r;
	for (size_t t = 0; t < d->n_tests; t++) {
		json_t *entry = test_to_json(&d->tests[t]);
		if (!entry || json_array_append_new(tests, entry) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
		for (size_t i = 0; i < ARRAY_SIZE(statuses); i++)
			n[i] += !strcmp(d->tests[t].status, statuses[i]);
	}
	*result = json_pack("{s:I,s:O,s:O,s:O,s:{s:I,s:I,s:I,s:I},s:b}", "level", (json_int_t)level,
			    "dcgm_version", d->version ? d->version : json_null(),
			    "driver", d->driver ? d->driver : json_null(), "tests", tests,
			    "counts", "pass", (json_int_t)n[0], "fail", (json_int_t)n[1],
			    "skip", (json_int_t)n[2], "warn", (json_int_t)n[3],
			    "passed", n[1] == 0 && n[0] > 0);
	return *result ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}
