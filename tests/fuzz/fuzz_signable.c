/* libFuzzer harness: what `ingot sign` reads (manifest/dsse.h
 * manifest_read_signable), whose fast path cuts files[] out of a
 * canonical manifest's bytes without parsing it.  Oracle: whenever the
 * input is a valid manifest (parsed whole, manifest_check) and a head
 * comes back, the head is exactly the manifest without files[], and the
 * digest is of the input's bytes: a cut in the wrong place would sign
 * another head than the file's. */
#include "tests/fuzz/fuzz_common.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "manifest/dsse.h"

static char path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	snprintf(path, sizeof(path), "%s/m.manifest.json", fuzz_scratch_dir());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *env = NULL, *head = NULL, *whole;
	ingot_error e = { 0 }, ew = { 0 };
	uint8_t d[32], want[32];
	int r;

	if (write_file_atomic(path, data, size, 0644, &e) < 0) {
		fprintf(stderr, "fuzz_signable: %s\n", e.msg);
		abort();
	}
	r = manifest_read_signable(path, &env, &head, d, &e);
	fuzz_note("manifest_read_signable", e.msg);
	whole = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (r == 0 && head) {
		sha256_buf(data, size, want);
		if (memcmp(d, want, 32))
			abort();
		if (whole && manifest_check("whole", whole, &ew) == 0) {
			json_t *cut = json_copy(whole);
			if (!cut || json_object_del(cut, "files") < 0 || !json_equal(cut, head)) {
				fprintf(stderr, "fuzz_signable: the head differs from the manifest without files\n");
				abort();
			}
			json_decref(cut);
		}
	}
	json_decref(whole);
	json_decref(env);
	json_decref(head);
	return 0;
}
