#include "keys/key.h"

#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "lib/cleanup.h"
#include "lib/ecdsa.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

static void bio_freep(BIO **b) { if (*b) BIO_free(*b); }
static void pkey_freep(EVP_PKEY **k) { if (*k) EVP_PKEY_free(*k); }
static void mdctx_freep(EVP_MD_CTX **c) { if (*c) EVP_MD_CTX_free(*c); }
#define _cleanup_bio_ _cleanup_(bio_freep)
#define _cleanup_pkey_ _cleanup_(pkey_freep)
#define _cleanup_mdctx_ _cleanup_(mdctx_freep)

/* The first OpenSSL error as text, for messages; clears the queue. */
static const char *ossl_reason(char *buf, size_t len)
{
	unsigned long err = ERR_peek_last_error();
	if (!err)
		snprintf(buf, len, "unknown OpenSSL error");
	else
		ERR_error_string_n(err, buf, len);
	ERR_clear_error();
	return buf;
}

const char *key_type_name(enum key_type t)
{
	return t == KEY_P256 ? "p256" : "ed25519";
}

int key_type_from_name(const char *s, enum key_type *out)
{
	if (!strcmp(s, "ed25519"))
		*out = KEY_ED25519;
	else if (!strcmp(s, "p256") || !strcmp(s, "ecdsa-p256"))
		*out = KEY_P256;
	else
		return -EINVAL;
	return 0;
}

int key_type_of(EVP_PKEY *pkey, const char *what, enum key_type *out, ingot_error *e)
{
	if (EVP_PKEY_is_a(pkey, "ED25519")) {
		*out = KEY_ED25519;
		return 0;
	}
	if (EVP_PKEY_is_a(pkey, "EC")) {
		char group[64] = "";
		size_t glen = 0;
		if (EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
						   sizeof(group), &glen) == 1 &&
		    (!strcmp(group, "prime256v1") || !strcmp(group, "P-256"))) {
			*out = KEY_P256;
			return 0;
		}
		ERR_clear_error();
		return ingot_fail(e, -EINVAL, "%s: expected an Ed25519 or ECDSA P-256 key, got EC curve %s",
				  what, group[0] ? group : "(unknown)");
	}
	const char *tn = EVP_PKEY_get0_type_name(pkey);
	return ingot_fail(e, -EINVAL, "%s: expected an Ed25519 or ECDSA P-256 key, got %s", what,
			  tn ? tn : "an unknown key type");
}

static void bn_freep(BIGNUM **b) { BN_free(*b); }
static void pctx_freep(EVP_PKEY_CTX **c) { EVP_PKEY_CTX_free(*c); }

/* One key, one encoding: a P-256 public key as the named curve with an
 * uncompressed point, however it was written (compressed point, explicit
 * curve parameters).  Key ids, keyrings and signature counting use this
 * form, so one key can never pass for two signers. */
static int ec_canonical(EVP_PKEY *pkey, EVP_PKEY **out, ingot_error *e)
{
	_cleanup_(bn_freep) BIGNUM *x = NULL;
	_cleanup_(bn_freep) BIGNUM *y = NULL;
	_cleanup_(pctx_freep) EVP_PKEY_CTX *ctx = NULL;
	uint8_t pt[65];
	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0),
		OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt)),
		OSSL_PARAM_END,
	};

	*out = NULL;
	pt[0] = 0x04;   /* uncompressed: 04 || X || Y */
	if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_EC_PUB_X, &x) != 1 ||
	    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_EC_PUB_Y, &y) != 1 ||
	    BN_bn2binpad(x, pt + 1, 32) != 32 || BN_bn2binpad(y, pt + 33, 32) != 32 ||
	    !(ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) ||
	    EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, out, EVP_PKEY_PUBLIC_KEY, params) != 1) {
		ERR_clear_error();
		return ingot_fail(e, -EINVAL, "cannot normalise the P-256 public key");
	}
	return 0;
}

int key_id(EVP_PKEY *pkey, char out[KEYID_HEX_LEN + 1], ingot_error *e)
{
	_cleanup_pkey_ EVP_PKEY *canon = NULL;
	unsigned char *der = NULL;
	uint8_t md[SHA256_LEN];
	int n;

	if (EVP_PKEY_is_a(pkey, "EC")) {
		if (ec_canonical(pkey, &canon, e) < 0)
			return -EINVAL;
		pkey = canon;
	}
	n = i2d_PUBKEY(pkey, &der);
	if (n <= 0) {
		ERR_clear_error();
		return ingot_fail(e, -EINVAL, "cannot encode public key as SubjectPublicKeyInfo");
	}
	sha256_buf(der, (size_t)n, md);
	OPENSSL_free(der);
	hex_encode(md, sizeof(md), out);
	return 0;
}

char *public_key_pem(EVP_PKEY *pkey)
{
	_cleanup_bio_ BIO *b = BIO_new(BIO_s_mem());
	char *data, *s;
	long n;

	if (!b || PEM_write_bio_PUBKEY(b, pkey) != 1) {
		ERR_clear_error();
		return NULL;
	}
	n = BIO_get_mem_data(b, &data);
	if (n <= 0)
		return NULL;
	s = xmalloc((size_t)n + 1);
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static int path_exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

int key_generate(enum key_type type, const char *prefix, const char *passphrase,
		 char keyid[KEYID_HEX_LEN + 1], ingot_error *e)
{
	_cleanup_free_ char *keypath = NULL, *pubpath = NULL, *pub = NULL;
	_cleanup_pkey_ EVP_PKEY *pkey = NULL;
	_cleanup_bio_ BIO *b = NULL;
	char why[256], id[KEYID_HEX_LEN + 1];
	char *data;
	long n;
	int r;

	keypath = xasprintf("%s.key", prefix);
	pubpath = xasprintf("%s.pub", prefix);
	if (path_exists(keypath))
		return ingot_fail(e, -EEXIST, "%s: already exists, refusing to overwrite a key", keypath);
	if (path_exists(pubpath))
		return ingot_fail(e, -EEXIST, "%s: already exists, refusing to overwrite a key", pubpath);

	pkey = type == KEY_P256 ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")
				: EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!pkey)
		return ingot_fail(e, -EIO, "cannot generate %s key: %s", key_type_name(type),
				  ossl_reason(why, sizeof(why)));
	r = key_id(pkey, id, e);
	if (r < 0)
		return r;

	/* Secure-memory BIO: its buffer is cleansed when freed. */
	b = BIO_new(BIO_s_secmem());
	if (!b)
		return ingot_fail(e, -ENOMEM, "out of memory");
	const EVP_CIPHER *enc = passphrase && *passphrase ? EVP_aes_256_cbc() : NULL;
	if (PEM_write_bio_PKCS8PrivateKey(b, pkey, enc, enc ? (char *)passphrase : NULL,
					  enc ? (int)strlen(passphrase) : 0, NULL, NULL) != 1)
		return ingot_fail(e, -EIO, "%s: cannot encode private key: %s", keypath,
				  ossl_reason(why, sizeof(why)));
	n = BIO_get_mem_data(b, &data);
	if (n <= 0)
		return ingot_fail(e, -EIO, "%s: cannot encode private key", keypath);
	pub = public_key_pem(pkey);
	if (!pub)
		return ingot_fail(e, -EIO, "%s: cannot encode public key", pubpath);

	r = write_file_atomic(keypath, data, (size_t)n, 0600, e);
	if (r < 0)
		return r;
	r = write_file_atomic(pubpath, pub, strlen(pub), 0644, e);
	if (r < 0) {
		unlink(keypath);
		return r;
	}
	if (keyid)
		memcpy(keyid, id, sizeof(id));
	return 0;
}

struct pass_ctx {
	const char *pass;
	int asked;
};

/* Never prompt: ingot runs unattended; a missing passphrase is an error. */
static int pass_cb(char *buf, int size, int rwflag, void *u)
{
	struct pass_ctx *pc = u;
	(void)rwflag;
	pc->asked = 1;
	if (!pc->pass)
		return -1;
	size_t n = strlen(pc->pass);
	if (n > (size_t)size)
		return -1;
	memcpy(buf, pc->pass, n);
	return (int)n;
}

/* Read a key file into secure memory (wiped on free). */
static int read_secret(int fd, const char *path, char **out, size_t *len, ingot_error *e)
{
	char *buf = OPENSSL_secure_malloc(KEY_FILE_MAX + 1);
	size_t n = 0;
	int r;

	if (!buf)
		return ingot_fail(e, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t got = read(fd, buf + n, KEY_FILE_MAX + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = ingot_fail(e, -errno, "%s: read failed: %s", path, strerror(errno));
			OPENSSL_secure_clear_free(buf, KEY_FILE_MAX + 1);
			return r;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > KEY_FILE_MAX) {
			OPENSSL_secure_clear_free(buf, KEY_FILE_MAX + 1);
			return ingot_fail(e, -EFBIG, "%s: private key: file too large (limit %u bytes)",
					  path, KEY_FILE_MAX);
		}
	}
	*out = buf;
	*len = n;
	return 0;
}

int signing_key_load(const char *path, struct signing_key **out, ingot_error *e)
{
	return signing_key_load_pass(path, getenv(KEY_PASSPHRASE_ENV), out, e);
}

int signing_key_load_pass(const char *path, const char *passphrase, struct signing_key **out,
			  ingot_error *e)
{
	_cleanup_close_ int fd = -1;
	_cleanup_bio_ BIO *b = NULL;
	_cleanup_pkey_ EVP_PKEY *pkey = NULL;
	struct pass_ctx pc = { passphrase, 0 };
	struct signing_key *k;
	struct stat st;
	char *buf = NULL;
	char why[256];
	size_t n = 0;
	int r;

	/* a FIFO or device is refused without blocking on it */
	if ((fd = open_regular(path, 0, &st, e)) == -EINVAL || fd == -EISDIR)
		return ingot_fail(e, -EINVAL, "%s: private key: expected a regular file, got a %s", path,
				  file_type_name(st.st_mode));
	if (fd < 0)
		return ingot_fail(e, fd, "%s: cannot open private key: %s", path, strerror(-fd));
	if (st.st_mode & 077)
		return ingot_fail(e, -EPERM,
				  "%s: private key: mode %04o gives group/other access, expected 0600 or "
				  "stricter (chmod 600 %s)", path, (unsigned)(st.st_mode & 07777), path);
	if ((uint64_t)st.st_size > KEY_FILE_MAX)
		return ingot_fail(e, -EFBIG, "%s: private key: file too large (%llu bytes, limit %u)",
				  path, (unsigned long long)st.st_size, KEY_FILE_MAX);

	/* Before any key byte is in memory: no core dumps, no ptrace. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ingot_fail(e, -errno, "%s: cannot make the process non-dumpable: %s", path,
				  strerror(errno));

	r = read_secret(fd, path, &buf, &n, e);
	if (r < 0)
		return r;
	b = BIO_new_mem_buf(buf, (int)n);
	if (b)
		pkey = PEM_read_bio_PrivateKey(b, NULL, pass_cb, &pc);
	BIO_free(b);
	b = NULL;
	OPENSSL_secure_clear_free(buf, KEY_FILE_MAX + 1);
	if (!pkey) {
		if (pc.asked && !passphrase)
			r = ingot_fail(e, -EACCES, "%s: private key is encrypted: no passphrase given "
				       "(use --passphrase-fd or %s)", path, KEY_PASSPHRASE_ENV);
		else if (pc.asked)
			r = ingot_fail(e, -EACCES, "%s: cannot decrypt private key: wrong passphrase", path);
		else
			r = ingot_fail(e, -EINVAL, "%s: expected a PEM private key (PKCS#8): %s", path,
				       ossl_reason(why, sizeof(why)));
		ERR_clear_error();
		return r;
	}
	k = xcalloc(1, sizeof(*k));
	k->path = xstrdup(path);
	r = key_type_of(pkey, path, &k->type, e);
	if (r == 0)
		r = key_id(pkey, k->keyid, e);
	k->pkey = TAKE_PTR(pkey);
	if (r < 0) {
		signing_key_free(k);
		return r;
	}
	*out = k;
	return 0;
}

void signing_key_free(struct signing_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);   /* OpenSSL cleanses private key material */
	free(k->path);
	free(k);
}

int signing_key_sign(const struct signing_key *k, const void *msg, size_t len, uint8_t **sig,
		     size_t *siglen, ingot_error *e)
{
	_cleanup_mdctx_ EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const EVP_MD *md = k->type == KEY_P256 ? EVP_sha256() : NULL;
	size_t n = 0;
	uint8_t *s;
	char why[256];

	if (!ctx)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (EVP_DigestSignInit(ctx, NULL, md, NULL, k->pkey) != 1 ||
	    EVP_DigestSign(ctx, NULL, &n, msg, len) != 1)
		return ingot_fail(e, -EIO, "%s: cannot sign: %s", k->path, ossl_reason(why, sizeof(why)));
	s = xmalloc(n);
	if (EVP_DigestSign(ctx, s, &n, msg, len) != 1) {
		free(s);
		return ingot_fail(e, -EIO, "%s: cannot sign: %s", k->path, ossl_reason(why, sizeof(why)));
	}
	*sig = s;
	*siglen = n;
	return 0;
}

/* An ECDSA P-256 signature in the raw r || s form (IEEE P1363, 64 bytes:
 * what the DSSE reference implementation and WebCrypto write) as the DER
 * SEQUENCE OpenSSL verifies; *der is malloc'd.  -EINVAL if not 64 bytes. */
static int p256_raw_to_der(const uint8_t *sig, size_t siglen, uint8_t **der, size_t *der_len)
{
	if (siglen != 64)
		return -EINVAL;
	return ecdsa_rs_to_der(sig, 32, sig + 32, 32, der, der_len);
}

int key_verify(EVP_PKEY *pkey, const void *msg, size_t len, const uint8_t *sig, size_t siglen)
{
	_cleanup_mdctx_ EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	_cleanup_free_ uint8_t *der = NULL;
	const EVP_MD *md = EVP_PKEY_is_a(pkey, "EC") ? EVP_sha256() : NULL;
	size_t der_len;
	int ok;

	if (!ctx)
		return 0;
	ok = EVP_DigestVerifyInit(ctx, NULL, md, NULL, pkey) == 1 &&
	     EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;
	/* 64 bytes is r || s, or (rarely: r and s 58 bytes together) DER:
	 * either reading that verifies is the key's signature. */
	if (!ok && md && p256_raw_to_der(sig, siglen, &der, &der_len) == 0)
		ok = EVP_DigestVerifyInit(ctx, NULL, md, NULL, pkey) == 1 &&
		     EVP_DigestVerify(ctx, der, der_len, msg, len) == 1;
	ERR_clear_error();
	return ok;
}

int public_key_from_pem(const char *name, const char *pem, size_t len, struct public_key **out,
			ingot_error *e)
{
	_cleanup_bio_ BIO *b = NULL;
	_cleanup_pkey_ EVP_PKEY *pkey = NULL;
	struct public_key *k;
	enum key_type type;
	char why[256];
	int r;

	if (len > KEY_FILE_MAX)
		return ingot_fail(e, -EFBIG, "%s: public key too large (%zu bytes, limit %u)", name,
				  len, KEY_FILE_MAX);
	b = BIO_new_mem_buf(pem, (int)len);
	if (!b)
		return ingot_fail(e, -ENOMEM, "out of memory");
	pkey = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	if (!pkey)
		return ingot_fail(e, -EINVAL, "%s: expected a PEM public key (SubjectPublicKeyInfo): %s",
				  name, ossl_reason(why, sizeof(why)));
	r = key_type_of(pkey, name, &type, e);
	if (r < 0)
		return r;
	if (type == KEY_P256) {   /* keep (and write back) the one encoding */
		EVP_PKEY *canon;
		if (ec_canonical(pkey, &canon, e) < 0)
			return ingot_prefix(e, "%s", name);
		EVP_PKEY_free(pkey);
		pkey = canon;
	}
	k = xcalloc(1, sizeof(*k));
	k->type = type;
	r = key_id(pkey, k->keyid, e);
	if (r < 0) {
		free(k);
		return r;
	}
	k->pkey = TAKE_PTR(pkey);
	*out = k;
	return 0;
}

int public_key_load(const char *path, struct public_key **out, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = read_file(path, KEY_FILE_MAX, &buf, &len, e);
	if (r < 0)
		return r;
	return public_key_from_pem(path, buf, len, out, e);
}

void public_key_free(struct public_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

int key_read_passphrase_fd(int fd, char **out, ingot_error *e)
{
	char *buf = OPENSSL_secure_zalloc(KEY_PASSPHRASE_MAX + 2);
	size_t n = 0;

	if (!buf)
		return ingot_fail(e, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t got = read(fd, buf + n, KEY_PASSPHRASE_MAX + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = errno;
			key_passphrase_free(buf);
			return ingot_fail(e, -err, "passphrase fd %d: read failed: %s", fd, strerror(err));
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > KEY_PASSPHRASE_MAX) {
			key_passphrase_free(buf);
			return ingot_fail(e, -E2BIG, "passphrase fd %d: longer than %u bytes", fd,
					  KEY_PASSPHRASE_MAX);
		}
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		key_passphrase_free(buf);
		return ingot_fail(e, -EINVAL, "passphrase fd %d: contains a NUL byte", fd);
	}
	*out = buf;
	return 0;
}

void key_passphrase_free(char *p)
{
	if (p)
		OPENSSL_secure_clear_free(p, KEY_PASSPHRASE_MAX + 2);
}
