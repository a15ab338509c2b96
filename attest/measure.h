/* Measuring an image: extend the PCR with the manifest's event data in
 * every active bank and append the matching event to ingot's log. */
#ifndef INGOT_ATTEST_MEASURE_H
#define INGOT_ATTEST_MEASURE_H

#include <jansson.h>

#include "attest/pcrs.h"
#include "attest/tpm.h"
#include "lib/err.h"

#define ATTEST_DEFAULT_LOG "/var/lib/ingot/eventlog.bin"

struct measure_result {
	unsigned pcr;
	/* Whether the log already agreed with the PCR before this measure;
	 * when not, before.msg says how (an earlier measure was interrupted,
	 * or something else extends the PCR).  The measure still happens:
	 * verification reports the disagreement. */
	int agreed_before;
	ingot_error before;
	struct pcr_values after;    /* the PCR in every active bank, afterwards */
};

/* pcr < 0: the manifest's measurement.pcr, else ATTEST_DEFAULT_PCR.  A
 * manifest whose "measurement" member disagrees with its content is
 * refused.  Order: the new log is written to a temporary file, the PCR
 * is extended, then the log is renamed into place; an interruption
 * leaves the PCR extended and the old log (or neither changed), which
 * a later replay detects. */
int attest_measure(struct tpm *t, const json_t *manifest, int pcr, const char *log_path,
		   struct measure_result *out, ingot_error *e);

#endif
