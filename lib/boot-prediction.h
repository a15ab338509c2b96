/* What a manifest predicts of a measured boot, as bytes: filled by
 * manifest/typed.h from the manifest's boot object (builder/uki.c writes
 * it), judged by attest/verdict.h.  Code-free and below both, which are
 * peers. */
#ifndef INGOT_LIB_BOOT_PREDICTION_H
#define INGOT_LIB_BOOT_PREDICTION_H

#include <stdint.h>

/* A member that is absent or not 64 hex digits leaves its bit clear: the
 * verdict then names what it lacks (a check not made). */
enum boot_prediction_have {
	MB_UKI = 1u << 0,           /* boot.uki.authenticode_sha256 (PCR 4) */
	MB_LINUX = 1u << 1,         /* boot.linux_authenticode_sha256 (PCR 4) */
	MB_PCR11 = 1u << 2,         /* boot.pcr11.predicted.sha256 */
	MB_PCR15 = 1u << 3,         /* boot.pcr15.predicted.sha256 */
	MB_SECURE_BOOT = 1u << 4,   /* boot.secure_boot.signer_cert_sha256 */
	MB_BOOT = 1u << 5,          /* the manifest has a boot object at all */
	MB_IMAGE = 1u << 6,         /* name and verity root (what PCR 15's event is made of) */
};

struct boot_prediction {
	unsigned have;                    /* enum boot_prediction_have */
	const char *name;                 /* recipe.name */
	uint8_t root[32];                 /* verity.root_hash */
	uint8_t uki[32], linux_app[32];   /* the PCR 4 boot applications, in order */
	uint8_t pcr11[32], pcr15[32];
	uint8_t signer[32];               /* the Secure Boot signer certificate's sha256 */
	char pcr15_hex[65];               /* pcr15 as the manifest spells it ("" without) */
};

#endif
