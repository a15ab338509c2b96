/* Internals shared by attest/tpm.c, attest/ak.c, attest/quote-tpm.c and
 * attest/enroll*.c. */
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

/* TPM2_CreatePrimary of tmpl under hierarchy, empty auth and no outside
 * info or PCRs; *out is ESYS_TR_NONE on failure; *pub (optional) gets
 * the public area (Esys_Free). */
TSS2_RC tpm_create_primary(struct tpm *t, ESYS_TR hierarchy, const TPM2B_PUBLIC *tmpl, ESYS_TR *out,
			   TPM2B_PUBLIC **pub);

/* SubjectPublicKeyInfo PEM (malloc'd) of a TPM public area: ECC P-256, P-384, P-521
 * or RSA; -EINVAL for another key. */
int tpm_public_pem(const TPMT_PUBLIC *pub, char **out, ingot_error *e);

#endif
