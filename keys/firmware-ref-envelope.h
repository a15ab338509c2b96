/* Signed firmware references (attest/firmware-ref.h): a DSSE envelope of
 * an in-toto statement, predicateType FIRMWARE_REF_PREDICATE, one subject
 * "firmware-ref:PLATFORM" whose sha256 is that of the compact predicate.
 * Signed and verified like manifests (keyring, threshold). */
#ifndef INGOT_KEYS_FIRMWARE_REF_ENVELOPE_H
#define INGOT_KEYS_FIRMWARE_REF_ENVELOPE_H

#include <jansson.h>

#include "attest/firmware-ref.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/err.h"

/* Read path, verify its signatures against kr, parse the predicate. */
int firmware_ref_load(const char *path, const struct keyring *kr, struct firmware_ref *out, ingot_error *e);

/* The envelope of ref, signed by k. */
int firmware_ref_sign(const struct firmware_ref *ref, const struct signing_key *k, json_t **envelope, ingot_error *e);

#endif
