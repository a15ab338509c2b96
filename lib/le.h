/* Little-endian integers in byte buffers (on-disk formats: the dm-verity
 * superblock, the block cache index). */
#ifndef INGOT_LE_H
#define INGOT_LE_H
#include <stdint.h>

static inline void le_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t le_get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}
#endif
