/* The hash algorithms ingot knows as TPM PCR banks: TPM algorithm id,
 * name as in tpm2-tools ("sha256"), digest size and the OpenSSL digest.
 * One table serves the event-log parser, the PCR selection parser, the
 * quote verifier and the measurement predictor. */
#ifndef INGOT_ATTEST_BANK_H
#define INGOT_ATTEST_BANK_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#define BANK_MAX_DIGEST 64  /* sha512 */
#define BANK_COUNT 4        /* sha1, sha256, sha384, sha512 */
#define PCR_COUNT 24        /* PC client platform: PCRs 0..23 */

struct bank {
	uint16_t alg;           /* TPM2_ALG_SHA1, ... */
	const char *name;       /* "sha1", ... */
	size_t size;            /* digest size in bytes */
};

/* All known banks, in the fixed order sha1, sha256, sha384, sha512. */
extern const struct bank bank_table[BANK_COUNT];

const struct bank *bank_by_alg(uint16_t alg);
const struct bank *bank_by_name(const char *name);

/* The OpenSSL digest of a bank. */
const EVP_MD *bank_md(const struct bank *b);
/* out (bank->size bytes) = H_bank(data). */
int bank_hash(const struct bank *b, const void *data, size_t len, uint8_t *out);
/* pcr (bank->size bytes) = H_bank(pcr || digest): a TPM2_PCR_Extend. */
int bank_extend(const struct bank *b, uint8_t *pcr, const uint8_t *digest);

#endif
