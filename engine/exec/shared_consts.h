/* shared_consts.h - one copy of a compiled model's large constants across
 * every model in the process that holds the same bytes.
 *
 * An OnnxModel compiles one model per input shape set, each from the same
 * weights, and every model packed its own copy: gpt2-past's 50 MB of
 * weights cost 55-70 MB per shape set, BERT-base's 440 MB would cost that
 * per sequence length.  After the passes, pg_compile hands each constant
 * of PG_SHARE_MIN_BYTES or more to this store: the first model's bytes
 * become the shared copy, a later model holding the same bytes (same
 * length, same content: compared in full) frees its own and reads that
 * one.  The constants of a compiled model are never written (the kernels
 * read them; a rebind's relayout replaces the pointer), so sharing them is
 * safe; the last model to let go frees them. */
#ifndef PG_EXEC_SHARED_CONSTS_H
#define PG_EXEC_SHARED_CONSTS_H

#include "../graph/ir.h"

#define PG_SHARE_MIN_BYTES (64 * 1024)

typedef struct pg_shared_const pg_shared_const;

/* Every owned constant of g of at least PG_SHARE_MIN_BYTES goes to the
 * store (its data then borrowed, see above), and so does every one lent
 * by the graph being compiled (PG_DATA_LENT, pg_ir_clone_lent: copied into
 * the store unless it has those bytes already; a smaller one gets a copy
 * of its own), so that no constant of g points into the source graph
 * afterwards.  With a weight cache (weight_cache.h), a constant with an
 * origin key takes the cache's copy when it has one (no comparison), and
 * otherwise gives the cache its entry.  References in *refs that no
 * constant of g reads any more are released first.  The references taken are appended to *refs (*n of them,
 * the array grown with pg_realloc, *cap its capacity).  On failure (out of
 * memory) the references already taken stay in *refs, to be released as
 * usual. */
pg_status pg_share_consts(pg_graph *g, pg_weight_cache *cache, pg_shared_const ***refs, int *n,
                          int *cap);
/* One more reference on e; its bytes and their length. */
void pg_share_retain(pg_shared_const *e);
const void *pg_share_data(const pg_shared_const *e);
size_t pg_share_nbytes(const pg_shared_const *e);
/* Lets go of n references (NULL-safe): the bytes are freed with the last. */
void pg_share_release(pg_shared_const **refs, int n);
/* A weight cache's reference on e (weight_cache.h), which is not another
 * model's sharing; let go of with pg_share_unpin. */
void pg_share_pin(pg_shared_const *e);
void pg_share_unpin(pg_shared_const *e);
/* Bytes of the n entries that another model's reference holds too (a
 * model's weights it does not pay for alone;
 * pg_model_stats.shared_weight_bytes). */
size_t pg_share_bytes_held_elsewhere(pg_shared_const *const *refs, int n);
/* Shared copies alive now and their bytes (tests). */
void pg_share_stats(size_t *count, size_t *bytes);

#endif
