/* libFuzzer harness: kernel module .modinfo (lib/modinfo.h).  The input is
 * a module's bytes (plain ELF, or .ko.xz/.zst/.gz); it is read both ways:
 * modinfo_load streams it from a file by offset (bounded memory), and for
 * plain ELF modinfo_parse reads the whole buffer.  Oracle: whenever the
 * buffer reader accepts a module, the streaming reader must accept it too
 * with exactly the same entries (it checks less: only the parts it reads). */
#include "tests/fuzz/fuzz_common.h"
#include "lib/fileio.h"
#include "lib/modinfo.h"

static char path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	snprintf(path, sizeof(path), "%s/module.ko", fuzz_scratch_dir());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct modinfo whole, streamed;
	ingot_error e = { 0 }, es = { 0 };
	int rw, rs;

	if (write_file_atomic(path, data, size, 0644, &e) < 0) {
		fprintf(stderr, "fuzz_modinfo: %s\n", e.msg);
		abort();
	}
	rs = modinfo_load(path, &streamed, &es);
	fuzz_note("modinfo_load", es.msg);
	rw = modinfo_parse(data, size, "module.ko", &whole, &e);
	fuzz_note("modinfo_parse", e.msg);
	if (rw == 0) {
		if (rs != 0 || streamed.n != whole.n) {
			fprintf(stderr, "fuzz_modinfo: buffer reader accepted (%zu entries), stream: %s\n",
				whole.n, es.msg);
			abort();
		}
		for (size_t i = 0; i < whole.n; i++)
			if (strcmp(whole.keys[i], streamed.keys[i]) ||
			    strcmp(whole.values[i], streamed.values[i]))
				abort();
		modinfo_free(&whole);
	}
	if (rs == 0)
		modinfo_free(&streamed);
	return 0;
}
