#include "attest/bank.h"

#include <errno.h>
#include <string.h>
#include <tss2/tss2_tpm2_types.h>

const struct bank bank_table[BANK_COUNT] = {
	{ TPM2_ALG_SHA1, "sha1", TPM2_SHA1_DIGEST_SIZE },
	{ TPM2_ALG_SHA256, "sha256", TPM2_SHA256_DIGEST_SIZE },
	{ TPM2_ALG_SHA384, "sha384", TPM2_SHA384_DIGEST_SIZE },
	{ TPM2_ALG_SHA512, "sha512", TPM2_SHA512_DIGEST_SIZE },
};

const struct bank *bank_by_alg(uint16_t alg)
{
	for (size_t i = 0; i < BANK_COUNT; i++)
		if (bank_table[i].alg == alg)
			return &bank_table[i];
	return NULL;
}

const struct bank *bank_by_name(const char *name)
{
	for (size_t i = 0; i < BANK_COUNT; i++)
		if (!strcmp(bank_table[i].name, name))
			return &bank_table[i];
	return NULL;
}

const EVP_MD *bank_md(const struct bank *b)
{
	switch (b->alg) {
	case TPM2_ALG_SHA1: return EVP_sha1();
	case TPM2_ALG_SHA256: return EVP_sha256();
	case TPM2_ALG_SHA384: return EVP_sha384();
	case TPM2_ALG_SHA512: return EVP_sha512();
	}
	return NULL;
}

int bank_hash(const struct bank *b, const void *data, size_t len, uint8_t *out)
{
	const EVP_MD *md = bank_md(b);
	unsigned int n = 0;

	if (!md || !EVP_Digest(data, len, out, &n, md, NULL) || n != b->size)
		return -EIO;
	return 0;
}

int bank_extend(const struct bank *b, uint8_t *pcr, const uint8_t *digest)
{
	uint8_t buf[2 * BANK_MAX_DIGEST];

	memcpy(buf, pcr, b->size);
	memcpy(buf + b->size, digest, b->size);
	return bank_hash(b, buf, 2 * b->size, pcr);
}
