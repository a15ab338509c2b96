/* What a measured boot of an ingot UKI puts in the TPM, predicted from
 * the UKI's parts (docs/attest.md "Measured boot"):
 *
 *   PCR 4   UEFI firmware: EV_EFI_BOOT_SERVICES_APPLICATION with the UKI's
 *           Authenticode digest (attest/authenticode.h), then the one of
 *           the kernel systemd-stub loads from .linux.
 *   PCR 11  systemd-stub (252): for each of .linux .osrel .cmdline .initrd
 *           present, H(section name with its NUL), then H(section bytes).
 *           systemd-measure calculate --phase= computes the same.
 *   PCR 15  ingot's initramfs, once dm-verity opened and mounted the image
 *           and before anything from it runs: one extend of every bank with
 *           H(event data), event data the ASCII line (no NUL)
 *             "ingot:boot:v1 image=NAME verity=ROOT_HASH_HEX"
 *           taken from the measured command line.  boot/init.c writes it. */
#ifndef INGOT_ATTEST_BOOTPREDICT_H
#define INGOT_ATTEST_BOOTPREDICT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attest/bank.h"
#include "lib/boot-contract.h"
#include "lib/err.h"
#include "lib/strbuf.h"


struct uki_part {
	const char *name;     /* ".linux" */
	const void *data;
	size_t len;
};

/* PCR 11 from reset after systemd-stub measured parts (in the stub's
 * order: .linux .osrel .cmdline .initrd); out holds b->size bytes. */
int boot_predict_pcr11(const struct bank *b, const struct uki_part *parts, size_t n, uint8_t *out);

/* The PCR 15 event data for an image name and dm-verity root hash. */
int boot_image_event(const char *name, const uint8_t root[32], struct strbuf *out);

/* {"sha1": hex, "sha256": hex, ...}: every bank's value of a PCR from
 * reset after one extend with H_bank(data). */
json_t *boot_predict_single_event(const void *data, size_t len);

/* {"sha1": hex, ...}: PCR 11 for every bank. */
json_t *boot_predict_pcr11_json(const struct uki_part *parts, size_t n);

#endif
