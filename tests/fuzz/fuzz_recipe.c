/* libFuzzer harness: the recipe parser (recipes/recipe.h recipe_load_buf),
 * including the tuple: section it hands to tuple_parse.  Sources resolve
 * against a directory that does not exist, so nothing is read from disk. */
#include "tests/fuzz/fuzz_common.h"
#include "recipes/recipe.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recipe *r = NULL;
	ingot_error e = { 0 };

	/* The env epoch path too: the first byte picks whether one is set. */
	const char *env = size && (data[0] & 1) ? "1767225600" : NULL;

	if (recipe_load_buf("fuzz.yaml", "/nonexistent-ingot-fuzz", (const char *)data, size,
			    env, &r, &e) == 0) {
		fuzz_note("recipe", NULL);
		/* A recipe that loads must be internally consistent. */
		if (!r || !r->name)
			abort();
		for (size_t i = 0; i < r->n_artifacts; i++)
			if (!r->artifacts[i].name || !r->artifacts[i].source)
				abort();
		recipe_free(r);
	} else if (fuzz_note("recipe", e.msg), r) {
		abort();   /* failure must not hand out a recipe */
	}
	return 0;
}
