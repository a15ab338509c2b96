/* libFuzzer harness: the evidence parsers (ops/evidence.h) on the same
 * bytes - all_reduce_perf stdout, dcgmi diag JSON, a rollback record.  Each
 * must refuse (leaving no result) or return a result of the documented shape. */
#include "tests/fuzz/fuzz_common.h"
#include "ops/evidence.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	json_t *res = NULL;
	ingot_error e = { 0 };

	if (evidence_parse_nccl("fuzz.txt", buf, size, &res, &e) == 0) {
		/* A result always has rows and the summary line's value. */
		if (!json_array_size(json_object_get(res, "rows")) ||
		    !json_is_real(json_object_get(res, "avg_busbw")))
			abort();
		json_decref(res);
		res = NULL;
	} else if (res) {
		abort();
	}
	fuzz_note("nccl", e.msg);
	ingot_error_clear(&e);
	if (evidence_parse_dcgm("fuzz.json", buf, size, 3, &res, &e) == 0) {
		if (!json_is_boolean(json_object_get(res, "passed")))
			abort();
		json_decref(res);
		res = NULL;
	} else if (res) {
		abort();
	}
	fuzz_note("dcgm", e.msg);
	ingot_error_clear(&e);
	if (evidence_parse_json("fuzz.json", "rollback", buf, size, &res, &e) == 0)
		json_decref(res);
	return 0;
}
