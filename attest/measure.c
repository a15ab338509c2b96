#include "attest/measure.h"

#include <string.h>
#include <sys/stat.h>

#include "attest/eventlog.h"
#include "attest/lock.h"
#include "attest/predict.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"

/* Does the log (or its absence: all zeroes) agree with the TPM for pcr? */
static int check_before(const char *log_path, const struct pcr_values *now, unsigned pcr,
			const struct bank *const *banks, size_t nbanks, struct measure_result *out)
{
	struct pcr_selection sel = { 0 };
	struct eventlog log;
	struct stat st;
	int r;

	if (stat(log_path, &st) < 0) {
		for (size_t i = 0; i < nbanks; i++) {
			static const uint8_t zero[BANK_MAX_DIGEST];
			const struct pcr_bank *pb = pcr_values_find(now, banks[i]->alg);
			if (memcmp(pb->value[pcr], zero, banks[i]->size)) {
				ingot_fail(&out->before, -EBADMSG, "%s: missing, but %s PCR %u is already extended (an interrupted measure, or another program extends it)",
					   log_path, banks[i]->name, pcr);
				return 0;
			}
		}
		return 1;
	}
	if (eventlog_load(log_path, &log, &out->before) < 0)
		return 0;
	for (size_t i = 0; i < nbanks; i++)
		pcr_selection_add(&sel, banks[i]->alg, 1u << pcr);
	r = eventlog_compare(&log, now, &sel, &out->before);
	eventlog_free(&log);
	return r == 0;
}

int attest_measure(struct tpm *t, const json_t *manifest, int pcr, const char *log_path,
		   struct measure_result *out, ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	_cleanup_atomic_ struct atomic_file af = { .fd = -1 };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int lock = -1;
	const struct bank *banks[BANK_COUNT];
	uint8_t digests[BANK_COUNT][BANK_MAX_DIGEST];
	struct pcr_selection sel = { 0 };
	struct pcr_values now;
	unsigned manifest_pcr = ATTEST_DEFAULT_PCR;
	size_t nbanks;
	int r;

	memset(out, 0, sizeof(*out));
	strbuf_init(&ev, 256);
	r = attest_event_data_from_manifest(manifest, &ev, e);
	if (r < 0)
		return r;
	if (json_object_get(manifest, "measurement")) {
		r = attest_check_measurement(manifest, &manifest_pcr, e);
		if (r < 0)
			return r;
	}
	if (pcr >= PCR_COUNT)
		return ingot_fail(e, -EINVAL, "PCR: expected 0-%d, got %d", PCR_COUNT - 1, pcr);
	out->pcr = pcr >= 0 ? (unsigned)pcr : manifest_pcr;

	r = tpm_active_banks(t, banks, &nbanks, e);
	if (r < 0)
		return r;
	for (size_t i = 0; i < nbanks; i++) {
		pcr_selection_add(&sel, banks[i]->alg, 1u << out->pcr);
		if (bank_hash(banks[i], ev.buf, ev.len, digests[i]) < 0)
			return ingot_fail(e, -EIO, "cannot compute %s", banks[i]->name);
	}
	dir = path_dirname(log_path);
	r = mkdir_p(dir, 0755, e);
	if (r < 0)
		return r;
	/* Two measures at once would each append to the old log and one
	 * event would be lost: read, extend and rename under one lock. */
	lock = attest_lock(log_path, e);
	if (lock < 0)
		return lock;
	r = tpm_pcr_read(t, &sel, &now, e);
	if (r < 0)
		return r;
	out->agreed_before = check_before(log_path, &now, out->pcr, banks, nbanks, out);

	r = eventlog_append_prepare(log_path, banks, nbanks, out->pcr, ATTEST_EV_IPL, ev.buf, ev.len, &af, e);
	if (r < 0)
		return r;
	r = tpm_pcr_extend(t, out->pcr, banks, (const uint8_t (*)[BANK_MAX_DIGEST])digests, nbanks, e);
	if (r < 0)
		return r;  /* the temporary log is removed: nothing changed */
	r = atomic_commit(&af, e);
	if (r < 0)
		return ingot_prefix(e, "PCR %u was extended but the event log was not written, so they now disagree", out->pcr);
	return tpm_pcr_read(t, &sel, &out->after, e);
}
