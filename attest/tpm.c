#include "attest/tpm-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

int tpm_fail(ingot_error *e, TSS2_RC rc, const char *fmt, ...)
{
	char msg[INGOT_ERR_MSG];
	va_list ap;
	int code = -EIO;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* TPM_RC_OBJECT_MEMORY and friends: the TPM is out of room, not broken. */
	if ((rc & 0xfff) == TPM2_RC_OBJECT_MEMORY || (rc & 0xfff) == TPM2_RC_SESSION_MEMORY)
		code = -ENOSPC;
	return ingot_fail(e, code, "%s: %s (0x%x)", msg, Tss2_RC_Decode(rc), rc);
}

const char *tpm_tcti_choose(const char *tcti)
{
	const char *env;

	if (tcti && *tcti)
		return tcti;
	env = getenv("INGOT_TCTI");
	return env && *env ? env : TPM_DEFAULT_TCTI;
}

int tpm_open(const char *tcti, struct tpm **out, ingot_error *e)
{
	struct tpm *t = xcalloc(1, sizeof(*t));
	const char *conf = tpm_tcti_choose(tcti);
	TSS2_RC rc;

	*out = NULL;
	t->conf = xstrdup(conf);
	rc = Tss2_TctiLdr_Initialize(conf, &t->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		tpm_close(t);
		return ingot_fail(e, -ENODEV, "TPM: TCTI '%s': cannot load or connect (no TPM there?): %s (0x%x)",
				  conf, Tss2_RC_Decode(rc), rc);
	}
	rc = Esys_Initialize(&t->esys, t->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		tpm_close(t);
		return ingot_fail(e, -ENODEV, "TPM: TCTI '%s': cannot start an ESAPI context: %s (0x%x)",
				  conf, Tss2_RC_Decode(rc), rc);
	}
	*out = t;
	return 0;
}

void tpm_close(struct tpm *t)
{
	if (!t)
		return;
	if (t->esys)
		Esys_Finalize(&t->esys);
	if (t->tcti)
		Tss2_TctiLdr_Finalize(&t->tcti);
	free(t->conf);
	free(t);
}

void tpm_flush(struct tpm *t, ESYS_TR *h)
{
	if (*h != ESYS_TR_NONE) {
		Esys_FlushContext(t->esys, *h);
		*h = ESYS_TR_NONE;
	}
}

void tpm_selection_to_tpml(const struct pcr_selection *sel, TPML_PCR_SELECTION *out)
{
	memset(out, 0, sizeof(*out));
	out->count = (UINT32)sel->nbanks;
	for (size_t i = 0; i < sel->nbanks; i++) {
		TPMS_PCR_SELECTION *s = &out->pcrSelections[i];

		s->hash = sel->banks[i].alg;
		s->sizeofSelect = 3;
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (sel->banks[i].mask & (1u << p))
				s->pcrSelect[p / 8] |= (BYTE)(1u << (p % 8));
	}
}

int tpm_active_banks(struct tpm *t, const struct bank *banks[BANK_COUNT], size_t *n, ingot_error *e)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	TSS2_RC rc;

	rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				TPM2_CAP_PCRS, 0, 1, &more, &cap);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(e, rc, "TPM %s: cannot read the PCR allocation", t->conf);
	*n = 0;
	for (size_t i = 0; i < BANK_COUNT; i++) {
		for (UINT32 j = 0; j < cap->data.assignedPCR.count; j++) {
			const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[j];
			int any = 0;

			if (s->hash != bank_table[i].alg)
				continue;
			for (unsigned k = 0; k < s->sizeofSelect && k < sizeof(s->pcrSelect); k++)
				any |= s->pcrSelect[k];
			if (any)
				banks[(*n)++] = &bank_table[i];
		}
	}
	Esys_Free(cap);
	if (!*n)
		return ingot_fail(e, -ENODEV, "TPM %s: expected an active sha1, sha256, sha384 or sha512 PCR bank, got none",
				  t->conf);
	return 0;
}

int tpm_pcr_read(struct tpm *t, const struct pcr_selection *sel, struct pcr_values *out, ingot_error *e)
{
	struct pcr_selection left = *sel;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sel->nbanks; i++)
		pcr_values_bank(out, sel->banks[i].alg, 1);
	for (;;) {
		TPML_PCR_SELECTION in, *got = NULL;
		TPML_DIGEST *values = NULL;
		UINT32 counter;
		size_t used = 0, nleft = 0;
		TSS2_RC rc;

		for (size_t i = 0; i < left.nbanks; i++)
			if (left.banks[i].mask)
				nleft++;
		if (!nleft)
			return 0;
		tpm_selection_to_tpml(&left, &in);
		rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &in, &counter, &got, &values);
		if (rc != TSS2_RC_SUCCESS)
			return tpm_fail(e, rc, "TPM %s: PCR read failed", t->conf);
		for (UINT32 j = 0; j < got->count; j++) {
			const TPMS_PCR_SELECTION *s = &got->pcrSelections[j];
			struct pcr_bank *pb = pcr_values_bank(out, s->hash, 0);

			for (unsigned p = 0; pb && p < PCR_COUNT && p / 8 < s->sizeofSelect; p++) {
				if (!(s->pcrSelect[p / 8] & (1u << (p % 8))))
					continue;
				if (used >= values->count || values->digests[used].size != pb->bank->size) {
					Esys_Free(got);
					Esys_Free(values);
					return ingot_fail(e, -EPROTO, "TPM %s: PCR read: expected a %zu-byte %s value for PCR %u, got none or another size",
							  t->conf, pb->bank->size, pb->bank->name, p);
				}
				memcpy(pb->value[p], values->digests[used].buffer, pb->bank->size);
				pb->mask |= 1u << p;
				used++;
				for (size_t k = 0; k < left.nbanks; k++)
					if (left.banks[k].alg == s->hash)
						left.banks[k].mask &= ~(1u << p);
			}
		}
		Esys_Free(got);
		Esys_Free(values);
		if (!used) {
			/* The TPM returned nothing of what is left: not allocated. */
			for (size_t k = 0; k < left.nbanks; k++)
				if (left.banks[k].mask) {
					const struct bank *b = bank_by_alg(left.banks[k].alg);
					return ingot_fail(e, -ENODATA, "TPM %s: PCR bank %s: expected active with the requested PCRs, got none (bank not active)",
							  t->conf, b ? b->name : "?");
				}
		}
	}
}

int tpm_pcr_extend(struct tpm *t, unsigned pcr, const struct bank *const *banks,
		   const uint8_t (*digests)[BANK_MAX_DIGEST], size_t n, ingot_error *e)
{
	TPML_DIGEST_VALUES v;
	TSS2_RC rc;

	if (pcr >= PCR_COUNT || n == 0 || n > BANK_COUNT)
		return ingot_fail(e, -EINVAL, "PCR extend: expected PCR 0-%d and 1-%d banks, got PCR %u and %zu banks",
				  PCR_COUNT - 1, BANK_COUNT, pcr, n);
	memset(&v, 0, sizeof(v));
	v.count = (UINT32)n;
	for (size_t i = 0; i < n; i++) {
		v.digests[i].hashAlg = banks[i]->alg;
		memcpy(&v.digests[i].digest, digests[i], banks[i]->size);
	}
	rc = Esys_PCR_Extend(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &v);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(e, rc, "TPM %s: extending PCR %u failed", t->conf, pcr);
	return 0;
}
