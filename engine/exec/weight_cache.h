/* weight_cache.h - the constants one compile made, found again by the
 * next compile of the same weights (pg_weight_cache, peregrine.h).
 *
 * An OnnxModel compiles one model per input shape set from the same lent
 * weights.  Each compile packed every weight again, then pg_share_consts
 * compared the packing byte for byte with the first model's to share it:
 * of the 42 ms a new shape set of a 2-layer BERT-base-shaped model took
 * to compile (47 ms for a 4-layer GPT-2, paid at every step of a decode
 * loop over past key values), most went there.
 *
 * The cache finds constants by key, not by content.  A key stands for a
 * constant's bytes:
 *   - a constant lent to a compile that names the cache: its address,
 *     size and dtype (the caller promises those bytes stay there,
 *     unchanged, while the cache lives);
 *   - a constant a pass derives from keyed constants alone (the QKV and
 *     gate/up concatenations, an SGEMM packing): the sources' keys mixed
 *     with what the derivation reads besides (shapes, panel width);
 *   - any other constant: 0, none.  pg_ir_set_const_data clears the key of
 *     a constant whose bytes it replaces.
 * An entry holds a reference on a copy in the shared store
 * (shared_consts.h) for as long as the cache lives (a pin: a model alone
 * with the cache does not count it as shared). */
#ifndef PG_EXEC_WEIGHT_CACHE_H
#define PG_EXEC_WEIGHT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "peregrine.h"
#include "shared_consts.h"

/* h and v mixed into a new key (never 0). */
uint64_t pg_key_mix(uint64_t h, uint64_t v);
/* The key of bytes made from those of key `from` by the derivation `tag`
 * (a name as a number) with the parameters v[0..n): from, tag and each v
 * mixed in turn. */
uint64_t pg_key_derive(uint64_t from, uint64_t tag, const uint64_t *v, int n);

/* The bytes of the entry for key, nbytes long, or NULL.  Valid while the
 * cache lives. */
const void *pg_weight_cache_find(pg_weight_cache *c, uint64_t key, size_t nbytes);
/* The store entry for key (nbytes long) with a reference taken for the
 * caller, or NULL; counted as a hit or a miss (pg_share_consts asks once
 * for each keyed constant a compile keeps). */
pg_shared_const *pg_weight_cache_take(pg_weight_cache *c, uint64_t key, size_t nbytes);
/* Remembers e under key (the cache takes its own reference); 0, or -1 out
 * of memory (nothing remembered: a later compile packs again). */
int pg_weight_cache_put(pg_weight_cache *c, uint64_t key, pg_shared_const *e);

#endif
