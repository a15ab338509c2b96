#include "lib/ecdsa.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>

#include "lib/xalloc.h"

int ecdsa_rs_to_der(const uint8_t *r, size_t rlen, const uint8_t *s, size_t slen, uint8_t **der,
		    size_t *der_len)
{
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *br = BN_bin2bn(r, (int)rlen, NULL), *bs = BN_bin2bn(s, (int)slen, NULL);
	unsigned char *p = NULL;
	int n;

	if (!es || !br || !bs || ECDSA_SIG_set0(es, br, bs) != 1) {
		BN_free(br);
		BN_free(bs);
		ECDSA_SIG_free(es);
		return -ENOMEM;
	}
	n = i2d_ECDSA_SIG(es, &p);
	ECDSA_SIG_free(es);
	if (n <= 0)
		return -ENOMEM;
	*der = xmalloc((size_t)n);
	memcpy(*der, p, (size_t)n);
	OPENSSL_free(p);
	*der_len = (size_t)n;
	return 0;
}
