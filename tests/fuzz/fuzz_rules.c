/* libFuzzer harness: the version-chain rules loader (recipes/rules.h
 * rules_load_buf, which parses every `when:` condition), then every rule
 * that loads is evaluated against a real tuple and its message formatted. */
#include "tests/fuzz/fuzz_common.h"
#include "recipes/recipe.h"
#include "recipes/rules.h"

static struct recipe *demo;

static const char demo_recipe[] =
"name: fuzz\nversion: \"1\"\nepoch: 1\n"
"directories:\n  - path: /opt\n"   /* a recipe must build something */
"tuple:\n"
"  vendor: nvidia\n"
"  platform: {os: ubuntu, os-version: \"24.04\", cpu-arch: x86_64}\n"
"  gpu: {models: [H100], arch: [hopper]}\n"
"  nvswitch: true\n"
"  driver: {version: 580.95.05, branch: R580, flavor: open}\n"
"  cuda: {version: \"13.0\"}\n"
"  nccl: {version: 2.27.7}\n"
"  container-toolkit: {version: 1.17.8}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ingot_error e = { 0 };

	(void)argc; (void)argv;
	if (recipe_load_buf("demo.yaml", ".", demo_recipe, sizeof(demo_recipe) - 1, NULL, &demo, &e) < 0 ||
	    !demo->tuple) {
		fprintf(stderr, "fuzz_rules: demo tuple does not load: %s\n", e.msg);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ruleset *rs = ruleset_new();
	ingot_error e = { 0 };

	if (!rs)
		abort();
	if (rules_load_buf(rs, "fuzz.yaml", (const char *)data, size, &e) == 0) {
		for (size_t i = 0; i < rs->n; i++) {
			const struct rule *r = &rs->v[i];
			char *msg;

			if (!r->id || !r->cond)
				abort();
			(void)cond_eval(r->cond, demo->tuple, "2026-10-01");
			msg = rule_format_message(r, demo->tuple, "2026-10-01");
			free(msg);
		}
	}
	fuzz_note("rules", e.msg);
	ruleset_free(rs);

	/* The condition language on its own, on the raw bytes. */
	{
		char *text = fuzz_strdup(data, size), msg[256];
		struct cond *c = NULL;
		size_t pos = 0;

		if (cond_parse(text, &c, msg, sizeof(msg), &pos) == 0) {
			(void)cond_eval(c, demo->tuple, "2026-10-01");
			cond_free(c);
		} else if (pos > size) {
			abort();   /* the error offset must lie inside the text */
		}
		free(text);
	}
	return 0;
}
