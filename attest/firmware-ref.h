/* Firmware reference values of one platform model: what a genuine boot of
 * its firmware puts in PCRs 0 (firmware code) and 2 (option ROMs: on GPU
 * nodes the GPU and NIC ROMs), and the Secure Boot state it measures in
 * PCR 7.  Recorded from a reference boot whose quote was verified with an
 * enrolled AK (like Keylime's reference state), signed like manifests
 * (keys/firmware-ref-envelope.h), promoted with the firmware estate.  The predicate
 * (this file parses and writes it; nothing else does):
 *   {"schema": "ingot.firmware-ref/v1", "platform": "NAME",
 *    "pcrs": {"sha256": {"0": "<hex>", "2": "<hex>"}},
 *    "pcr7": {"variables": {"SecureBoot": "<sha256 event digest>", "PK": ..., ...},
 *             "authorities": ["<sha256 of a certificate>", ...]}}
 * pcr7.variables: every EV_EFI_VARIABLE_DRIVER_CONFIG event of PCR 7 by
 * variable name; authorities: the certificates of its
 * EV_EFI_VARIABLE_AUTHORITY events (what verified drivers and ROMs). */
#ifndef INGOT_ATTEST_FIRMWARE_REF_H
#define INGOT_ATTEST_FIRMWARE_REF_H

#include <jansson.h>
#include <stdint.h>

#include "attest/eventlog.h"
#include "attest/pcrs.h"
#include "lib/err.h"

#define FIRMWARE_REF_SCHEMA "ingot.firmware-ref/v1"
#define FIRMWARE_REF_PREDICATE "https://ingot.dev/firmware-ref/v1"
#define FIRMWARE_REF_MAX 16

struct firmware_ref {
	char platform[128];
	uint8_t pcr0[32], pcr2[32];   /* sha256 bank */
	size_t nvars;
	struct {
		char name[64];
		uint8_t digest[32];
	} vars[FIRMWARE_REF_MAX];
	size_t nauth;
	uint8_t auth[FIRMWARE_REF_MAX][32];
};

/* Parse the predicate; what names it in messages. */
int firmware_ref_from_json(const json_t *j, const char *what, struct firmware_ref *out, ingot_error *e);
json_t *firmware_ref_to_json(const struct firmware_ref *r);

/* Record the reference from a reference boot: quoted holds proven sha256
 * PCRs 0, 2 and 7, and log must replay to them (checked here, with its
 * event data).  platform: 1-127 printable characters. */
int firmware_ref_record(const char *platform, const struct eventlog *log, const struct pcr_values *quoted,
			struct firmware_ref *out, ingot_error *e);

/* The certificate an EV_EFI_VARIABLE_AUTHORITY event names: its
 * EFI_SIGNATURE_DATA (owner GUID, then the DER certificate); out gets the
 * certificate's sha256.  -EBADMSG when the event is not one. */
int firmware_authority_cert(const struct eventlog_event *ev, uint8_t out[32]);

#endif
