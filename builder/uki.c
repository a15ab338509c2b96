/* Unified Kernel Image assembly (see uki.h). */
#include "builder/uki.h"

#include <archive.h>
#include <inttypes.h>
#include <stdbool.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/authenticode.h"
#include "attest/bootpredict.h"
#include "builder/bootdeb.h"
#include "builder/cpio.h"
#include "builder/image.h"
#include "builder/uki-sign.h"
#include "recipes/recipe.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/le.h"
#include "lib/modinfo.h"
#include "lib/xalloc.h"
#include "recipes/boot.h"

#define STUB_DEB_PATH "usr/lib/systemd/boot/efi/linuxx64.efi.stub"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

static void pad_to(struct strbuf *out, uint64_t align)
{
	size_t want = align_up(out->len, align);
	strbuf_grow(out, want - out->len);
	while (out->len < want)
		strbuf_addch(out, 0);
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Where the stub's data ends, where its sections end in memory: every
 * header field the writer uses is checked here, against the PE spec and
 * the file, before it is used (pe_parse checked that section data lies
 * inside the file).  Room for n more section headers is required. */
static int stub_layout(const struct pe_image *pe, size_t n, uint64_t *va, uint64_t *data_end,
		       ingot_error *e)
{
	uint64_t first_raw = UINT64_MAX, table_end;

	/* PE spec: FileAlignment a power of two from 512 to 64 KiB,
	 * SectionAlignment one at least as large. */
	if (!pow2(pe->file_align) || pe->file_align < 512 || pe->file_align > 65536)
		return ingot_fail(e, -EINVAL, "boot.stub: FileAlignment: expected a power of two from 512 to 65536, "
				  "got %" PRIu32, pe->file_align);
	if (!pow2(pe->sect_align) || pe->sect_align < pe->file_align)
		return ingot_fail(e, -EINVAL, "boot.stub: SectionAlignment: expected a power of two of at least "
				  "FileAlignment (%" PRIu32 "), got %" PRIu32, pe->file_align, pe->sect_align);
	*va = 0;
	*data_end = pe->size_of_headers;
	for (unsigned i = 0; i < pe->nsections; i++) {
		const struct pe_section *x = &pe->sections[i];
		if (x->vaddr + (uint64_t)x->vsize > *va)
			*va = x->vaddr + (uint64_t)x->vsize;
		if (!x->raw_size)
			continue;
		if (x->raw_off < pe->size_of_headers)
			return ingot_fail(e, -EINVAL, "boot.stub: section %s: expected its data after the headers "
					  "(SizeOfHeaders %" PRIu32 "), got offset %" PRIu32, x->name,
					  pe->size_of_headers, x->raw_off);
		if (x->raw_off + (uint64_t)x->raw_size > *data_end)
			*data_end = x->raw_off + (uint64_t)x->raw_size;
		if (x->raw_off < first_raw)
			first_raw = x->raw_off;
	}
	if (first_raw == UINT64_MAX)
		return ingot_fail(e, -EINVAL, "boot.stub: expected sections with file data, got %u sections, none with data",
				  pe->nsections);
	table_end = pe->sections_off + (uint64_t)(pe->nsections + n) * PE_SECTION_HEADER;
	if (table_end > pe->size_of_headers || table_end > first_raw || pe->nsections + n > PE_MAX_SECTIONS)
		return ingot_fail(e, -EINVAL, "boot.stub: expected room for %zu more section headers, got none", n);
	return 0;
}

int uki_assemble(const void *stub, size_t stub_len, const struct uki_section *s, size_t n,
		 struct strbuf *out, ingot_error *e)
{
	const uint8_t *p = stub;
	struct pe_image pe;
	uint64_t va = 0, data_end = 0, shift, vma_align;
	uint8_t *h;
	int r;

	if ((r = pe_parse(stub, stub_len, "boot.stub", &pe, e)) < 0)
		return r;
	if (pe.cert_size)
		return ingot_fail(e, -EINVAL, "boot.stub: expected an unsigned stub, got one with a certificate table "
				  "(sections added after signing void the signature)");
	if ((r = stub_layout(&pe, n, &va, &data_end, e)) < 0)
		return r;
	vma_align = pe.sect_align > UKI_VMA_ALIGN ? pe.sect_align : UKI_VMA_ALIGN;

	strbuf_add(out, p, data_end);
	pad_to(out, pe.file_align);
	for (size_t i = 0; i < n; i++) {
		uint8_t hdr[PE_SECTION_HEADER] = { 0 };
		size_t name_len = strlen(s[i].name);
		if (name_len > 8 || s[i].len > UINT32_MAX / 2 ||
		    out->len + align_up(s[i].len, pe.file_align) > UINT32_MAX)
			return ingot_fail(e, -EINVAL, "uki: section %s: expected a name of at most 8 characters and "
					  "an image under 4 GiB", s[i].name);
		va = align_up(va, vma_align);
		memcpy(hdr, s[i].name, name_len);
		le_put(hdr + 8, s[i].len, 4);
		le_put(hdr + 12, va, 4);
		le_put(hdr + 16, align_up(s[i].len, pe.file_align), 4);
		le_put(hdr + 20, out->len, 4);
		le_put(hdr + 36, UKI_SECTION_FLAGS, 4);
		/* Inside the copied headers: stub_layout checked the table's room. */
		h = (uint8_t *)out->buf + pe.sections_off + (pe.nsections + i) * PE_SECTION_HEADER;
		memcpy(h, hdr, sizeof(hdr));
		strbuf_add(out, s[i].data, s[i].len);
		pad_to(out, pe.file_align);
		va += s[i].len;
	}
	shift = out->len - data_end;
	if (va > UINT32_MAX || out->len + (stub_len - data_end) > UINT32_MAX ||
	    (pe.symtab_off >= data_end && pe.symtab_off + shift > UINT32_MAX))
		return ingot_fail(e, -EFBIG, "uki: expected an image under 4 GiB, got %" PRIu64 " bytes",
				  va > out->len ? va : (uint64_t)out->len);
	/* The stub's trailing bytes (its COFF symbol table) follow the new
	 * sections, as objcopy leaves them; Authenticode covers them there. */
	strbuf_add(out, p + data_end, stub_len - data_end);
	/* A signer pads the file to 8 bytes before hashing (the certificate
	 * table is 8-aligned): padded, the digest firmware measures for the
	 * unsigned image is the one sbsign signs. */
	pad_to(out, 8);
	h = (uint8_t *)out->buf;
	le_put(h + pe.coff_off + 2, pe.nsections + n, 2);
	if (pe.symtab_off >= data_end)
		le_put(h + pe.coff_off + 8, pe.symtab_off + shift, 4);
	le_put(h + pe.opt_off + 56, align_up(va, pe.sect_align), 4);
	le_put(h + pe.checksum_off, pe_checksum(h, out->len, pe.checksum_off), 4);
	return 0;
}

void uki_cmdline(const char *name, const struct verity_info *vi, const char *extra, struct strbuf *out)
{
	char root[SHA256_HEX_LEN + 1], salt[2 * sizeof(vi->salt) + 1];

	hex_encode(vi->root_hash, 32, root);
	hex_encode(vi->salt, vi->salt_len, salt);
	strbuf_addf(out, BOOT_KEY_IMAGE "%s " BOOT_KEY_ROOT "%s " BOOT_KEY_SALT "%s " BOOT_KEY_BLOCKS "%" PRIu64, name, root, salt,
		    vi->data_blocks);
	if (extra && *extra)
		strbuf_addf(out, " %s", extra);
}

/* --- inputs ------------------------------------------------------------- */

struct boot_parts {
	const struct boot_spec *b;
	struct blob init;
	struct blob vmlinuz, stub;      /* the kernel and stub themselves */
	struct blob *modules;           /* b->n_modules, in recipe order */
	char vmlinuz_release[72];       /* RELEASE of the package's boot/vmlinuz-RELEASE */
	size_t budget;                  /* bytes the inputs may still take (BOOT_HELD_MAX) */
};

static void boot_parts_free(struct boot_parts *bp)
{
	blob_release(&bp->init);
	blob_release(&bp->vmlinuz);
	blob_release(&bp->stub);
	for (size_t i = 0; bp->modules && i < bp->b->n_modules; i++)
		blob_release(&bp->modules[i]);
	free(bp->modules);
}

static struct blob *pick_kernel(void *ctx, const char *path)
{
	struct boot_parts *bp = ctx;
	const char *base = strrchr(path, '/');
	size_t len;

	if (!strncmp(path, "boot/vmlinuz-", 13)) {
		snprintf(bp->vmlinuz_release, sizeof(bp->vmlinuz_release), "%s", path + 13);
		return &bp->vmlinuz;
	}
	/* Debian 13 ships merged-/usr packages and xz-compressed modules. */
	if (!strncmp(path, "usr/", 4))
		path += 4;
	if (strncmp(path, "lib/modules/", 12) || !base || !strstr(path, "/kernel/"))
		return NULL;
	base++;
	len = strlen(base);
	if (len > 6 && (!strcmp(base + len - 3, ".xz") || !strcmp(base + len - 4, ".zst")))
		len -= base[len - 1] == 'z' ? 3 : 4;
	if (len < 4 || strncmp(base + len - 3, ".ko", 3))
		return NULL;
	for (size_t i = 0; i < bp->b->n_modules; i++)
		if (boot_module_eq(bp->b->modules[i], base, len - 3))
			return &bp->modules[i];
	return NULL;
}

/* A compressed module (.ko.xz/.ko.zst, magic-detected) becomes the plain
 * ELF the init loads and the order check reads: the initramfs holds no
 * decompressor, and the UKI's bytes follow from the package's alone. */
static int module_decompress(struct blob *m, const char *name, ingot_error *e)
{
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 }, zst[] = { 0x28, 0xb5, 0x2f, 0xfd };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct archive_entry *ent;
	struct archive *a;
	char buf[65536];
	la_ssize_t n = 0;
	int r = 0;

	if ((m->len < sizeof(xz) || memcmp(m->data, xz, sizeof(xz))) &&
	    (m->len < sizeof(zst) || memcmp(m->data, zst, sizeof(zst))))
		return 0;
	if (!(a = archive_read_new()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_memory(a, m->data, m->len) != ARCHIVE_OK ||
	    archive_read_next_header(a, &ent) != ARCHIVE_OK)
		r = ingot_fail(e, -EINVAL, "boot.modules: %s: cannot decompress: %s", name, archive_error_string(a));
	while (r == 0 && (n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		if (out.len + (size_t)n > MODINFO_MAX_BYTES)
			r = ingot_fail(e, -EFBIG, "boot.modules: %s: expected at most %zu bytes decompressed, got more",
				       name, MODINFO_MAX_BYTES);
		else
			strbuf_add(&out, buf, (size_t)n);
	}
	if (r == 0 && n < 0)
		r = ingot_fail(e, -EINVAL, "boot.modules: %s: cannot decompress: %s", name, archive_error_string(a));
	archive_read_free(a);
	if (r < 0)
		return r;
	blob_release(m);
	m->data = strbuf_detach(&out, &m->len);
	return 0;
}

static struct blob *pick_stub(void *ctx, const char *path)
{
	return strcmp(path, STUB_DEB_PATH) ? NULL : &((struct boot_parts *)ctx)->stub;
}

/* Every module's depends= must be loaded before it. */
static int check_module_order(const struct boot_spec *b, const struct blob *mods, ingot_error *e)
{
	for (size_t i = 0; i < b->n_modules; i++) {
		struct modinfo mi = { 0 };
		const char *dep;
		int r = modinfo_parse(mods[i].data, mods[i].len, b->modules[i], &mi, e);
		if (r < 0)
			return ingot_prefix(e, "boot.modules[%zu]", i);
		dep = modinfo_get(&mi, "depends");
		while (r >= 0 && dep && *dep) {
			size_t k = strcspn(dep, ","), j;
			for (j = 0; j < i && !boot_module_eq(b->modules[j], dep, k); j++)
				;
			if (j == i)
				r = ingot_fail(e, -EINVAL, "boot.modules[%zu]: %s depends on %.*s: expected %.*s listed before it",
					       i, b->modules[i], (int)k, dep, (int)k, dep);
			dep += k + (dep[k] == ',');
		}
		modinfo_free(&mi);
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_parts(const struct boot_spec *b, struct boot_parts *bp, ingot_error *e)
{
	int kdeb = 0, sdeb = 0, r = 0;

	bp->b = b;
	bp->budget = BOOT_HELD_MAX;
	bp->modules = xcalloc(b->n_modules + 1, sizeof(*bp->modules));
	/* Packages are streamed: only the files picked are held. */
	if ((kdeb = boot_input_take(&b->kernel, "boot.kernel", pick_kernel, bp, &bp->budget, &bp->vmlinuz, e)) < 0 ||
	    (sdeb = boot_input_take(&b->stub, "boot.stub", pick_stub, bp, &bp->budget, &bp->stub, e)) < 0 ||
	    (r = boot_input_read(&b->init, "boot.init", &bp->budget, &bp->init, e)) < 0)
		return kdeb < 0 ? kdeb : sdeb < 0 ? sdeb : r;
	if (kdeb && !bp->vmlinuz.data)
		return ingot_fail(e, -EINVAL, "boot.kernel: %s: expected a boot/vmlinuz-* file in the package, got none",
				  b->kernel.path);
	if (!kdeb && b->n_modules)
		return ingot_fail(e, -EINVAL, "boot.modules: expected none with a vmlinuz file as boot.kernel (modules come from a linux-image .deb)");
	for (size_t i = 0; i < b->n_modules; i++) {
		if (!bp->modules[i].data)
			return ingot_fail(e, -EINVAL, "boot.modules[%zu]: expected %s.ko in %s, got none", i,
					  b->modules[i], b->kernel.path);
		if ((r = module_decompress(&bp->modules[i], b->modules[i], e)) < 0)
			return r;
	}
	if ((r = check_module_order(b, bp->modules, e)) < 0)
		return r;
	if (sdeb && !bp->stub.data)
		return ingot_fail(e, -EINVAL, "boot.stub: %s: expected /%s in the package, got none", b->stub.path,
				  STUB_DEB_PATH);
	return 0;
}

/* /init, mount points, and lib/modules/NN-NAME.ko: the init loads them
 * in name order, which is the recipe's order. */
static int make_initrd(const struct boot_parts *bp, uint32_t mtime, struct strbuf *out, ingot_error *e)
{
	static const char *const dirs[] = { "dev", "lib", "lib/modules", "proc", "sys", "sysroot", "tmp" };
	size_t n = ARRAY_SIZE(dirs) + 1 + bp->b->n_modules, k = 0;
	_cleanup_free_ struct cpio_entry *v = xcalloc(n, sizeof(*v));
	_cleanup_free_ char *names = xcalloc(bp->b->n_modules + 1, 80);

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		v[k++] = (struct cpio_entry){ dirs[i], S_IFDIR | 0755, NULL, 0 };
	v[k++] = (struct cpio_entry){ "init", S_IFREG | 0755, bp->init.data, bp->init.len };
	for (size_t i = 0; i < bp->b->n_modules; i++) {
		char *nm = names + i * 80;
		snprintf(nm, 80, "lib/modules/%02zu-%s.ko", i, bp->b->modules[i]);
		v[k++] = (struct cpio_entry){ nm, S_IFREG | 0644, bp->modules[i].data, bp->modules[i].len };
	}
	return cpio_write(v, k, mtime, out, e);
}

/* --- the manifest's "boot" object ---------------------------------------- */

static json_t *hex_str(const uint8_t *d, size_t len)
{
	char hex[2 * 64 + 1];
	hex_encode(d, len, hex);
	return json_string(hex);
}

/* The source's base name, as the manifest's artifacts carry theirs: the
 * manifest must not depend on where the build machine keeps its inputs. */
static json_t *input_json(const struct boot_input *in)
{
	const char *base = strrchr(in->source, '/');
	return json_pack("{s:s,s:o}", "source", base ? base + 1 : in->source, "sha256", hex_str(in->sha256, 32));
}

static int boot_json(const struct recipe *r, const struct verity_info *vi, const struct boot_parts *bp,
		     const char *efi_name, const struct strbuf *efi, const struct uki_part *parts, size_t nparts,
		     const char *cmdline, const uint8_t *signer_cert_sha256, json_t **out, ingot_error *e)
{
	uint8_t efi_sha[32], efi_auth[32], linux_auth[32];
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	json_t *mods = json_array(), *o;
	int rc;

	sha256_buf(efi->buf, efi->len, efi_sha);
	if ((rc = authenticode_digest(efi->buf, efi->len, efi_name, EVP_sha256(), efi_auth, e)) < 0 ||
	    (rc = authenticode_digest(bp->vmlinuz.data, bp->vmlinuz.len, "boot.kernel vmlinuz", EVP_sha256(),
				      linux_auth, e)) < 0) {
		json_decref(mods);
		return rc;
	}
	if (boot_image_event(r->name, vi->root_hash, &ev) < 0) {
		json_decref(mods);
		return ingot_fail(e, -EINVAL, "boot: recipe name \"%s\" cannot be measured", r->name);
	}
	for (size_t i = 0; mods && i < r->boot->n_modules; i++)
		json_array_append_new(mods, json_string(r->boot->modules[i]));
	o = json_pack("{s:{s:s,s:I,s:o,s:o},s:o,s:o,s:o,s:o,s:s,s:o,s:{s:o},s:{s:s,s:o}}",
		      "uki", "file", efi_name, "size", (json_int_t)efi->len, "sha256", hex_str(efi_sha, 32),
		      "authenticode_sha256", hex_str(efi_auth, 32),
		      "kernel", input_json(&r->boot->kernel), "stub", input_json(&r->boot->stub),
		      "init", input_json(&r->boot->init), "modules", mods, "cmdline", cmdline,
		      "linux_authenticode_sha256", hex_str(linux_auth, 32),
		      "pcr11", "predicted", boot_predict_pcr11_json(parts, nparts),
		      "pcr15", "event_data", ev.buf, "predicted", boot_predict_single_event(ev.buf, ev.len));
	if (o && signer_cert_sha256 &&
	    json_object_set_new(o, "secure_boot", json_pack("{s:o}", "signer_cert_sha256", hex_str(signer_cert_sha256, 32))))
		json_decref(o), o = NULL;
	if (!o)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*out = o;
	return 0;
}

#define SB_INPUT_MAX (1u << 20)

/* The signing stage (recipe boot.secure-boot): the pinned key and
 * certificate, read here and released at once. */
static int sign_stage(const struct boot_spec *b, struct strbuf *efi, uint8_t cert_sha256[32], ingot_error *e)
{
	struct blob key = { 0 }, cert = { 0 };
	size_t budget = SB_INPUT_MAX;   /* a key and a certificate: small */
	int rc;
	if ((rc = boot_input_read(&b->sb_key, "boot.secure-boot.key", &budget, &key, e)) >= 0 &&
	    (rc = boot_input_read(&b->sb_cert, "boot.secure-boot.cert", &budget, &cert, e)) >= 0)
		rc = uki_sign(efi, key.data, key.len, cert.data, cert.len, "boot.secure-boot", cert_sha256, e);
	if (key.data)
		OPENSSL_cleanse(key.data, key.len);
	blob_release(&key);
	blob_release(&cert);
	return rc;
}

static void kernel_of(const struct boot_parts *bp, struct boot_kernel *k)
{
	struct modinfo mi = { 0 };
	ingot_error ignored = { 0 };
	const char *vm;

	memset(k, 0, sizeof(*k));
	if (bzimage_release(bp->vmlinuz.data, bp->vmlinuz.len, k->release, sizeof(k->release)) < 0 &&
	    modinfo_vermagic_release(bp->vmlinuz_release, k->release, sizeof(k->release)) < 0)
		k->release[0] = '\0';
	/* load_parts parsed every module's .modinfo already (the order check) */
	if (bp->b->n_modules && modinfo_parse(bp->modules[0].data, bp->modules[0].len, bp->b->modules[0], &mi,
					      &ignored) == 0 && (vm = modinfo_get(&mi, "vermagic")))
		snprintf(k->vermagic, sizeof(k->vermagic), "%s", vm);
	modinfo_free(&mi);
}

int uki_build(const struct recipe *r, const struct verity_info *vi, const char *efi_name,
	      struct strbuf *efi, json_t **boot, struct boot_kernel *kernel, ingot_error *e)
{
	struct boot_parts bp = { 0 };
	_cleanup_strbuf_ struct strbuf initrd = STRBUF_INIT, cmdline = STRBUF_INIT, osrel = STRBUF_INIT;
	uint8_t signer[32];
	int rc;

	*boot = NULL;
	if ((rc = load_parts(r->boot, &bp, e)) < 0 || (rc = make_initrd(&bp, (uint32_t)r->epoch, &initrd, e)) < 0)
		goto out;
	if (kernel)
		kernel_of(&bp, kernel);
	uki_cmdline(r->name, vi, r->boot->cmdline, &cmdline);
	strbuf_addf(&osrel, "ID=ingot\nIMAGE_ID=%s\nIMAGE_VERSION=%s\nPRETTY_NAME=\"%s %s (ingot)\"\n",
		    r->name, r->version, r->name, r->version);
	{
		/* File order as boot-notes.md gives it; systemd-stub measures
		 * in its own order (.linux .osrel .cmdline .initrd). */
		const struct uki_section secs[] = {
			{ ".osrel", osrel.buf, osrel.len }, { ".cmdline", cmdline.buf, cmdline.len },
			{ ".linux", bp.vmlinuz.data, bp.vmlinuz.len }, { ".initrd", initrd.buf, initrd.len },
		};
		const struct uki_part parts[] = {
			{ ".linux", bp.vmlinuz.data, bp.vmlinuz.len }, { ".osrel", osrel.buf, osrel.len },
			{ ".cmdline", cmdline.buf, cmdline.len }, { ".initrd", initrd.buf, initrd.len },
		};
		if ((rc = uki_assemble(bp.stub.data, bp.stub.len, secs, ARRAY_SIZE(secs), efi, e)) < 0 ||
		    (r->boot->secure_boot && (rc = sign_stage(r->boot, efi, signer, e)) < 0))
			goto out;
		rc = boot_json(r, vi, &bp, efi_name, efi, parts, ARRAY_SIZE(parts), cmdline.buf,
			       r->boot->secure_boot ? signer : NULL, boot, e);
	}
out:
	boot_parts_free(&bp);
	return rc;
}
