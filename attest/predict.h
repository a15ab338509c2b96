/* What ingot measures for an image and the PCR values that follow.
 *
 * docs/CONTRACTS.md fixes the formulas: the event data is the ASCII line
 *   "ingot:v1 image=NAME sha256=IMAGE verity=ROOT manifest=CONTENT"
 * (no NUL), each active bank is extended with H_bank(event data), and the
 * PCR predicted from all zeroes is H_bank(zeros || H_bank(event data)).
 * The manifest carries the result as its "measurement" member. */
#ifndef INGOT_ATTEST_PREDICT_H
#define INGOT_ATTEST_PREDICT_H

#include <jansson.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/json.h"
#include "lib/strbuf.h"

#define ATTEST_DEFAULT_PCR 15
#define ATTEST_EV_IPL 0x0000000Du  /* TCG EV_IPL */
#define ATTEST_EVENT_PREFIX "ingot:v1 "

/* True when name may appear in the event data: 1..255 printable ASCII
 * characters without spaces, so the line parses back unambiguously. */
int attest_name_ok(const char *name);

/* Append the event data line to out.  -EINVAL for an unusable name. */
int attest_event_data(const char *image_name, const uint8_t image_sha256[32],
		      const uint8_t verity_root[32], const uint8_t content_digest[32],
		      struct strbuf *out);

/* The manifest's "measurement" object (new reference), or NULL when the
 * name is unusable (see attest_name_ok), pcr > 23, or out of memory. */
json_t *attest_predict_measurement(const char *image_name, const uint8_t image_sha256[32],
				   const uint8_t verity_root[32],
				   const uint8_t content_digest[32], unsigned pcr);

/* sha256 of json_compact(manifest without its "measurement" member). */
int attest_content_digest(const json_t *manifest, uint8_t out[32]);
/* The same for a manifest written with json_dump_spliced (its files[]
 * made by sp); *len (optional) gets the compact byte count.  0, -ENOMEM,
 * or an error of sp's, with e filled. */
int attest_content_digest_spliced(const json_t *manifest, const struct json_splice *sp, size_t n,
				  uint8_t out[32], size_t *len, ingot_error *e);

/* The event data for a manifest: recipe.name, image.sha256,
 * verity.root_hash and the content digest recomputed from the manifest. */
int attest_event_data_from_manifest(const json_t *manifest, struct strbuf *out, ingot_error *e);

/* The "measurement" object for a manifest's content (new reference):
 * pcr < 0 means the manifest's measurement.pcr when it has one, else
 * ATTEST_DEFAULT_PCR. */
json_t *attest_measurement_for_manifest(const json_t *manifest, int pcr, ingot_error *e);

/* Recompute the measurement of a manifest and check it equals the
 * manifest's "measurement" member; the PCR is the one the member names.
 * On success *pcr (if non-NULL) gets that PCR. */
int attest_check_measurement(const json_t *manifest, unsigned *pcr, ingot_error *e);
/* The same for a manifest's signed head (no files[]: manifest/dsse.h
 * v2), with the content digest the head carries, which only the file
 * list it binds could recompute: every other part of the measurement
 * is still recomputed and compared. */
int attest_check_head_measurement(const json_t *head, unsigned *pcr, ingot_error *e);

#endif
