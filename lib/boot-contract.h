/* The boot contract: what ingot's UKI writer puts on the kernel command
 * line, what boot/init.c reads from it and extends into the TPM, and what
 * the recipe parser and the predictor expect.  Code-free on purpose:
 * boot/init.c is a static program that links no ingot library, so every
 * party includes these names instead of spelling them again.
 *
 * Command line (measured by systemd-stub in .cmdline, PCR 11):
 *   ingot.image=NAME ingot.root=HEX ingot.salt=HEX ingot.blocks=N
 * and, from the recipe's boot.cmdline, optionally
 *   ingot.overlay=tmpfs   the root is an overlay: a tmpfs upper layer over
 *                         the verity squashfs (writable /etc, /var; lost
 *                         at power-off; the image itself never changes)
 * PCR 15 event, extended by the init once dm-verity opened the image and
 * before anything from it runs (ASCII, no NUL):
 *   "ingot:boot:v1 image=NAME verity=ROOT_HASH_HEX" */
#ifndef INGOT_LIB_BOOT_CONTRACT_H
#define INGOT_LIB_BOOT_CONTRACT_H

#define BOOT_KEY_IMAGE  "ingot.image="
#define BOOT_KEY_ROOT   "ingot.root="
#define BOOT_KEY_SALT   "ingot.salt="
#define BOOT_KEY_BLOCKS "ingot.blocks="
#define BOOT_KEY_OVERLAY "ingot.overlay="

/* The PCR 15 event's data starts with this (then image=... verity=...). */
#define BOOT_EVENT_PREFIX "ingot:boot:v1 "

#define BOOT_PCR_FIRMWARE 0      /* firmware code (judged against a firmware reference) */
#define BOOT_PCR_OPTION_ROMS 2   /* option ROMs, e.g. GPU and NIC */
#define BOOT_PCR_FIRMWARE_APP 4
#define BOOT_PCR_SECURE_BOOT 7
#define BOOT_PCR_CMDLINE_EFI 9
#define BOOT_PCR_UKI 11
#define BOOT_PCR_CMDLINE 12
#define BOOT_PCR_IMAGE 15

#endif
