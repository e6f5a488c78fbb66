/* threadpool.h - one process-wide pool of persistent worker threads.
 *
 * pg_parallel_for runs fn(ctx, t) for every t in [0, n_tasks) on up to
 * `threads` threads, the caller being one of them, and returns when all are
 * done.  Workers are created on first need and then kept; a call allocates
 * nothing.  Tasks are handed out one at a time from a shared counter, so
 * uneven tasks and a busy core balance themselves.  A call made while
 * another is running (from a task, or from a second application thread)
 * runs its tasks serially on the calling thread. */
#ifndef PG_CORE_THREADPOOL_H
#define PG_CORE_THREADPOOL_H

#include <stddef.h>

typedef void (*pg_task_fn)(void *ctx, size_t task);

/* threads <= 0 means the default (pg_get_num_threads()). */
void pg_parallel_for(size_t n_tasks, pg_task_fn fn, void *ctx, int threads);

/* The thread count a kernel should plan for: threads if > 0, else the
 * default, capped at PG_MAX_THREADS. */
int pg_threads_resolve(int threads);

/* threads (resolved) cut down so that each thread's share of `work` (a
 * product's flops, or whatever unit per_thread is in) is at least
 * per_thread: a smaller share does not pay for waking a thread.  The
 * matrix-product drivers share this rule, each with its own per_thread. */
int pg_threads_for_work(int threads, double work, double per_thread);

#define PG_MAX_THREADS 64

#endif
