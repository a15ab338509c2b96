/* Units for recipes/rules: the condition language (parsing, positioned
 * errors, evaluation semantics) and rule-file validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/yamlx.h"
#include "recipes/rules.h"
#include "recipes/tuple.h"
#include "helpers.h"

static bool eval(const char *cond, const struct tuple *t, const char *date)
{
	struct cond *c = NULL;
	char msg[256];
	size_t pos = 0;
	bool v;

	if (cond_parse(cond, &c, msg, sizeof(msg), &pos) < 0)
		fail_msg("%s: %s at %zu", cond, msg, pos);
	v = cond_eval(c, t, date);
	cond_free(c);
	return v;
}

static const char h100[] =
	"  vendor: nvidia\n"
	"  gpu: {models: [H100, V100]}\n"
	"  nvswitch: true\n"
	"  multi-tenant: false\n"
	"  driver: {version: 580.95.05, flavor: open}\n"
	"  fabric-manager: {version: 580.82.07}\n"
	"  cuda: {version: 12.9.1}\n"
	"  firmware: {vbios: 96.00.AF.00.01}\n";

static void test_eval(void **state)
{
	struct tuple *t = th_tuple_of(h100);
	(void)state;

	/* versions compare numerically, missing components are zero */
	assert_true(eval("driver.version < 580.105.08", t, "2026-10-01"));
	assert_true(eval("driver.version >= 580.95.5", t, "2026-10-01"));
	assert_true(eval("cuda.version >= 12.9 and cuda.version < 13", t, "2026-10-01"));
	assert_false(eval("cuda.version == 12.9", t, "2026-10-01"));
	/* field against field */
	assert_true(eval("fabric-manager.version != driver.version", t, "2026-10-01"));
	assert_false(eval("fabric-manager.version == driver.version", t, "2026-10-01"));
	/* lists: == and in mean "any element" */
	assert_true(eval("gpu.models == V100", t, "2026-10-01"));
	assert_true(eval("gpu.arch in [volta, pascal]", t, "2026-10-01"));
	assert_false(eval("gpu.arch in [blackwell]", t, "2026-10-01"));
	assert_true(eval("gpu.arch != blackwell", t, "2026-10-01"));
	/* booleans, enums, strings, precedence: and binds tighter than or */
	assert_true(eval("nvswitch and not multi-tenant", t, "2026-10-01"));
	assert_true(eval("vendor == amd or vendor == nvidia and nvswitch", t, "2026-10-01"));
	assert_false(eval("(vendor == amd or vendor == nvidia) and multi-tenant", t, "2026-10-01"));
	assert_true(eval("firmware.vbios == \"96.00.AF.00.01\"", t, "2026-10-01"));
	/* quoted: a literal even when it looks like a field */
	assert_false(eval("firmware.vbios == \"driver.flavr\"", t, "2026-10-01"));
	assert_true(eval("driver.flavor in [open]", t, "2026-10-01"));
	/* presence; a comparison with an absent field is false either way */
	assert_true(eval("has cuda and has driver.flavor and not has rocm", t, "2026-10-01"));
	assert_false(eval("rocm.version < 10", t, "2026-10-01"));
	assert_false(eval("rocm.version >= 10", t, "2026-10-01"));
	assert_false(eval("imex.version != driver.version", t, "2026-10-01"));
	/* the lint date */
	assert_true(eval("date > 2026-06-30", t, "2026-10-01"));
	assert_false(eval("date > 2028-06-30", t, "2026-10-01"));
	assert_true(eval("date > 2028-06-30", t, "2028-07-01"));
	tuple_free(t);
}

static void test_parse_errors(void **state)
{
	static const struct { const char *cond, *msg; size_t pos; } cases[] = {
		{ "", "empty condition", 0 },
		{ "driver.versoin < 580", "unknown field 'driver.versoin'", 0 },
		{ "driver.version < 580.x", "driver.version: expected a dotted numeric version, got '580.x'", 17 },
		{ "vendor == intel", "vendor: 'intel' is not one of its values", 10 },
		{ "vendor < amd", "vendor: operator < needs a version or date field", 7 },
		{ "gpu.arch in [volta, hopperr]", "gpu.arch: 'hopperr' is not one of its values", 20 },
		{ "nvswitch == maybe", "nvswitch: expected true or false, got 'maybe'", 12 },
		{ "date > 2028-13-01", "date: expected a date YYYY-MM-DD, got '2028-13-01'", 7 },
		{ "(vendor == amd", "expected ')'", 14 },
		{ "vendor == amd and", "expected a field name, 'not', 'has' or '('", 17 },
		{ "vendor == amd nvswitch", "unexpected 'nvswitch'", 14 },
		{ "driver.version", "driver.version: expected an operator or 'in' after the field", 14 },
		{ "has drivers", "unknown field 'drivers'", 4 },
		{ "driver.version == vendor", "cannot compare driver.version with vendor: different types", 18 },
		{ "firmware.nic == driver.flavr", "unknown field 'driver.flavr'", 16 },
		{ "vendor = amd", "expected ==, !=, <, <=, > or >=, got '='", 7 },
		{ "vendor == \"amd", "unterminated string", 10 },
		{ "gpu.arch in [volta", "in: expected ',' or ']'", 18 },
		{ "vendor == amd & nvswitch", "unexpected character '&'", 14 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cond *c = NULL;
		char msg[256];
		size_t pos = 999;
		assert_int_equal(cond_parse(cases[i].cond, &c, msg, sizeof(msg), &pos), -EINVAL);
		assert_null(c);
		assert_string_equal(msg, cases[i].msg);
		assert_int_equal(pos, cases[i].pos);
	}
}

static void test_deep_nesting(void **state)
{
	char buf[4096];
	struct cond *c = NULL;
	char msg[256];
	size_t pos;
	(void)state;

	memset(buf, '(', 1000);
	strcpy(buf + 1000, "nvswitch");
	assert_int_equal(cond_parse(buf, &c, msg, sizeof(msg), &pos), -EINVAL);
	assert_string_equal(msg, "condition nested too deeply");
	for (size_t i = 0; i < 500; i++)
		memcpy(buf + 4 * i, "not ", 4);
	strcpy(buf + 2000, "nvswitch");
	assert_int_equal(cond_parse(buf, &c, msg, sizeof(msg), &pos), -EINVAL);
}

/* Random token soup: the parser must answer, never crash or leak (run
 * under `make asan`), and whatever parses must evaluate. */
static void test_token_soup(void **state)
{
	static const char *const tok[] = {
		"(", ")", "[", "]", ",", "and", "or", "not", "has", "in", "==", "!=", "<", "<=",
		">", ">=", "driver.version", "gpu.arch", "vendor", "nvswitch", "date", "580.95.05",
		"volta", "nvidia", "true", "\"x\"", "2026-10-01", "cuda", "=", "&", "\"",
	};
	struct tuple *t = th_tuple_of(h100);
	uint32_t seed = 12345;
	size_t parsed = 0;
	(void)state;

	for (int round = 0; round < 3000; round++) {
		char buf[512] = "";
		size_t n = 1 + round % 12;
		struct cond *c = NULL;
		char msg[256];
		size_t pos;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			strcat(buf, tok[(seed >> 16) % (sizeof(tok) / sizeof(tok[0]))]);
			strcat(buf, " ");
		}
		if (cond_parse(buf, &c, msg, sizeof(msg), &pos) == 0) {
			parsed++;
			(void)cond_eval(c, t, "2026-10-01");
			cond_free(c);
		} else {
			assert_null(c);
			assert_true(msg[0] != '\0');
			assert_true(pos <= strlen(buf));
		}
	}
	assert_true(parsed > 0);
	tuple_free(t);
}

static int load(const char *yaml, struct ruleset **rs, ingot_error *e)
{
	*rs = ruleset_new();
	return rules_load_buf(*rs, "r.yaml", yaml, strlen(yaml), e);
}

#define RULE(id, when) \
	"  - id: " id "\n    severity: error\n    when: " when "\n" \
	"    message: m\n    source: s\n    date: 2026-10-01\n"

static void test_rule_files(void **state)
{
	static const struct { const char *yaml, *msg; } bad[] = {
		{ "rules:\n" RULE("a", "driver.version < 580.x"),
		  "r.yaml:4:28: rule 'a': when: driver.version: expected a dotted numeric version, got '580.x'" },
		{ "rules:\n" RULE("cuda-min", "cuda.versoin >= 13"),
		  "r.yaml:4:11: rule 'cuda-min': when: unknown field 'cuda.versoin'" },
		{ "rules:\n" RULE("a", "nvswitch") RULE("a", "multi-tenant"),
		  "r.yaml:8:5: rule 'a': duplicate id (first defined at r.yaml:2:5)" },
		{ "rules:\n  - id: a\n    severity: fatal\n    when: nvswitch\n    message: m\n    source: s\n    date: 2026-10-01\n",
		  "r.yaml:3:15: rule 'a': severity: expected error or warning, got 'fatal'" },
		{ "rules:\n  - id: a\n    severity: error\n    when: nvswitch\n    message: m\n    date: 2026-10-01\n",
		  "r.yaml:2:5: rule 'a': missing required field 'source'" },
		{ "rules:\n  - id: a\n    severity: error\n    when: nvswitch\n    message: \"driver {driver.vers}\"\n    source: s\n    date: 2026-10-01\n",
		  "r.yaml:5:14: rule 'a': message: placeholder '{driver.vers}' names no tuple field" },
		{ "rules:\n  - id: a\n    severity: error\n    when: nvswitch\n    message: m\n    source: s\n    date: 2026-02-30\n",
		  "r.yaml:7:11: rule 'a': date: expected YYYY-MM-DD, got '2026-02-30'" },
		{ "rules:\n  - id: A_b\n", "r.yaml:2:9: rule.id: expected [a-z0-9][a-z0-9.-]* (at most 64), got 'A_b'" },
		{ "rules:\n  - id: a\n    severity: error\n    when: nvswitch\n    message: m\n    source: s\n    date: 2026-10-01\n    url: x\n",
		  "r.yaml:8:5: rule 'a': unknown key 'url'" },
		{ "schema: ingot.rules/v2\nrules: []\n", "r.yaml:1:9: schema: expected ingot.rules/v1, got 'ingot.rules/v2'" },
		{ "rule: []\n", "r.yaml:1:1: rules file: unknown key 'rule'" },
		{ "rules:\n  - id: a\n    severity: error\n    when: \"vendor == amd and\"\n    message: m\n    source: s\n    date: 2026-10-01\n",
		  "r.yaml:4:29: rule 'a': when: expected a field name, 'not', 'has' or '('" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ruleset *rs;
		ingot_error e = { 0 };
		assert_int_equal(load(bad[i].yaml, &rs, &e), -EINVAL);
		assert_string_equal(e.msg, bad[i].msg);
		ruleset_free(rs);
	}
}

static void test_message_and_fields(void **state)
{
	static const char yaml[] =
		"rules:\n  - id: fm\n    severity: warning\n"
		"    when: nvswitch and fabric-manager.version != driver.version and gpu.arch in [hopper]\n"
		"    message: \"FM {fabric-manager.version} != driver {driver.version} on {gpu.models} ({imex.version}, {date})\"\n"
		"    source: s\n    date: 2026-10-01\n";
	struct ruleset *rs;
	struct tuple *t = th_tuple_of(h100);
	ingot_error e = { 0 };
	_cleanup_free_ char *m = NULL;
	(void)state;

	assert_int_equal(load(yaml, &rs, &e), 0);
	assert_int_equal(rs->n, 1);
	assert_int_equal(rs->v[0].severity, RULE_WARNING);
	assert_int_equal(rs->v[0].n_fields, 4);
	assert_string_equal(rs->v[0].fields[0], "nvswitch");
	assert_string_equal(rs->v[0].fields[1], "fabric-manager.version");
	assert_string_equal(rs->v[0].fields[2], "driver.version");
	assert_string_equal(rs->v[0].fields[3], "gpu.arch");
	assert_true(cond_eval(rs->v[0].cond, t, "2026-10-01"));
	m = rule_format_message(&rs->v[0], t, "2026-10-01");
	assert_string_equal(m, "FM 580.82.07 != driver 580.95.05 on H100, V100 ((unset), 2026-10-01)");
	ruleset_free(rs);
	tuple_free(t);
}

static void test_dates(void **state)
{
	(void)state;
	assert_true(rules_date_valid("2028-06-30"));
	assert_true(rules_date_valid("2028-02-29"));
	assert_false(rules_date_valid("2026-02-29"));
	assert_false(rules_date_valid("2100-02-29"));
	assert_true(rules_date_valid("2000-02-29"));
	assert_false(rules_date_valid("2026-6-30"));
	assert_false(rules_date_valid("2026-06-31"));
	assert_false(rules_date_valid("2026-06-30T00"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_token_soup),
		cmocka_unit_test(test_rule_files),
		cmocka_unit_test(test_message_and_fields),
		cmocka_unit_test(test_dates),
	};
	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
