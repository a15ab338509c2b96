/* libFuzzer harness: unpacking an archive into the staging tree
 * (builder/unpack.h): the input is the artifact's bytes; the first byte
 * picks the kind (even: tar.*, odd: .deb) and the recipe-side options
 * (strip-components, dest, allow-devices, a low entry limit).  The
 * artifact goes through unpack_list (pin check while reading, libarchive,
 * hostile-entry checks, the store's pack and listing cache), unpack_apply
 * and tree_finalize. */
#include <sys/stat.h>
#include "tests/fuzz/fuzz_common.h"
#include "recipes/recipe.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "builder/unpack.h"
#include "lib/digest.h"
#include "lib/fileio.h"

static struct store st;
static char artifact_path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_scratch_dir();
	char root[400];
	ingot_error e = { 0 };

	(void)argc; (void)argv;
	snprintf(root, sizeof(root), "%s/store", dir);
	snprintf(artifact_path, sizeof(artifact_path), "%s/artifact", dir);
	if (store_open(&st, root, &e) < 0) {
		fprintf(stderr, "fuzz_unpack: %s\n", e.msg);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct artifact a;
	struct tree listing, t;
	struct unpack_stats us;
	ingot_error e = { 0 };
	uint8_t opt;

	if (size < 1)
		return 0;
	opt = data[0];
	data++, size--;
	memset(&a, 0, sizeof(a));
	a.name = "fuzz";
	a.source = "fuzz.tar";
	a.path = artifact_path;
	a.kind = opt & 1 ? ART_DEB : ART_TAR;
	a.dest = opt & 2 ? "opt/x" : "";
	a.strip_components = (opt >> 2) & 1;
	a.allow_devices = opt & 8;
	a.replace = opt & 16;
	a.file_mode = 0644;
	sha256_buf(data, size, a.sha256);
	if (write_file_atomic(artifact_path, data, size, 0644, &e) < 0) {
		fprintf(stderr, "fuzz_unpack: store: %s\n", e.msg);
		abort();
	}
	memset(&us, 0, sizeof(us));
	tree_init(&listing);
	if (unpack_list(&st, &a, opt & 32 ? &(struct unpack_limits){ .entries = 64, .bytes = 1 << 20 } : NULL, &listing, &us, &e) == 0) {
		tree_init(&t);
		/* An empty tree is skipped: tree_finalize's qsort(NULL, 0) is a
		 * known UBSan report (docs/hardening.md), not worth re-finding. */
		if (unpack_apply(&a, &listing, &t, &e) == 0 && (t.n == 0 || tree_finalize(&t, &e) == 0))
			e.msg[0] = 0;
		tree_free(&t);
	}
	fuzz_note("unpack", e.msg);
	tree_free(&listing);
	/* The pack and listing are cached by digest: drop them, so the
	 * store stays small and every input is unpacked. */
	{
		static const char *const sfx[] = { ".json", ".pack" };
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			char *p = store_unpacked_path(&st, a.sha256, sfx[i]);
			if (p)
				unlink(p);
			free(p);
		}
	}
	return 0;
}
