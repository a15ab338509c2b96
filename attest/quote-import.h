/* A quote made by tpm2-tools, turned into ingot's quote document
 * (attest/quote.h): tpm2_quote's -m (TPMS_ATTEST), -s (TPMT_SIGNATURE,
 * tss format) and -o (PCR values, in either -F values or the default
 * serialized form) with the AK's public key from tpm2_readpublic -o
 * (TPM2B_PUBLIC) or -f pem.  The PCR selection and the nonce are read
 * from the TPMS_ATTEST; the document is then verified against its own
 * AK and nonce, so a message, signature and PCR file that do not belong
 * together are refused here (trust in the AK and the nonce is still the
 * verifier's: verify-quote --ak-pub, --nonce). */
#ifndef INGOT_ATTEST_QUOTE_IMPORT_H
#define INGOT_ATTEST_QUOTE_IMPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct quote_import_files {
	const char *msg_name, *sig_name, *pcrs_name, *ak_name;   /* for messages */
	const uint8_t *msg, *sig, *pcrs, *ak;
	size_t msg_len, sig_len, pcrs_len, ak_len;
};

int quote_import(const struct quote_import_files *in, json_t **out, ingot_error *e);

#endif
