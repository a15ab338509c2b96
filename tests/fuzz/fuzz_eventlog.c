/* libFuzzer harness: the TCG crypto-agile event-log parser
 * (attest/eventlog.h): parse, replay, describe as JSON, and compare the
 * replay with itself (which must always agree). */
#include "tests/fuzz/fuzz_common.h"
#include "attest/eventlog.h"

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
		}
	}
	fuzz_note("eventlog", e.msg);
	eventlog_free(&log);
	return 0;
}
