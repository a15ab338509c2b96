/* kabi_check: see kabi-check.h.  Module versions (__versions CRCs) are
 * not compared: the kernel's CRCs are in its Module.symvers, which a
 * linux-image package does not carry (linux-headers does), and in the
 * compressed vmlinux; the release and the vermagic flags are what the
 * pinned inputs show. */
#include "builder/kabi-check.h"

#include <stdio.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/modinfo.h"
#include "recipes/boot.h"

/* A module file name: NAME.ko, NAME.ko.xz, NAME.ko.zst, NAME.ko.gz. */
static bool is_module(const char *path)
{
	static const char *const ends[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t m = strlen(ends[i]);
		if (n > m && !strcmp(path + n - m, ends[i]) && path[n - m - 1] != '/')
			return true;
	}
	return false;
}

/* The <release> directory a module lies in: path after (usr/)lib/modules/,
 * up to the next '/'; NULL when the path is not under it. */
static const char *module_dir(const char *path, size_t *len)
{
	const char *p = path;
	const char *slash;

	if (!strncmp(p, "usr/", 4))
		p += 4;
	if (strncmp(p, "lib/modules/", 12))
		return NULL;
	p += 12;
	if (!(slash = strchr(p, '/')))
		return NULL;
	*len = (size_t)(slash - p);
	return p;
}

/* The flags after the release ("SMP preempt mod_unload modversions "). */
static const char *flags_of(const char *vermagic)
{
	return vermagic + strcspn(vermagic, " ");
}

static int check_one(const struct tree_entry *te, const struct store *s, const struct boot_spec *b,
		     const struct boot_kernel *k, const char *dir, size_t dlen, ingot_error *e)
{
	_cleanup_free_ char *blob = NULL;
	struct modinfo mi;
	const char *vm;
	char rel[72];
	int r;

	if ((r = store_content_blob(s, &te->loc, te->sha256, te->size, &blob, e)) < 0)
		return r;
	if ((r = modinfo_load(blob, &mi, e)) < 0)
		return ingot_prefix(e, "kernel ABI: /%s", te->path);
	vm = modinfo_get(&mi, "vermagic");
	if (!vm || modinfo_vermagic_release(vm, rel, sizeof(rel)) < 0)
		r = ingot_fail(e, -EINVAL, "kernel ABI: /%s: expected a vermagic= naming a kernel release, got '%.80s' "
			       "(the kernel loads no module without one)", te->path, vm ? vm : "(none)");
	else if (strcmp(rel, k->release))
		r = ingot_fail(e, -EINVAL, "kernel ABI: /%s has vermagic '%s' (kernel %s), but boot.kernel %s is kernel %s: "
			       "it would not load the module", te->path, vm, rel, b->kernel.source, k->release);
	else if (*k->vermagic && strcmp(flags_of(vm), flags_of(k->vermagic)))
		r = ingot_fail(e, -EINVAL, "kernel ABI: /%s has vermagic '%s', but boot.kernel %s's own modules have '%s' "
			       "(%s): it would not load the module", te->path, vm, b->kernel.source, k->vermagic,
			       b->modules[0]);
	else if (dlen != strlen(k->release) || strncmp(dir, k->release, dlen))
		r = ingot_fail(e, -EINVAL, "kernel ABI: /%s: expected it under /lib/modules/%s/, where boot.kernel %s "
			       "(kernel %s) looks for modules, got /lib/modules/%.*s/", te->path, k->release,
			       b->kernel.source, k->release, (int)dlen, dir);
	modinfo_free(&mi);
	return r;
}

/* Is te from an artifact pinned to boot.kernel's own bytes? */
static bool kernel_own(const struct recipe *r, const struct tree_entry *te)
{
	for (size_t i = 0; te->origin && i < r->n_artifacts; i++)
		if (!strcmp(r->artifacts[i].name, te->origin))
			return !memcmp(r->artifacts[i].sha256, r->boot->kernel.sha256, 32);
	return false;
}

int kabi_check(const struct recipe *r, const struct tree *t, const struct store *s,
	       const struct boot_kernel *k, ingot_error *e)
{
	const struct boot_spec *b = r->boot;

	for (size_t i = 0; i < t->n; i++) {
		const struct tree_entry *te = &t->v[i];
		const char *dir;
		size_t dlen;
		int r2;

		if (te->type != TREE_FILE || !(dir = module_dir(te->path, &dlen)) || !is_module(te->path) ||
		    kernel_own(r, te))
			continue;
		if (!*k->release)
			return ingot_fail(e, -EINVAL, "kernel ABI: /%s: cannot tell boot.kernel %s's release (no bzImage "
					  "header, no boot/vmlinuz-RELEASE in a package): check not made",
					  te->path, b->kernel.source);
		if ((r2 = check_one(te, s, b, k, dir, dlen, e)) < 0)
			return r2;
	}
	return 0;
}
