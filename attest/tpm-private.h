/* Internals shared by attest/tpm.c, attest/ak.c and attest/quote-tpm.c. */
#ifndef INGOT_ATTEST_TPM_PRIVATE_H
#define INGOT_ATTEST_TPM_PRIVATE_H

#include <tss2/tss2_esys.h>

#include "attest/tpm.h"

struct tpm {
	ESYS_CONTEXT *esys;
	TSS2_TCTI_CONTEXT *tcti;
	char *conf;            /* the TCTI string, for messages */
};

/* ingot_fail with ": <tpm2-tss decoding of rc>" appended. */
int tpm_fail(ingot_error *e, TSS2_RC rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* TPML_PCR_SELECTION for sel (3-byte select bitmaps: PCRs 0-23). */
void tpm_selection_to_tpml(const struct pcr_selection *sel, TPML_PCR_SELECTION *out);

/* Flush a transient object, ignoring errors (cleanup path). */
void tpm_flush(struct tpm *t, ESYS_TR *h);

/* Re-derive the AK's primary and load the AK from dir (see tpm.h);
 * on success both handles must be flushed by the caller (tpm_flush) and *pem gets
 * DIR/ak.pub.pem's contents (malloc'd). */
int tpm_ak_load(struct tpm *t, const char *dir, ESYS_TR *primary, ESYS_TR *ak, char **pem,
		ingot_error *e);

/* SubjectPublicKeyInfo PEM (malloc'd) of an ECC P-256 or RSA public
 * area: the AK's, and tpm2_readpublic's for `attest import`. */
int public_to_pem(const TPMT_PUBLIC *pub, char **out, ingot_error *e);

#endif
