/* libFuzzer harness: the TCG crypto-agile event-log parser
 * (attest/eventlog.h): parse, replay, describe as JSON, compare the
 * replay with itself (which must always agree), check event data against
 * digests and read UEFI variables as the boot verdict and a firmware
 * reference do. */
#include "tests/fuzz/fuzz_common.h"
#include "attest/eventlog.h"
#include "attest/firmware-ref.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eventlog log;
	struct pcr_values pv;
	ingot_error e = { 0 };

	memset(&log, 0, sizeof(log));
	if (eventlog_parse("fuzz.bin", data, size, &log, &e) == 0) {
		memset(&pv, 0, sizeof(pv));
		if (eventlog_replay(&log, &pv, &e) == 0) {
			json_t *j = eventlog_to_json(&log, &pv);
			int extended = 0;

			json_decref(j);
			for (size_t i = 0; i < pv.nbanks; i++)
				extended |= pv.banks[i].mask != 0;
			/* A log that extends something matches its own replay
			 * (one that extends nothing has nothing to compare). */
			if (extended && eventlog_compare(&log, &pv, NULL, &e) != 0) {
				fprintf(stderr, "eventlog_compare disagrees with eventlog_replay: %s\n", e.msg);
				abort();
			}
			/* Its own replay as the "quote": a reference from it, when
			 * the data checks pass, must parse back from its JSON. */
			struct firmware_ref ref, back;
			if (eventlog_check_data(&log, &e) == 0 && firmware_ref_record("fuzz", &log, &pv, &ref, &e) == 0) {
				json_t *rj = firmware_ref_to_json(&ref);
				if (!rj || firmware_ref_from_json(rj, "fuzz", &back, &e) != 0 || back.nvars != ref.nvars ||
				    back.nauth != ref.nauth) {
					fprintf(stderr, "firmware reference does not round-trip: %s\n", e.msg);
					abort();
				}
				json_decref(rj);
			}
		}
	}
	fuzz_note("eventlog", e.msg);
	eventlog_free(&log);
	return 0;
}
