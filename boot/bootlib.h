/* Helpers shared by the static programs that run in a booting node: the
 * production /init (boot/init.c) and the boot test's /sbin/init
 * (tests/boot/test-init.c).  They link no ingot library (nothing is
 * mounted yet when they start), so these speak to sysfs and the TPM
 * character device directly.  Messages go to stderr prefixed with
 * BOOT_PROG, which each program's build defines. */
#ifndef INGOT_BOOT_BOOTLIB_H
#define INGOT_BOOT_BOOTLIB_H

#include <stddef.h>
#include <stdint.h>

void boot_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report an error; returns -1 for `return boot_fail(...)`. */
int boot_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A small sysfs/proc file into buf, trailing newlines and blanks cut. */
int boot_read_small(const char *path, char *buf, size_t size);

/* The "MAJ:MIN" of the virtio disk whose serial is want, waiting up to
 * wait_s seconds for it to appear. */
int boot_find_disk(const char *want, int wait_s, char *dev, size_t size);

/* Extend PCR pcr with H_bank(data) in every bank the TPM has allocated
 * for it (TPM2_GetCapability(TPM_CAP_PCRS)), and in no other: a TPM
 * refuses an extend that names a bank it lacks.  A bank whose algorithm
 * this code cannot hash fails the whole extend, so no bank of that PCR is
 * left looking untouched.  banks_out (may be NULL) gets the names, e.g.
 * "sha1,sha256". */
int boot_pcr_extend(int pcr, const void *data, size_t len, char *banks_out, size_t banks_size);

#endif
