/* The image's kernel modules against the kernel its UKI boots: a module
 * built for another kernel ABI is refused at build, where both are known,
 * not found at boot ("Module nvidia not found"). */
#ifndef INGOT_KABI_CHECK_H
#define INGOT_KABI_CHECK_H

#include "builder/store.h"
#include "builder/tree.h"
#include "builder/uki.h"
#include "recipes/recipe.h"

/* Every module in t under (usr/)lib/modules/ (.ko, .ko.xz, .ko.zst,
 * .ko.gz) must lie in lib/modules/<k's release>/ and carry a vermagic=
 * whose release is k's (what modprobe looks for and the kernel checks),
 * and, when k's own package gave a module, the same vermagic flags as
 * that one (SMP, preempt, modversions...).  Modules of an artifact that
 * is boot.kernel's package itself (the same pin) are the kernel's own
 * and not read.  0 when every module agrees, or the image has none;
 * -EINVAL naming the first module, its vermagic, boot.kernel and its
 * release otherwise (also when k's release is not known: a check not
 * made is not a pass).  r->boot must be set. */
int kabi_check(const struct recipe *r, const struct tree *t, const struct store *s,
	       const struct boot_kernel *k, ingot_error *e);

#endif
