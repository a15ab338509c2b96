/* ECDSA signature encodings. */
#ifndef INGOT_LIB_ECDSA_H
#define INGOT_LIB_ECDSA_H

#include <stddef.h>
#include <stdint.h>

/* An ECDSA signature given as its integers r and s (big-endian, as IEEE
 * P1363 - DSSE's r || s - and the TPM's TPMS_SIGNATURE_ECDSA give them)
 * as the DER SEQUENCE OpenSSL verifies; *der is malloc'd.  0 or -ENOMEM. */
int ecdsa_rs_to_der(const uint8_t *r, size_t rlen, const uint8_t *s, size_t slen, uint8_t **der,
		    size_t *der_len);

#endif
