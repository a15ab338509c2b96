/* The recipe's `boot:` section: the pinned inputs of the image's Unified
 * Kernel Image (builder/uki.c).
 *
 *   boot:
 *     kernel: {source: linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb, sha256: ...}
 *     stub:   {source: systemd-boot-efi_252.39-1~deb12u2_amd64.deb, sha256: ...}
 *     init:   {source: ingot-init, sha256: ...}
 *     modules: [virtio_ring, virtio, ..., dm-verity, squashfs]
 *     cmdline: "console=ttyS0"
 *     secure-boot:                       # optional
 *       key:  {source: db.key, sha256: ...}
 *       cert: {source: db.pem, sha256: ...}
 *
 * kernel: a Debian linux-image .deb (its /boot/vmlinuz-* and modules) or
 * a vmlinuz file (then modules must be empty); stub: the systemd-boot-efi
 * .deb or a linuxx64.efi.stub file; init: the initramfs's /init (a
 * static executable, build/ingot-init).  modules load in the listed order,
 * so each one's dependencies must come before it (the build checks).
 * secure-boot: the UKI is signed (Authenticode, builder/uki-sign.h) with
 * that unencrypted RSA PEM key and its PEM certificate, the one in the
 * firmware's db; both pinned like the other inputs. */
#ifndef INGOT_RECIPES_BOOT_H
#define INGOT_RECIPES_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "lib/err.h"
#include "lib/yamlx.h"

#define BOOT_MAX_MODULES 64
#define BOOT_CMDLINE_MAX 1024

struct boot_input {
	char *source;        /* as written */
	char *path;          /* resolved against the recipe's directory */
	uint8_t sha256[32];
	char *version, *purl;  /* the SBOM's, as the recipe states them; NULL when not */
	size_t line, column;
};

struct boot_spec {
	struct boot_input kernel, stub, init;
	char **modules; size_t n_modules;   /* names as modinfo gives them ("dm-verity") */
	char *cmdline;                      /* extra kernel command line, "" if none */
	int secure_boot;                    /* sb_key and sb_cert are set */
	struct boot_input sb_key, sb_cert;
	size_t line, column;
};

/* Is a (NUL-terminated) the module name b[0..blen)?  '-' and '_' are
 * equal, as the kernel has them. */
int boot_module_eq(const char *a, const char *b, size_t blen);

/* The optional version: and purl: of map (an artifact, a boot input, a
 * built-from entry; f its field name), for the SBOM: a version is
 * non-empty without blanks, a purl "pkg:TYPE/..." without blanks. */
int recipe_labels_parse(struct ydoc *d, yaml_node_t *map, const char *f, char **version, char **purl, ingot_error *e);

/* Parse the `boot:` mapping; dir is the recipe's directory. */
int boot_parse(struct ydoc *d, yaml_node_t *n, const char *dir, struct boot_spec **out, ingot_error *e);
void boot_free(struct boot_spec *b);

#endif
