/* A TPM 2.0 reached through a tpm2-tss TCTI (ESAPI).  The TCTI
 * configuration string is passed to Tss2_TctiLdr_Initialize:
 * "device:/dev/tpmrm0" on nodes, "swtpm:host=127.0.0.1,port=N" in
 * tests.  Every transient object ingot loads is flushed before the call
 * that loaded it returns, because without a resource manager (swtpm,
 * /dev/tpm0) leftover objects soon fill the TPM (TPM_RC_OBJECT_MEMORY). */
#ifndef INGOT_ATTEST_TPM_H
#define INGOT_ATTEST_TPM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attest/bank.h"
#include "attest/pcrs.h"
#include "lib/err.h"

#define TPM_DEFAULT_TCTI "device:/dev/tpmrm0"
#define TPM_NONCE_MAX 64   /* TPM2B_DATA holds at most sizeof(TPMU_HA) */

struct tpm;

/* The TCTI to use: tcti when non-NULL, else $INGOT_TCTI, else
 * TPM_DEFAULT_TCTI. */
const char *tpm_tcti_choose(const char *tcti);

/* Load the TCTI and start an ESAPI context.  tcti as tpm_tcti_choose. */
int tpm_open(const char *tcti, struct tpm **out, ingot_error *e);
void tpm_close(struct tpm *t);
static inline void tpm_closep(struct tpm **t) { if (*t) tpm_close(*t); }
#define _cleanup_tpm_ __attribute__((cleanup(tpm_closep)))

/* Banks with at least one PCR allocated that ingot can hash, in
 * bank_table order. */
int tpm_active_banks(struct tpm *t, const struct bank *banks[BANK_COUNT], size_t *n, ingot_error *e);

/* Read every PCR of sel (several TPM2_PCR_Read calls when needed).  A
 * PCR the TPM does not return (bank not active) is an error. */
int tpm_pcr_read(struct tpm *t, const struct pcr_selection *sel, struct pcr_values *out, ingot_error *e);

/* TPM2_PCR_Extend of pcr with one digest per bank (digests[i] has
 * banks[i]->size bytes). */
int tpm_pcr_extend(struct tpm *t, unsigned pcr, const struct bank *const *banks,
		   const uint8_t (*digests)[BANK_MAX_DIGEST], size_t n, ingot_error *e);

/* Attestation keys.  The AK is an ordinary (non-primary) restricted
 * signing key created under a primary storage key that is re-derived
 * from the hierarchy seed on every use with the fixed template in
 * docs/attest.md, so only the AK's blobs need to be kept:
 *   DIR/ak.json      {"alg","hierarchy","template"}
 *   DIR/ak.pub       TPM2B_PUBLIC, marshalled
 *   DIR/ak.priv      TPM2B_PRIVATE, marshalled (wrapped by the TPM)
 *   DIR/ak.pub.pem   the public key as SubjectPublicKeyInfo PEM */
enum ak_alg { AK_ECC_P256, AK_RSA_2048 };
enum ak_hierarchy { AK_OWNER, AK_ENDORSEMENT };

int ak_alg_parse(const char *s, enum ak_alg *out);
int ak_hierarchy_parse(const char *s, enum ak_hierarchy *out);
const char *ak_alg_name(enum ak_alg a);
const char *ak_hierarchy_name(enum ak_hierarchy h);

/* Where `ingot attest ak create` puts the node's AK unless told otherwise,
 * and where quote, push, enroll and verify look for it. */
#define DEFAULT_AK_DIR "/var/lib/ingot/ak"

/* -EEXIST when dir already holds an AK (ak.json). */
int tpm_ak_create(struct tpm *t, const char *dir, enum ak_alg alg, enum ak_hierarchy h, ingot_error *e);

/* TPM2_Quote over sel with nonce as qualifying data, signed by the AK in
 * ak_dir.  The PCR values are read right after the quote and must hash
 * to its pcrDigest (retried when a PCR changed in between).  *out is the
 * quote document (see quote.h). */
int tpm_quote(struct tpm *t, const char *ak_dir, const uint8_t *nonce, size_t nonce_len,
	      const struct pcr_selection *sel, json_t **out, ingot_error *e);

#endif
