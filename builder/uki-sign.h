/* Authenticode signature of a Unified Kernel Image for UEFI Secure Boot
 * (recipe `boot: secure-boot:`), made here with OpenSSL so that the same
 * inputs give the same bytes: PKCS#7 SignedData over an
 * SpcIndirectDataContent that carries the image's SHA-256 Authenticode
 * digest (attest/authenticode.h), signed attributes contentType and
 * messageDigest only (no signing time), RSA PKCS#1 v1.5 (deterministic).
 * The signature goes into the certificate table at the end of the file
 * (a WIN_CERTIFICATE, 8-aligned); the Authenticode digest, and so what
 * firmware measures into PCR 4, is the same before and after. */
#ifndef INGOT_UKI_SIGN_H
#define INGOT_UKI_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/strbuf.h"

/* Sign the unsigned PE image in efi (8-aligned length, as uki_assemble
 * leaves it) in place with the PEM private key (RSA, unencrypted) and its
 * PEM certificate; cert_sha256 gets SHA-256 of the certificate's DER.
 * field names the recipe field in messages ("boot.secure-boot"). */
int uki_sign(struct strbuf *efi, const void *key_pem, size_t key_len, const void *cert_pem, size_t cert_len,
	     const char *field, uint8_t cert_sha256[32], ingot_error *e);

#endif
