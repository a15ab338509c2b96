/* TCG event logs, both formats tpm2_eventlog reads, told apart as it
 * does by the first record's type:
 *  - crypto-agile (TCG PC Client Platform Firmware Profile, section 10):
 *    a SHA1-format TCG_PCR_EVENT header of type EV_NO_ACTION carrying the
 *    "Spec ID Event03" structure that lists the banks and digest sizes,
 *    then TCG_PCR_EVENT2 records.  The format of
 *    /sys/kernel/security/tpm0/binary_bios_measurements on TPM 2.0
 *    firmware and of ingot's own measurement log.
 *  - SHA1 (TCG 1.2 format, older and some cloud firmware): TCG_PCR_EVENT
 *    records only (PCR, type, SHA-1 digest, data), no Spec ID event; the
 *    log's one bank is sha1.
 * All little-endian.
 *
 * Parsing is bounded: a log over EVENTLOG_MAX_BYTES, more than
 * EVENTLOG_MAX_EVENTS records, or an event over EVENTLOG_MAX_EVENT_SIZE
 * is refused, as are truncated records and algorithms ingot cannot hash. */
#ifndef INGOT_ATTEST_EVENTLOG_H
#define INGOT_ATTEST_EVENTLOG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attest/bank.h"
#include "attest/pcrs.h"
#include "lib/err.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"

#define EVENTLOG_MAX_BYTES (64u << 20)
#define EVENTLOG_MAX_EVENTS 65536u
#define EVENTLOG_MAX_EVENT_SIZE (1u << 20)

#define EV_NO_ACTION 0x00000003u
/* Event types whose rules the verdict (attest/verdict.h) applies. */
#define EV_SEPARATOR 0x00000004u
#define EV_IPL 0x0000000Du
#define EV_EFI_VARIABLE_DRIVER_CONFIG 0x80000001u
#define EV_EFI_VARIABLE_BOOT 0x80000002u
#define EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003u
#define EV_EFI_GPT_EVENT 0x80000006u
#define EV_EFI_ACTION 0x80000007u
#define EV_EFI_VARIABLE_BOOT2 0x8000000Cu
#define EV_EFI_VARIABLE_AUTHORITY 0x800000E0u
/* Signature of the header event's TCG_EfiSpecIDEvent (16 bytes with the NUL). */
#define EVENTLOG_SPEC_ID "Spec ID Event03"

struct eventlog_event {
	size_t offset;              /* of the record in the log */
	uint32_t pcr;
	uint32_t type;
	size_t ndigests;
	struct {
		const struct bank *bank;
		uint8_t d[BANK_MAX_DIGEST];
	} digests[BANK_COUNT];
	const uint8_t *data;        /* points into the log's buffer */
	uint32_t data_len;
};

enum eventlog_format {
	EVENTLOG_CRYPTO_AGILE = 0,
	EVENTLOG_SHA1,              /* TCG 1.2 TCG_PCR_EVENT records */
};

struct eventlog {
	enum eventlog_format format;
	uint8_t *raw;               /* the whole log (owned) */
	size_t len;
	char *name;                 /* for messages */
	/* From the Spec ID event (a SHA1 log: banks = sha1, the rest 0). */
	uint32_t platform_class;
	uint8_t spec_major, spec_minor, spec_errata, uintn_size;
	size_t nbanks;
	const struct bank *banks[BANK_COUNT];
	int startup_locality;       /* -1 when the log has no StartupLocality event */
	/* TCG_PCR_EVENT2 records (a SHA1 log: every TCG_PCR_EVENT record),
	 * numbered from 1 in ingot's messages. */
	size_t nevents;
	struct eventlog_event *events;
};

/* Parse a copy of buf; name is used in messages.  On failure out is
 * left empty (safe to eventlog_free). */
int eventlog_parse(const char *name, const void *buf, size_t len, struct eventlog *out, ingot_error *e);
int eventlog_load(const char *path, struct eventlog *out, ingot_error *e);
void eventlog_free(struct eventlog *log);

/* PCR values the log's events produce from reset: every PCR starts at
 * zero (PCR 0 at the StartupLocality value when the log has one) and
 * each event other than EV_NO_ACTION extends its PCR in every bank it
 * carries a digest for.  out lists the log's banks; a PCR is present
 * (mask) once an event extended it, as tpm2_eventlog prints them. */
int eventlog_replay(const struct eventlog *log, struct pcr_values *out, ingot_error *e);

/* Compare the replay with PCR values read from a TPM (e.g. a verified
 * quote).  sel names the PCRs to compare; NULL means every PCR the log
 * extends, in the log's banks that actual carries (possibly none: then
 * nothing is compared and the result is 0).  A selected PCR the
 * log never extends must still be at its reset value.  Returns 0 when
 * all agree; otherwise -EBADMSG with a message naming the bank, the PCR
 * and the first divergent event: the event after the longest prefix of
 * the log that reproduces the TPM's value (the TPM never saw it, or saw
 * something else), or, when no prefix does, the TPM has extends the log
 * does not record. */
int eventlog_compare(const struct eventlog *log, const struct pcr_values *actual,
		     const struct pcr_selection *sel, ingot_error *e);

/* The event's digest in bank alg, or NULL when it carries none. */
const uint8_t *eventlog_event_digest(const struct eventlog_event *ev, uint16_t alg);

/* The UEFI_VARIABLE_DATA of an EV_EFI_VARIABLE_* event: VariableName
 * GUID, UnicodeNameLength and VariableDataLength (UINT64), the UCS-2 name,
 * the data.  name gets the name in ASCII (any other character as '?'). */
struct efi_variable {
	uint8_t guid[16];
	char name[64];
	const uint8_t *data;
	size_t len;
};
int eventlog_efi_variable(const struct eventlog_event *ev, struct efi_variable *out);

/* Every event whose digest the TCG PC Client spec defines as the hash of
 * its data (EV_SEPARATOR, EV_EFI_ACTION, EV_EFI_GPT_EVENT and the
 * EV_EFI_VARIABLE_* events) carries data that hashes to each of its
 * digests: otherwise the log was rewritten around a digest the TPM did
 * see.  One firmware quirk is allowed: EV_EFI_VARIABLE_BOOT(2) digests of
 * the variable's data alone (seen from several firmwares).  0, or
 * -EBADMSG naming the first such event. */
int eventlog_check_data(const struct eventlog *log, ingot_error *e);

/* "EV_IPL", or NULL for a type ingot has no name for. */
const char *eventlog_type_name(uint32_t type);

/* JSON description: spec, banks, events (digests, data as text when
 * printable, else hex) and the replayed "pcrs". */
json_t *eventlog_to_json(const struct eventlog *log, const struct pcr_values *replayed);

/* Encoding, for ingot's own log.  The header lists the banks in order;
 * an event carries H_bank(data) for each of those banks. */
int eventlog_encode_header(const struct bank *const *banks, size_t nbanks, struct strbuf *out);
int eventlog_encode_event(const struct bank *const *banks, size_t nbanks, uint32_t pcr,
			  uint32_t type, const void *data, size_t len, struct strbuf *out);

/* Write path's current log (or a fresh header for banks when path does
 * not exist) plus one event to a temporary file beside path, without
 * committing it: the caller extends the PCR, then atomic_commit()s, so
 * an interruption leaves either the old log or the new one.  An existing
 * log must parse and list exactly the given banks. */
int eventlog_append_prepare(const char *path, const struct bank *const *banks, size_t nbanks,
			    uint32_t pcr, uint32_t type, const void *data, size_t len,
			    struct atomic_file *af, ingot_error *e);

#endif
